"""``open_services(settings)``: the one place that assembles pools, drivers, models and the router."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from neo4j.exceptions import ServiceUnavailable as Neo4jUnavailable
from neo4j.exceptions import SessionExpired

from graphrag.config import Settings
from graphrag.errors import ServiceUnavailable, one_line
from graphrag.ingest.backfill import run_backfills
from graphrag.ingest.embedders import Embedders
from graphrag.ingest.outbox import GraphOutbox
from graphrag.ingest.ingest_models import IngestModels
from graphrag.ingest.pipeline import Ingestor
from graphrag.search.expansion import QueryExpander
from graphrag.search.router import SearchRouter
from graphrag.services.follow import LocalAddresses
from graphrag.services.manager import endpoints
from graphrag.stores.neo4j import GraphWrites, Neo4jStore
from graphrag.stores.postgres import PostgresStore

log = logging.getLogger(__name__)


#: Modes that embed the query for the graph leg too: the default embedding model loads first, so
#: that the first search's legs do not wait for it within their timeouts.
GRAPH_MODES = frozenset({"auto", "graph"})


@dataclass
class Runtime:
    """Everything a request needs, opened once per process. Models load on first use, and only
    those a command needs: a keyword search, a deletion or a status report loads none."""

    settings: Settings
    postgres: PostgresStore
    neo4j: Neo4jStore
    _models: IngestModels | None = field(default=None, repr=False)
    _ingestor: Ingestor | None = field(default=None, repr=False)
    _router: SearchRouter | None = field(default=None, repr=False)
    _embedders: Embedders | None = field(default=None, repr=False)
    _graph_ready: bool = field(default=False, repr=False)

    def _load_models(self) -> IngestModels:
        """The models (blocking: called from worker threads; the lock makes it once per process)."""
        with self._load_lock:
            if self._models is None:
                models = IngestModels(self.settings)
                # One set of embedding models per process, whether search or ingestion loads first.
                models.embedders = self.embedders
                self._models = models
        return self._models

    @property
    def embedders(self) -> Embedders:
        """The embedding models by name (each loads on first use)."""
        with self._embedders_lock:
            if self._embedders is None:
                self._embedders = self._models.embedders if self._models is not None else Embedders(self.settings)
            return self._embedders

    async def models(self) -> IngestModels:
        """The embedding, tokenizer and spaCy models (loaded once, in a worker thread)."""
        if self._models is None:
            await asyncio.to_thread(self._load_models)
        assert self._models is not None
        return self._models

    async def router(self, mode: str = "auto") -> SearchRouter:
        """The search router, with what ``mode`` needs loaded: for ``auto`` and ``graph`` the configured
        embedding model (the graph leg waits for the query embedding within its timeout) and the graph
        statement planned in Neo4j. Other modes load nothing here: a keyword search never needs a model,
        and a vector search loads its collection's model before the vector leg's timer starts. Search
        needs no spaCy pipeline."""
        if self._router is None:
            router = SearchRouter(self.postgres, self.neo4j, self.embedders,
                                  reranker_path=self.settings.reranker_model,
                                  reranker_device=self.settings.embedding_device)
            router.expander = QueryExpander.from_settings(self.settings)
            router.leg_timeout_s = self.settings.leg_timeout_s
            self._router = router
        if mode in GRAPH_MODES and not self._graph_ready:
            await asyncio.gather(self._warm_default_embedder(), self._router.warm_graph())
            self._graph_ready = True
        return self._router

    async def _warm_default_embedder(self) -> None:
        try:
            # The query encoder too (an ONNX export, about a second), so the first search does not wait for it.
            await asyncio.to_thread(lambda: self.embedders.default.encode_queries(["warm up"]))
        except Exception as exc:  # noqa: BLE001 - a search that needs the model reports why it cannot load
            log.warning("embedding model not loaded in advance: %s", one_line(exc))

    def __post_init__(self) -> None:
        # Plain attributes, not fields: request handlers receive the Runtime as a typed dependency.
        self._load_lock = threading.Lock()
        self._embedders_lock = threading.Lock()
        self.outbox = GraphOutbox(self.postgres, GraphWrites(self.neo4j))

    def deleter(self) -> Ingestor:
        """An Ingestor without models: deletion needs none, so no model is loaded for it."""
        return Ingestor(self.settings, self.postgres, self.neo4j, None, self.outbox)

    async def ingestor(self) -> Ingestor:
        """The ingestion pipeline (models load on first use)."""
        if self._ingestor is None:
            self._ingestor = Ingestor(self.settings, self.postgres, self.neo4j, await self.models(), self.outbox)
        return self._ingestor


@asynccontextmanager
async def open_services(settings: Settings, *, start_local: bool = True,
                        models: IngestModels | None = None) -> AsyncIterator[Runtime]:
    """Connect to both stores (starting local services if configured), apply schemas, yield a Runtime.

    ``models`` lets a caller that already loaded them (tests, a second app in one process) share them.
    """
    where = await asyncio.to_thread(endpoints, settings, start=start_local)
    # Local servers may come back on other ports after a restart: the pool and the driver then ask
    # the home's state file where they are, so a long-running API follows them without a restart.
    local = LocalAddresses(settings)
    postgres = await PostgresStore.connect(
        where.postgres_dsn, min_size=settings.postgres_pool_min, max_size=settings.postgres_pool_max,
        dsn_source=local.postgres_dsn if settings.uses_local_postgres else None,
    )
    try:
        if not where.neo4j_uri:
            raise ServiceUnavailable("the local Neo4j is not running: start it with `graphrag services up`")
        # Neo4j being away is not fatal: PostgreSQL is the source of truth, search degrades to the
        # vector and keyword legs, and graph writes wait in the outbox.
        neo4j = await Neo4jStore.connect(
            where.neo4j_uri, where.neo4j_user, where.neo4j_password, settings.neo4j_database, allow_unavailable=True,
            resolver=local.neo4j_resolver if settings.uses_local_neo4j else None,
        )
    except BaseException:
        await postgres.close()
        raise
    try:
        await postgres.migrate()  # under its own advisory lock
        try:
            # Processes starting together (API workers, replicas) apply the graph schema and the
            # backfills one at a time: concurrent index creation in Neo4j can fail, and a backfill
            # run twice at once is wasted work.
            async with postgres.advisory_lock("graphrag.graph_schema"):
                await neo4j.apply_schema()
                await run_backfills(neo4j)
        except (Neo4jUnavailable, ServiceUnavailable, SessionExpired, OSError) as exc:
            log.warning("Neo4j schema not applied yet (%s); it will be when Neo4j is back", exc)
        yield Runtime(settings=settings, postgres=postgres, neo4j=neo4j, _models=models)
    finally:
        await neo4j.close()
        await postgres.close()
