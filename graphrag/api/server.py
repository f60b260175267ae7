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

from graphrag.config import Settings
from graphrag.observability import logs

log = logging.getLogger(__name__)

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
    from uvicorn.supervisors import Multiprocess

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
