"""Shared pieces of the local service lifecycles: ports, secrets, the state file, processes."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psutil

from graphrag.errors import ServiceStartError

log = logging.getLogger(__name__)

STATE_FILE = "services.json"
LOCK_FILE = "services.lock"


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when nothing listens on ``host:port`` and we may bind it."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # Servers bind with SO_REUSEADDR, so TIME_WAIT leftovers of a stopped server do not count as taken.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def choose_port(*preferred: int | None, avoid: set[int] | None = None, host: str = "127.0.0.1") -> int:
    """The first of ``preferred`` that is free, else a free port the OS hands out (never one in ``avoid``).

    Callers pass the port recorded for the home first and the configured one second, so a server
    comes back where its clients last found it whenever it can.
    """
    avoid = avoid or set()
    for port in preferred:
        if port and port not in avoid and port_is_free(port, host):
            return port
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((host, 0))
            port = int(sock.getsockname()[1])
        if port not in avoid:
            return port


def port_is_listening(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def listens_on(pid: int | None, port: int) -> bool:
    """True when process ``pid`` (or one of its children) holds the listening socket on ``port``.

    Two homes started at the same moment can both pick the same free port; only one server binds it,
    and the other must not mistake its neighbour's socket for its own.
    """
    if pid is None:
        return False
    try:
        procs = [psutil.Process(pid)]
        procs += procs[0].children(recursive=True)
        for proc in procs:
            for conn in proc.net_connections(kind="inet"):
                if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port:
                    return True
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return False
    except psutil.AccessDenied:
        return port_is_listening(port)  # cannot look inside: fall back to "someone listens"
    return False


def read_or_create_secret(path: Path) -> str:
    """A random secret kept in ``path`` with mode 0600, created on first use."""
    if path.exists():
        return path.read_text(encoding="utf-8").strip()
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    value = secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(value + "\n")
    return value


class StateFile:
    """``$GRAPHRAG_HOME/services.json``: the ports and pids every command reads."""

    def __init__(self, home: Path) -> None:
        self.path = home / STATE_FILE

    def read(self) -> dict[str, Any]:
        try:
            return json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            return {}

    def update(self, service: str, values: dict[str, Any] | None) -> None:
        """Replace one service's entry (``None`` removes it); written atomically.

        Read-modify-write: callers hold :func:`home_lock`, so two commands cannot lose each other's entry.
        """
        state = self.read()
        if values is None:
            state.pop(service, None)
        else:
            state[service] = values
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{STATE_FILE}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(state, indent=2, sort_keys=True), encoding="utf-8")
        tmp.replace(self.path)


@contextmanager
def home_lock(home: Path, timeout: float) -> Iterator[None]:
    """Hold ``$GRAPHRAG_HOME/services.lock`` (an exclusive ``flock``): one ``services up``/``down`` at a
    time per home, across threads and processes. The kernel drops the lock when its holder dies, so a
    killed command never leaves it stuck.
    """
    home.mkdir(parents=True, exist_ok=True)
    path = home / LOCK_FILE
    # os.open gives a non-inheritable descriptor, so the servers started under the lock never hold it.
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout
        waited = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not waited:
                    log.info("waiting for another `graphrag services` command on %s", home)
                    waited = True
                if time.monotonic() >= deadline:
                    holder = path.read_text(encoding="utf-8").strip() or "unknown"
                    raise ServiceStartError(
                        f"another `graphrag services` command (pid {holder}) has held {path} for over "
                        f"{timeout:.0f}s; wait for it or stop it"
                    ) from None
                time.sleep(0.2)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)  # named in the message of a command that waits too long
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def process_alive(pid: int | None, marker: str | None = None) -> bool:
    """True when ``pid`` runs and (if given) its command line mentions ``marker``.

    The marker guards against a stale pid file whose number was reused by another process.
    """
    if not pid:
        return False
    try:
        proc = psutil.Process(pid)
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return marker is None or any(marker in part for part in proc.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def wait_until(check: Callable[[], bool], timeout: float, interval: float = 0.5) -> bool:
    """Poll ``check`` until it is true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(interval)
    return check()


def tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log file, for error messages."""
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return ""
