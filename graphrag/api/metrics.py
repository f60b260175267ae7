"""Prometheus metrics of the REST API, served at ``/metrics`` (``GRAPHRAG_METRICS``, on by default).

- Requests per route: Litestar's ``PrometheusMiddleware`` (``graphrag_http_*``, the route template as
  ``path``, so ids in URLs do not multiply the series). Requests refused before routing (no or wrong
  key, rate limit) are ``graphrag_http_rejected_total``.
- Search legs: a latency histogram per ``leg`` and ``mode``, and counters of leg timeouts and errors,
  from the router's leg reports (:mod:`graphrag.observability.events`; the router knows nothing of
  Prometheus).
- Graph outbox backlog: gauges read from PostgreSQL when ``/metrics`` is scraped.
- Ingestion: documents by result and chunks written.

Several worker processes (``graphrag serve --workers N``) share one set of numbers through
prometheus-client's multiprocess mode: each process writes its values to files under
``PROMETHEUS_MULTIPROC_DIR`` (``graphrag serve`` sets it before the workers start) and a scrape,
whichever worker answers it, adds them up.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from pathlib import Path
from typing import Any

from litestar import Request
from litestar.plugins.prometheus import PrometheusConfig, PrometheusController
from prometheus_client import Counter, Gauge, Histogram, disable_created_metrics, multiprocess

from graphrag.errors import one_line
from graphrag.ingest.outbox import GraphOutbox
from graphrag.observability import events
from graphrag.search.config import LEGS
from graphrag.search.recipes import RECIPES

log = logging.getLogger(__name__)

METRICS_PATH = "/metrics"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
#: Search legs answer in milliseconds to a few seconds (the default leg timeout is 5 s).
LEG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: Seconds a scrape waits for the outbox counts before answering with the last ones.
OUTBOX_READ_TIMEOUT_S = 2.0


class Metrics:
    """The service's own metrics; one instance per process (:func:`process_metrics`)."""

    def __init__(self) -> None:
        self.leg_seconds = Histogram(
            "graphrag_search_leg_duration_seconds", "Time a search leg ran (ok, timed out or failed), in seconds",
            ["leg", "mode"], buckets=LEG_BUCKETS)
        self.leg_timeouts = Counter("graphrag_search_leg_timeouts_total", "Search legs that ran past their timeout",
                                    ["leg", "mode"])
        self.leg_errors = Counter("graphrag_search_leg_errors_total", "Search legs that failed", ["leg", "mode"])
        # One backlog for all processes (it is in PostgreSQL): the most recent reading wins.
        self.outbox_pending = Gauge("graphrag_outbox_pending_entries",
                                    "Graph writes waiting in the outbox for Neo4j (read at scrape time)",
                                    multiprocess_mode="mostrecent")
        self.outbox_failed = Gauge("graphrag_outbox_failed_entries",
                                   "Graph writes Neo4j refused, set aside (read at scrape time)",
                                   multiprocess_mode="mostrecent")
        self.ingest_documents = Counter("graphrag_ingest_documents_total",
                                        "Documents through ingestion, by result", ["result"])
        self.ingest_chunks = Counter("graphrag_ingest_chunks_total", "Chunks written by ingestion")
        self.rejected = Counter("graphrag_http_rejected_total",
                                "Requests refused before routing: 401 (no or wrong API key), 429 (rate limit)",
                                ["status_code"])
        # Every series that can occur exists from the start (at 0), so rates and alerts see it.
        for mode, recipe in RECIPES.items():
            for leg in recipe.legs:
                self.leg_seconds.labels(leg, mode)
                self.leg_timeouts.labels(leg, mode)
                self.leg_errors.labels(leg, mode)
        for result in ("ingested", "updated", "unchanged", "failed", "skipped"):
            self.ingest_documents.labels(result)
        for status in ("401", "429"):
            self.rejected.labels(status)

    def record_search(self, event: events.SearchEvent) -> None:
        """A search's legs: the latency of each that ran, and its timeout or error."""
        for leg, report in event.legs.items():
            status = report.status
            if leg not in LEGS or status not in ("ok", "timeout", "error"):
                continue  # skipped legs did not run
            self.leg_seconds.labels(leg, event.mode).observe(report.took_ms / 1000)
            if status == "timeout":
                self.leg_timeouts.labels(leg, event.mode).inc()
            elif status == "error":
                self.leg_errors.labels(leg, event.mode).inc()

    def record_ingest(self, event: events.IngestEvent) -> None:
        for result in ("ingested", "updated", "unchanged", "failed", "skipped"):
            count = getattr(event, result)
            if count:
                self.ingest_documents.labels(result).inc(count)
        if event.chunks:
            self.ingest_chunks.inc(event.chunks)

    def record_rejected(self, status: int) -> None:
        self.rejected.labels(str(status)).inc()

    async def refresh_outbox(self, outbox: GraphOutbox) -> None:
        """Read the outbox backlog into the gauges; when PostgreSQL does not answer in time, the
        gauges keep their last reading (the scrape still succeeds)."""
        try:
            summary = await asyncio.wait_for(outbox.summary(), OUTBOX_READ_TIMEOUT_S)
        except Exception as exc:  # noqa: BLE001 - a scrape must not fail because PostgreSQL is away
            log.info("outbox backlog not read for /metrics: %s", one_line(exc))
            return
        self.outbox_pending.set(summary["pending"])
        self.outbox_failed.set(summary["failed"])


_metrics: Metrics | None = None
_metrics_lock = threading.Lock()


def process_metrics() -> Metrics:
    """This process's metrics, made (and subscribed to search and ingest events) on first use:
    prometheus-client allows each name once per process, however many apps it serves."""
    global _metrics
    with _metrics_lock:
        if _metrics is None:
            # No `*_created` timestamp series beside every counter (multiprocess mode has none either).
            disable_created_metrics()
            _metrics = Metrics()
            events.on_search(_metrics.record_search)
            events.on_ingest(_metrics.record_ingest)
        return _metrics


def multiprocess_dir() -> Path | None:
    """The folder shared by worker processes, when metrics are in multiprocess mode."""
    value = os.environ.get(MULTIPROC_ENV)
    return Path(value) if value else None


def process_exited() -> None:
    """At a worker's shutdown: its live gauges (requests in progress) stop counting."""
    if multiprocess_dir() is not None:
        multiprocess.mark_process_dead(os.getpid())


def prometheus_config() -> PrometheusConfig:
    """Litestar's request metrics: ``graphrag_http_requests_total``, ``graphrag_http_request_duration_seconds``,
    ``graphrag_http_requests_in_progress``, ``graphrag_http_requests_error_total`` (5xx), labelled by
    method, route template, status code."""
    return PrometheusConfig(app_name="graphrag", prefix="graphrag_http", group_path=True)


async def _refresh(request: Request[Any, Any, Any]) -> None:
    runtime = getattr(request.app.state, "runtime", None)
    if runtime is not None:
        await process_metrics().refresh_outbox(runtime.outbox)


class MetricsController(PrometheusController):
    """``GET /metrics`` in the Prometheus text format (Litestar's controller: with
    ``PROMETHEUS_MULTIPROC_DIR`` set it adds up every worker's files). Not in the OpenAPI schema:
    it is for Prometheus, not API clients. API keys apply as to /ready and /stats."""

    path = METRICS_PATH
    include_in_schema = False
    # A plain function here: Litestar calls it with the request; mypy reads a class attribute as a method.
    before_request = _refresh  # type: ignore[assignment]
