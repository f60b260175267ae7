"""Observability of ``graphrag serve`` against the real stores: Prometheus metrics (requests per
route, search legs, outbox backlog, ingestion; summed across worker processes), OpenTelemetry spans
(in-memory exporter) and JSON log lines."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from graphrag.config import Settings
from graphrag.ingest.outbox import GraphOutbox
from graphrag.observability import logs, tracing
from graphrag.search.registry import LegRunner
from graphrag.search.router import SearchRouter
from tests import conftest
from tests.conftest import ApiServer
from tests.serving import serve_process
from tests.helpers import rest_search

REPO = Path(__file__).resolve().parents[2]
KEY = "obs-test-key-" + uuid.uuid4().hex
DOCS = {
    "curie.md": "# Marie Curie\n\nMarie Curie discovered polonium and radium in Paris with Pierre Curie.",
    "bohr.md": "# Niels Bohr\n\nNiels Bohr founded the Institute for Theoretical Physics in Copenhagen.",
}

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(url: str, **headers: str) -> tuple[Samples, dict[str, str]]:
    """Every sample of ``GET /metrics`` by name and labels, and each family's type."""
    r = httpx.get(f"{url}/metrics", headers=headers, timeout=60)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain")
    samples: Samples = {}
    types: dict[str, str] = {}
    for family in text_string_to_metric_families(r.text):
        types[family.name] = family.type
        for s in family.samples:
            samples[(s.name, frozenset(s.labels.items()))] = s.value
    return samples, types


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def requests(samples: Samples, method: str, path: str, status: int = 200) -> float:
    return value(samples, "graphrag_http_requests_total", app_name="graphrag", method=method, path=path,
                 status_code=str(status))


def leg_count(samples: Samples, leg: str, mode: str) -> float:
    return value(samples, "graphrag_search_leg_duration_seconds_count", leg=leg, mode=mode)


@pytest.fixture(scope="module")
def corpus(http_api: ApiServer) -> Iterator[dict[str, Any]]:
    """Two documents posted into a collection of this module's own, with the metrics around it."""
    collection = f"obs_{uuid.uuid4().hex[:10]}"
    before, _ = scrape(http_api.url)
    posted = []
    with httpx.Client(base_url=http_api.url, timeout=120) as client:
        for source, text in DOCS.items():
            r = client.post("/documents", json={"text": text, "source": source, "collection": collection})
            assert r.status_code == 201, r.text
            posted.append(r.json())
        again = client.post("/documents", json={"text": DOCS["curie.md"], "source": "curie.md",
                                                "collection": collection})
        assert again.status_code == 200 and again.json()["status"] == "unchanged"
    after, _ = scrape(http_api.url)
    yield {"collection": collection, "posted": posted, "before": before, "after": after}


def test_ingestion_is_counted(corpus: dict[str, Any]) -> None:
    before, after = corpus["before"], corpus["after"]

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("graphrag_ingest_documents_total", result="ingested") == 2
    assert delta("graphrag_ingest_documents_total", result="unchanged") == 1
    assert delta("graphrag_ingest_documents_total", result="failed") == 0
    assert delta("graphrag_ingest_chunks_total") == sum(p["chunks"] for p in corpus["posted"]) > 0
    assert requests(after, "POST", "/documents", 201) - requests(before, "POST", "/documents", 201) == 2


def test_requests_per_route_and_leg_latency_per_leg_and_mode(http_api: ApiServer, corpus: dict[str, Any]) -> None:
    body = {"query": "Who discovered polonium?", "limit": 3, "collections": [corpus["collection"]]}
    before, _ = scrape(http_api.url)
    with httpx.Client(base_url=http_api.url, timeout=120) as client:
        for path, times, extra in (("/search/keyword", 3, {}), ("/search/hybrid", 2, {}),
                                   ("/search", 1, {"graph_leg": "always"})):
            for _ in range(times):
                r = client.post(path, json={**body, **extra})
                assert r.status_code == 200, r.text
        for posted in corpus["posted"]:
            assert client.get(f"/documents/{posted['id']}").status_code == 200
    after, types = scrape(http_api.url)

    def delta(fn: Any, *args: Any) -> float:
        return fn(after, *args) - fn(before, *args)

    # Requests per route, labelled with the route template (the ids in the URLs make no series of their own).
    assert delta(requests, "POST", "/search/keyword") == 3
    assert delta(requests, "POST", "/search/hybrid") == 2
    assert delta(requests, "POST", "/search") == 1
    assert delta(requests, "GET", "/documents/{document_id}") == 2
    assert not any(dict(labels).get("path", "").endswith(corpus["posted"][0]["id"]) for _, labels in after)
    assert types["graphrag_http_request_duration_seconds"] == "histogram"
    # One latency observation per leg that ran, labelled by leg and mode.
    assert types["graphrag_search_leg_duration_seconds"] == "histogram"
    assert delta(leg_count, "keyword", "keyword") == 3
    assert delta(leg_count, "vector", "hybrid") == 2 and delta(leg_count, "keyword", "hybrid") == 2
    assert delta(leg_count, "graph", "hybrid") == 0
    for leg in ("vector", "keyword", "graph"):
        assert delta(leg_count, leg, "auto") == 1
    total = value(after, "graphrag_search_leg_duration_seconds_bucket", leg="keyword", mode="keyword", le="+Inf")
    assert total == leg_count(after, "keyword", "keyword")
    assert value(after, "graphrag_search_leg_duration_seconds_sum", leg="keyword", mode="keyword") > value(
        before, "graphrag_search_leg_duration_seconds_sum", leg="keyword", mode="keyword")


async def test_leg_timeouts_and_errors_are_counted(http_api: ApiServer, runtime: Any, models: Any,
                                                   corpus: dict[str, Any]) -> None:
    """A real router whose legs are made to fail (the test hook the fault tests use): its reports reach
    the process's metrics, which the API serves."""
    async def slow(*_: Any) -> Any:
        await asyncio.sleep(5)

    async def broken(*_: Any) -> Any:
        raise RuntimeError("vector store exploded")

    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    router.legs = {**router.legs, "keyword": LegRunner(slow), "vector": LegRunner(broken)}
    before, _ = scrape(http_api.url)
    response = await rest_search(router, "polonium", mode="hybrid", limit=3, collections=[corpus["collection"]],
                                   leg_timeout_s=0.2)
    assert response["legs"]["keyword"]["status"] == "timeout"
    assert response["legs"]["vector"]["status"] == "error"
    after, _ = scrape(http_api.url)

    def delta(name: str, leg: str) -> float:
        return value(after, name, leg=leg, mode="hybrid") - value(before, name, leg=leg, mode="hybrid")

    assert delta("graphrag_search_leg_timeouts_total", "keyword") == 1
    assert delta("graphrag_search_leg_timeouts_total", "vector") == 0
    assert delta("graphrag_search_leg_errors_total", "vector") == 1
    assert delta("graphrag_search_leg_errors_total", "keyword") == 0
    # Failed and timed-out legs still took time: they are in the latency histogram too.
    assert delta("graphrag_search_leg_duration_seconds_count", "keyword") == 1
    assert delta("graphrag_search_leg_duration_seconds_count", "vector") == 1


async def test_outbox_backlog_gauge_reads_the_outbox(http_api: ApiServer, runtime: Any) -> None:
    outbox: GraphOutbox = runtime.outbox
    # A pending entry not due for an hour: the API's drainer leaves it (and what queues behind it) alone.
    async with runtime.postgres.unit_of_work() as uow:
        entry = await GraphOutbox.enqueue_remove(uow, f"obs_{uuid.uuid4().hex[:8]}", [str(uuid.uuid4())])
        await uow.outbox.retry_later(entry, "held back by a test", 3600.0)
    try:
        first = await outbox.summary()
        samples, types = scrape(http_api.url)
        last = await outbox.summary()
    finally:
        await runtime.postgres.q.outbox.done(entry)
    assert types["graphrag_outbox_pending_entries"] == "gauge"
    pending = value(samples, "graphrag_outbox_pending_entries")
    assert pending >= 1 and pending in (first["pending"], last["pending"])
    assert value(samples, "graphrag_outbox_failed_entries") in (first["failed"], last["failed"])
    cleared, _ = scrape(http_api.url)
    assert value(cleared, "graphrag_outbox_pending_entries") == (await outbox.summary())["pending"] < pending


# --- tracing and keys ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def spans() -> Iterator[Any]:
    """An in-memory exporter on the process's tracer provider (an SDK one, installed when none is)."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):
        trace.set_tracer_provider(TracerProvider())
    provider = trace.get_tracer_provider()
    if not hasattr(provider, "add_span_processor"):
        pytest.skip("another tracer provider is installed in this process")
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))  # type: ignore[attr-defined]
    yield exporter
    tracing.disable()
    exporter.shutdown()


@pytest.fixture(scope="module")
def traced_api(settings: Settings, services: Any, models: Any, spans: Any) -> Iterator[ApiServer]:
    """A second API in this process: tracing on, and an API key required."""
    traced = Settings(home=conftest.test_home(), tracing=True, api_keys=KEY)
    with ApiServer(traced, models) as server:
        yield server


def test_metrics_need_a_key_when_keys_are_set(traced_api: ApiServer) -> None:
    auth = {"Authorization": f"Bearer {KEY}"}
    before, _ = scrape(traced_api.url, **auth)
    r = httpx.get(f"{traced_api.url}/metrics", timeout=30)
    assert r.status_code == 401 and r.headers["content-type"].startswith("application/problem+json")
    after, _ = scrape(traced_api.url, **auth)
    rejected = "graphrag_http_rejected_total"
    assert value(after, rejected, status_code="401") - value(before, rejected, status_code="401") == 1
    assert httpx.get(f"{traced_api.url}/health", timeout=30).status_code == 200  # still open


def test_a_search_is_traced_from_request_to_store_calls(traced_api: ApiServer, corpus: dict[str, Any],
                                                       spans: Any) -> None:
    spans.clear()
    r = httpx.post(f"{traced_api.url}/search", timeout=120, headers={"X-API-Key": KEY, "X-Request-ID": "obs-trace-1"},
                   json={"query": "Who discovered polonium?", "limit": 3, "collections": [corpus["collection"]],
                         "graph_leg": "always"})
    assert r.status_code == 200, r.text
    assert {r.json()["legs"][leg]["status"] for leg in ("vector", "keyword", "graph")} <= {"ok", "timeout"}
    deadline = time.monotonic() + 30  # the request span ends just after the response is sent
    while not any(s.name == "POST /search" for s in spans.get_finished_spans()) and time.monotonic() < deadline:
        time.sleep(0.05)
    finished = spans.get_finished_spans()
    requests_ = [s for s in finished if s.name == "POST /search"]
    assert len(requests_) == 1, [s.name for s in finished]
    request = requests_[0]
    assert request.attributes["http.route"] == "/search"
    assert request.attributes["graphrag.request_id"] == "obs-trace-1"
    in_trace = [s for s in finished if s.context.trace_id == request.context.trace_id]
    by_id = {s.context.span_id: s for s in in_trace}

    def ancestors(span: Any) -> list[str]:
        names = []
        while span.parent is not None and span.parent.span_id in by_id:
            span = by_id[span.parent.span_id]
            names.append(span.name)
        return names

    legs = {s.attributes["graphrag.leg"]: s for s in in_trace if s.name.startswith("search.leg.")}
    assert set(legs) == {"vector", "keyword", "graph"}
    for leg, span in legs.items():
        assert span.attributes["graphrag.mode"] == "auto"
        assert span.attributes["graphrag.leg.status"] == r.json()["legs"][leg]["status"]
        assert "POST /search" in ancestors(span)
    # Store calls nest under the leg that made them, named after the statement.
    stores = [s for s in in_trace if s.name.startswith(("postgresql ", "neo4j "))]
    assert any(s.name == "postgresql search.vector_leg" and "search.leg.vector" in ancestors(s) for s in stores)
    assert any(s.name == "postgresql search.keyword_leg" and "search.leg.keyword" in ancestors(s) for s in stores)
    if r.json()["legs"]["graph"]["status"] == "ok":  # a leg that timed out may not have reached Neo4j yet
        assert any(s.name == "neo4j graph_leg.graph_leg" and "search.leg.graph" in ancestors(s) for s in stores)
    assert all(s.attributes["db.system.name"] in ("postgresql", "neo4j") for s in stores)


def test_tracing_off_records_nothing() -> None:
    """Off by default: no span is made and OpenTelemetry's SDK is not needed."""
    assert not Settings(home=conftest.test_home()).tracing
    code = ("import sys; from graphrag.config import Settings; from graphrag.api.app import create_app; "
            "create_app(Settings(home=sys.argv[1])); "
            "from graphrag.observability import tracing; assert not tracing.enabled(); "
            "assert 'opentelemetry.sdk' not in sys.modules, 'SDK imported'")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", code, str(conftest.test_home())], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]


# --- log format -------------------------------------------------------------------------------------
def test_json_log_lines_carry_the_request_id() -> None:
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logs.JsonFormatter())
    handler.addFilter(logs.ContextFilter())
    logger = logging.getLogger("graphrag.test_observability")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        token = logs.request_id.set("req-42")
        try:
            logger.warning("leg %s failed", "graph")
            try:
                raise ValueError("boom")
            except ValueError:
                logger.exception("with a traceback")
        finally:
            logs.request_id.reset(token)
        logger.warning('outside a request: "quoted"\nand a second line')
    finally:
        logger.removeHandler(handler)
    lines = out.getvalue().splitlines()
    assert len(lines) == 3
    first, second, third = (json.loads(line) for line in lines)
    assert first["message"] == "leg graph failed" and first["level"] == "WARNING"
    assert first["logger"] == "graphrag.test_observability" and first["request_id"] == "req-42"
    assert first["time"].endswith("Z") and first["process"] == os.getpid()
    assert "ValueError: boom" in second["exception"] and second["request_id"] == "req-42"
    assert "request_id" not in third and third["message"] == 'outside a request: "quoted"\nand a second line'


@pytest.fixture
def json_workers(settings: Settings, services: Any,
                 tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes], Path]]:
    """``graphrag serve --workers 2`` with JSON logs, on a free port; stopped (workers too) after."""
    env = {"GRAPHRAG_LOG_FORMAT": "json", "PROMETHEUS_MULTIPROC_DIR": ""}
    with serve_process(settings, tmp_path / "serve.log", workers=2, env=env) as served:
        yield served.url, served.proc, served.log
    assert not served.left_running, f"workers left running: {served.left_running}"


def _served_by(log: Path, prefix: str) -> dict[str, int]:
    """Request id -> process id of the worker that wrote its access line (JSON lines)."""
    found = {}
    for line in log.read_text(errors="replace").splitlines():
        entry = json.loads(line) if line.startswith("{") else {}
        if entry.get("logger") == "graphrag.api.access" and str(entry.get("request_id", "")).startswith(prefix):
            found[entry["request_id"]] = entry["process"]
    return found


def test_workers_share_metrics_and_log_json(json_workers: tuple[str, subprocess.Popen[bytes], Path],
                                            settings: Settings) -> None:
    url, proc, log = json_workers
    counter = iter(range(1_000_000))

    def search(_: int) -> None:
        r = httpx.post(f"{url}/search/keyword", json={"query": "polonium", "limit": 3}, timeout=120,
                       headers={"X-Request-ID": f"obs-search-{next(counter)}"})
        assert r.status_code == 200, r.text

    with ThreadPoolExecutor(8) as pool:
        for _ in range(10):  # the kernel hands connections to whichever worker accepts first
            list(pool.map(search, range(16)))
            searches = _served_by(log, "obs-search-")
            if len(set(searches.values())) >= 2:
                break
    sent = next(counter)
    # A worker writes a request's access line after the response has gone: the last lines may still be
    # on their way to the file when the last response arrives.
    deadline = time.monotonic() + 30
    while len(searches) < sent and time.monotonic() < deadline:
        time.sleep(0.1)
        searches = _served_by(log, "obs-search-")
    assert len(searches) == sent and len(set(searches.values())) == 2, "one worker answered every search"

    def metric(n: int) -> tuple[str, float]:
        request_id = f"obs-scrape-{n}"
        samples, _ = scrape(url, **{"X-Request-ID": request_id})
        return request_id, requests(samples, "POST", "/search/keyword")

    seen: dict[str, float] = {}
    with ThreadPoolExecutor(4) as pool:
        for round_ in range(20):
            seen.update(pool.map(metric, range(round_ * 8, round_ * 8 + 8)))
            if len(set(_served_by(log, "obs-scrape-").values())) >= 2:
                break
    scrapes = _served_by(log, "obs-scrape-")
    assert len(set(scrapes.values())) == 2, "one worker answered every scrape"
    # Whichever worker answered a scrape, it counted the searches of both.
    assert set(seen.values()) == {float(sent)}, seen
    assert list((settings.home_dir / "metrics").glob("*/counter_*.db")), "no multiprocess metric files"
    # Every line the server wrote (supervisor, workers, uvicorn) is one JSON object.
    lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    assert lines
    for line in lines:
        entry = json.loads(line)
        assert {"time", "level", "logger", "message"} <= set(entry), line
