"""``graphrag serve``: run the REST API with uvicorn, in one process or in several on one port."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

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
    """
    import uvicorn

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

        uvicorn.run(create_app(settings), **options)
        return
    asyncio.run(prepare_stores(settings))
    if settings.metrics:
        log.info("API workers share their metrics through %s", share_metrics(settings, port))
    log.info("starting %d API worker processes", count)
    # A worker loading its models on a busy machine can be slow to answer the supervisor's ping.
    uvicorn.run(factory, factory=True, workers=count, timeout_worker_healthcheck=30, **options)
