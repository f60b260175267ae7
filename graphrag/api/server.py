"""``graphrag serve``: run the REST API with uvicorn, in one process or in several on one port."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors.multiprocess import Multiprocess, Process

from graphrag.config import Settings
from graphrag.observability import logs

log = logging.getLogger(__name__)
#: uvicorn's own log, where its supervisor reports workers.
_uvicorn_log = logging.getLogger("uvicorn.error")

#: The factory each worker process builds its app with (settings from the environment, like the parent's).
WORKER_FACTORY = "graphrag.api.app:app_factory"
#: prometheus-client's multiprocess mode: where every worker writes its metric values.
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"


def default_workers(settings: Settings) -> int:
    """``GRAPHRAG_API_WORKERS``, else one per CPU core this process may run on."""
    if settings.api_workers is not None:
        return settings.api_workers
    try:
        return max(1, len(os.sched_getaffinity(0)))  # honours cpusets (containers, taskset)
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def share_metrics(settings: Settings, port: int) -> Path:
    """Put the workers' metrics in multiprocess mode: ``PROMETHEUS_MULTIPROC_DIR`` (when not set
    already, ``$GRAPHRAG_HOME/metrics/<port>``), emptied of an earlier run's files, whose counts would
    otherwise be added to this run's. The workers inherit the variable; it must be set before they
    import prometheus-client, which reads it once."""
    given = os.environ.get(MULTIPROC_ENV)
    folder = Path(given) if given else settings.home_dir / "metrics" / str(port)
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.db"):
        stale.unlink(missing_ok=True)
    os.environ[MULTIPROC_ENV] = str(folder)
    return folder


async def prepare_stores(settings: Settings) -> None:
    """Start local services if configured, connect to both stores and bring their schemas up to
    date, then let go (no model is loaded): what every worker would otherwise do at once."""
    from graphrag.runtime import open_services

    async with open_services(settings):
        pass


def serve(settings: Settings, *, host: str, port: int, workers: int | None = None,
          factory: str = WORKER_FACTORY) -> None:
    """Serve the API until interrupted. Access-log lines come from our middleware (with request ids).

    With one worker the app runs in this process. With more, uvicorn's supervisor runs ``workers``
    processes that share the listening socket; each builds its app with ``factory`` (an import
    string), so each loads its own models and opens its own pools. The stores are prepared here
    first, once: an unreachable store is one clear error instead of N failing workers, and the
    workers find the schemas current (their own checks are locked and idempotent as well).

    Once the port is bound, the server records itself in the home (:mod:`graphrag.api.running`) so
    that ``graphrag search`` can use it; the record goes when the server stops.
    """
    count = workers if workers is not None else default_workers(settings)
    if count < 1:
        raise ValueError("workers must be at least 1")
    logging.getLogger("graphrag").setLevel(logging.INFO)
    logs.use_format(settings.log_format)
    options: dict[str, Any] = {"host": host, "port": port, "access_log": False, "log_level": "info",
                               "timeout_graceful_shutdown": 10}
    log_config = logs.uvicorn_config(settings.log_format)
    if log_config is not None:
        options["log_config"] = log_config
    if count == 1:
        from graphrag.api.app import create_app

        config = uvicorn.Config(create_app(settings), **options)
    else:
        asyncio.run(prepare_stores(settings))
        if settings.metrics:
            log.info("API workers share their metrics through %s", share_metrics(settings, port))
        log.info("starting %d API worker processes", count)
        # A worker loading its models on a busy machine can be slow to answer the supervisor's ping.
        config = uvicorn.Config(factory, factory=True, workers=count, timeout_worker_healthcheck=30, **options)
    _run(config, settings, port)


def _run(config: uvicorn.Config, settings: Settings, port: int) -> None:
    """What ``uvicorn.run`` does, with the home's server record written once the port is bound."""
    from graphrag.api import running
    from graphrag.api.auth import parse_keys

    keys = bool(parse_keys(settings.api_keys.get_secret_value() if settings.api_keys else None))
    record: running.ServerRecord | None = None

    def bound(sock: socket.socket | None) -> None:
        nonlocal record
        bound_port = sock.getsockname()[1] if sock is not None else port
        record = running.write_record(settings, config.host, bound_port, keys=keys)

    def stopping() -> None:
        nonlocal record
        if record is not None:
            running.remove_record(settings, record)
            record = None

    try:
        if config.workers > 1:
            own = worker_sockets(config.host, config.port, config.workers)
            if own is not None:
                bound(own[0])
                _SpreadMultiprocess(config, sockets=own).run()
            else:
                sock = config.bind_socket()
                bound(sock)
                Multiprocess(config, sockets=[sock]).run()
        else:
            server = _RecordingServer(config, on_started=bound, on_stopping=stopping)
            server.run()
            if not server.started:
                sys.exit(3)  # uvicorn's status for a server that could not start
    except KeyboardInterrupt:
        pass
    finally:
        stopping()


def worker_sockets(host: str, port: int, count: int) -> list[socket.socket] | None:
    """``count`` listening sockets on one address, one per worker, with ``SO_REUSEPORT``: Linux then
    spreads new connections over them. On one shared socket the worker that wakes first accepts every
    pending connection, so a client's handful of keep-alive connections (a connection pool opened at
    once) often all land on one worker while the others idle: with 8 connections and 2 workers, 8/0
    splits measured 4 ``auto`` QPS below 4/4 ones at 100k chunks. None where the option is missing or
    does not spread connections (not Linux); the caller then shares one socket. Port 0 binds the
    first socket to a free port and the others to the same one."""
    if sys.platform != "linux" or not hasattr(socket, "SO_REUSEPORT"):
        return None
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.socket(family=family)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sock.bind((host, port))
            port = sock.getsockname()[1]
            sock.set_inheritable(True)
    except OSError as exc:
        for sock in sockets:
            sock.close()
        _uvicorn_log.error("cannot listen on %s:%s: %s", host, port, exc)
        sys.exit(3)  # uvicorn's status for a server that could not start
    _uvicorn_log.info("Uvicorn running on http://%s:%d (Press CTRL+C to quit)", host, port)
    return sockets


class _SpreadMultiprocess(Multiprocess):
    """uvicorn's worker supervisor with a listening socket of each worker's own (:func:`worker_sockets`);
    a worker started again after a crash or a reload takes over its slot's socket."""

    def __init__(self, config: uvicorn.Config, sockets: list[socket.socket]) -> None:
        super().__init__(config, sockets=sockets)
        self._slots = sockets

    def _worker(self, slot: int) -> Process:
        process = Process(self.config, [self._slots[slot]])
        process.start()
        return process

    def init_processes(self) -> None:
        self.processes = [self._worker(slot) for slot in range(self.processes_num)]

    def keep_subprocess_alive(self) -> None:
        for slot, process in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            if process.is_alive(timeout=self.config.timeout_worker_healthcheck):
                continue
            process.kill()  # hung or gone
            process.join()
            if process.exitcode == STARTUP_FAILURE:  # the app cannot start: every restart would fail alike
                _uvicorn_log.error("Child process [%s] failed to start, stopping the parent process.", process.pid)
                self.should_exit.set()
                return
            _uvicorn_log.info("Child process [%s] died", process.pid)
            self.processes[slot] = self._worker(slot)

    def restart_all(self) -> None:
        """A reload (SIGHUP): each slot's replacement serves before the worker it replaces stops."""
        for slot, old in enumerate(self.processes):
            if self.should_exit.is_set():
                return
            new = self._worker(slot)
            if not new.wait_until_ready(self.config.timeout_worker_healthcheck, self.should_exit):
                new.kill()
                new.join()
                _uvicorn_log.error("New child process [%s] was not ready in time; keeping [%s].", new.pid, old.pid)
                return
            old.terminate()
            old.join()
            self.processes[slot] = new


class _RecordingServer(uvicorn.Server):
    """A uvicorn server that reports its listening socket once it has started (lifespan done), and
    when it begins to shut down (after which uvicorn re-raises a SIGTERM, so no ``finally`` runs)."""

    def __init__(self, config: uvicorn.Config, on_started: Callable[[socket.socket | None], None],
                 on_stopping: Callable[[], None]) -> None:
        super().__init__(config)
        self.on_started = on_started
        self.on_stopping = on_stopping

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started:
            listening = [s for server in self.servers for s in (server.sockets or ())]
            self.on_started(listening[0] if listening else None)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.on_stopping()  # first: new clients search locally rather than reach a closing server
        await super().shutdown(sockets)
