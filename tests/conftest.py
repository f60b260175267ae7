"""Fixtures: the real local PostgreSQL+pgvector and Neo4j servers, started by the project itself.

They run under ``$GRAPHRAG_TEST_HOME`` (default ``.graphrag-test`` in the repo), separate from a
developer's ``.graphrag``. If they are already up (``.ci/run`` starts them) they are reused and left
running; if this session started them, it stops them at the end. With ``GRAPHRAG_POSTGRES_DSN`` and
``GRAPHRAG_NEO4J_URI`` set, the tests use those external servers instead.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from graphrag.config import Settings
from graphrag.services import manager
from graphrag.services.manager import Endpoints

REPO = Path(__file__).resolve().parent.parent

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def test_home() -> Path:
    return Path(os.environ.get("GRAPHRAG_TEST_HOME", REPO / ".graphrag-test")).resolve()


@pytest.fixture(autouse=True)
def no_model_requests() -> Iterator[None]:
    """No test reaches a real language model (it would fail instead of spending money); a test that
    serves its own model on loopback allows requests for itself, and the next test starts refused."""
    from pydantic_ai import models

    models.ALLOW_MODEL_REQUESTS = False
    yield
    models.ALLOW_MODEL_REQUESTS = False


@pytest.fixture(scope="session")
def settings() -> Settings:
    return Settings(home=test_home())


@pytest.fixture(scope="session")
def services(settings: Settings) -> Iterator[Endpoints]:
    """Both servers up for the whole session; yields the connection details."""
    before = manager.status(settings)
    started_here = not (before["postgres"]["running"] and before["neo4j"]["running"])
    manager.up(settings)
    yield manager.endpoints(settings, start=False)
    if started_here and (settings.uses_local_postgres or settings.uses_local_neo4j):
        manager.down(settings)


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def runtime(settings: Settings, services: Endpoints, models: object) -> AsyncIterator[object]:
    """One Runtime (pools, driver, the session's models) for the whole session: tests keep apart by
    collection name. It lives on the session's event loop, which every test runs on (pyproject.toml)."""
    from graphrag.runtime import open_services

    async with open_services(settings, start_local=False, models=models) as rt:  # type: ignore[arg-type]
        before = set(await rt.postgres.collection_counts())
        yield rt
        if not os.environ.get("GRAPHRAG_TEST_KEEP"):
            await _drop_collections_made(rt, before)


async def _drop_collections_made(rt: object, before: set[str]) -> None:
    """Drop the collections this session's tests made (``GRAPHRAG_TEST_KEEP=1`` keeps them to look at),
    so the test home does not grow from run to run: with 2,700 left behind, its stores ingested SciFact
    about a tenth slower. Eight at a time, as a failure to drop one is no test's failure."""
    import asyncio
    import logging

    from graphrag.documents import delete_collection

    made = [c for c in await rt.postgres.collection_counts() if c not in before]  # type: ignore[attr-defined]
    limit = asyncio.Semaphore(8)

    async def drop(name: str) -> None:
        async with limit:
            try:
                await delete_collection(rt, name)  # type: ignore[arg-type]
            except Exception as exc:  # noqa: BLE001 - cleanup only
                logging.getLogger(__name__).warning("test collection %s not dropped: %s", name, exc)

    await asyncio.gather(*(drop(name) for name in made))


@pytest.fixture
def collection() -> str:
    """A collection name of its own for each test, so tests never see each other's data."""
    return f"test_{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def models(settings: Settings) -> object:
    """The real embedding, tokenizer and spaCy models, loaded once for the session."""
    from graphrag.ingest.ingest_models import IngestModels

    return IngestModels(settings)


@pytest.fixture
async def ingestor(runtime: object, models: object) -> object:
    from graphrag.ingest.pipeline import Ingestor

    return Ingestor(runtime.settings, runtime.postgres, runtime.neo4j, models)  # type: ignore[attr-defined]


@pytest.fixture
def router(runtime: object, models: object) -> object:
    """A search router on the session's stores and models (test_search's warms its graph leg too)."""
    from graphrag.search.router import SearchRouter

    return SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)  # type: ignore[attr-defined]


@pytest.fixture
def rt(runtime: object) -> object:
    """The session's Runtime (it carries the session's models, so no test loads its own copy)."""
    return runtime


class ApiServer:
    """The real REST API served by uvicorn on a free loopback port, in a thread with its own loop."""

    def __init__(self, settings: Settings, models: object) -> None:
        import socket

        import uvicorn

        from graphrag.api import create_app

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        app = create_app(settings, start_local=False, models=models)  # type: ignore[arg-type]
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))

    def __enter__(self) -> ApiServer:
        import threading
        import time

        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 120
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the API server did not start")
            time.sleep(0.1)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(30)


class _AppTransport(httpx.BaseTransport, httpx.AsyncBaseTransport):
    """Litestar's test transport as an httpx transport (sync and async), so plain httpx clients can share
    one test client's app and lifespan; closing a client leaves the app running."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(request)  # type: ignore[no-any-return]

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(request)  # type: ignore[no-any-return]

    def close(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


class InProcessApi:
    """The REST API app in this process, driven through Litestar's test client: the same app, middleware
    and lifespan as ``graphrag serve``, without a socket or uvicorn. ``client()`` gives an httpx client
    bound to it (as many as a test wants, sharing the one app); server errors come back as responses."""

    url = "http://testserver.local"

    def __init__(self, settings: Settings, models: object) -> None:
        from litestar.testing import TestClient
        from litestar.testing.transport import TestClientTransport

        from graphrag.api import create_app

        app = create_app(settings, start_local=False, models=models)  # type: ignore[arg-type]
        self._test_client = TestClient(app, base_url=self.url, raise_server_exceptions=False)
        self.transport = _AppTransport(TestClientTransport(self._test_client, raise_server_exceptions=False))

    def client(self, **options: Any) -> httpx.Client:
        """A synchronous httpx client for the app (``options`` as httpx.Client takes them)."""
        return httpx.Client(base_url=self.url, transport=self.transport, **options)

    def async_client(self, **options: Any) -> httpx.AsyncClient:
        """An async httpx client for the app; each request runs the app on the test client's own loop."""
        return httpx.AsyncClient(base_url=self.url, transport=self.transport, **options)

    def __enter__(self) -> InProcessApi:
        self._test_client.__enter__()  # runs the app's lifespan: opens its stores
        return self

    def __exit__(self, *exc: object) -> None:
        self._test_client.__exit__(None, None, None)


#: The settings of the shared API: no API keys, answers from the built-in test model, no ingestion jobs
#: (test_jobs.py decides which of its own servers runs them).
def _api_settings(settings: Settings) -> Settings:
    return settings.model_copy(update={"answer_model": "test", "jobs_concurrency": 0})


@pytest.fixture(scope="session")
def api(settings: Settings, services: Endpoints, models: object) -> Iterator[InProcessApi]:
    """The API on the test services, in process (Litestar's test client), for the whole session."""
    with InProcessApi(_api_settings(settings), models) as app:
        yield app


@pytest.fixture(scope="session")
def http_api(settings: Settings, services: Endpoints, models: object) -> Iterator[ApiServer]:
    """The same API over real HTTP (uvicorn on loopback), for what needs a socket: the Python client,
    the schema fuzzer, the metrics and traces of the served stack, the one real-HTTP API test."""
    with ApiServer(_api_settings(settings), models) as server:
        yield server
