"""Neo4j access: one AsyncDriver, the graph schema, health, and typed methods."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from neo4j import READ_ACCESS, AsyncDriver, AsyncGraphDatabase, GraphDatabase
from neo4j.exceptions import AuthError, ClientError, Neo4jError, SessionExpired
from neo4j.exceptions import ServiceUnavailable as DriverUnavailable

from graphrag.errors import ConfigurationError, ServiceUnavailable
from graphrag.observability import tracing
from graphrag.stores import queries
from graphrag.stores.repo.graph import refresh_parameters
from graphrag.models import entity_vector_slot

if TYPE_CHECKING:
    from graphrag.stores.repo.graph import GraphQueries

log = logging.getLogger(__name__)

_CONNECT_ERRORS = (DriverUnavailable, OSError)


@dataclass(frozen=True)
class Neo4jHealth:
    ok: bool
    version: str = ""
    edition: str = ""
    error: str = ""


def _auth_error(uri: str, user: str) -> ConfigurationError:
    return ConfigurationError(
        f"Neo4j at {uri} rejected user {user!r}: check GRAPHRAG_NEO4J_PASSWORD (and GRAPHRAG_NEO4J_USER)"
    )


class Neo4jStore:
    """Owns the AsyncDriver. Create with :meth:`connect`, close with :meth:`close`."""

    def __init__(self, driver: AsyncDriver, database: str) -> None:
        self.driver = driver
        self.database = database
        self.schema_applied = False
        # A small circuit breaker: after a connection failure, reads fail at once for a moment
        # instead of each waiting on the driver's retries (search stays fast while Neo4j is away).
        self._down_until = 0.0

    @classmethod
    async def connect(cls, uri: str, user: str, password: str, database: str = "neo4j", *,
                      allow_unavailable: bool = False,
                      resolver: Callable[[Any], Awaitable[list[tuple[str, int]]]] | None = None) -> Neo4jStore:
        """Open the driver and verify the credentials, so a wrong password fails here, clearly.

        With ``allow_unavailable`` a server that cannot be reached is not an error: the store is
        returned anyway (the driver reconnects by itself) and the graph catches up when it is back.
        ``resolver`` maps the URI's address to the one to dial, asked at each new connection: with it
        the driver follows a local server that came back on another port.
        """
        extra: dict[str, Any] = {"resolver": resolver} if resolver is not None else {}
        # Notifications (e.g. "relationship type not in the database yet" on a fresh graph) are noise here.
        # Few driver-level retries: the outbox retries graph writes with its own backoff, and a search
        # leg must fail fast rather than wait out the driver's default 30 s of retrying.
        driver = AsyncGraphDatabase.driver(
            uri, auth=(user, password), connection_timeout=5, max_transaction_retry_time=2.0,
            notifications_min_severity="OFF", **extra,
        )
        try:
            await driver.verify_connectivity()
            # verify_authentication answers False (it does not raise) when the server rejects the login.
            if not await driver.verify_authentication():
                raise AuthError("rejected")
        except AuthError:
            await driver.close()
            raise _auth_error(uri, user) from None
        except ClientError as exc:
            await driver.close()
            if exc.code and ".Security." in exc.code:  # e.g. AuthenticationRateLimit after wrong passwords
                raise _auth_error(uri, user) from None
            raise
        except _CONNECT_ERRORS as exc:
            if allow_unavailable:
                log.warning("Neo4j at %s is unavailable (%s); starting without the graph", uri, exc)
                return cls(driver, database)
            await driver.close()
            raise ServiceUnavailable(f"cannot connect to Neo4j at {uri}: {exc}") from None
        return cls(driver, database)

    async def close(self) -> None:
        await self.driver.close()

    @cached_property
    def q(self) -> GraphQueries:
        """The typed Cypher statements (each call one transaction)."""
        from graphrag.stores.repo.graph import GraphQueries

        return GraphQueries(self)

    async def execute(self, text: str, summary: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Run statement text (from the ``cypher/`` files) in a managed transaction (the driver retries
        transient failures), with the circuit breaker and a span."""
        with self._guarded(summary):
            result = await self.driver.execute_query(text, parameters_=params, database_=self.database)
            return [record.data() for record in result.records]

    async def read(self, text: str, summary: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """Run a read-only statement as one auto-commit transaction in read mode: RUN and PULL in one
        round trip, where ``execute`` (a managed transaction) adds BEGIN and COMMIT. For the search
        path, whose legs fail fast and report it rather than retry."""
        with self._guarded(summary):
            async with self.driver.session(database=self.database, default_access_mode=READ_ACCESS) as session:
                result = await session.run(text, params)
                # items(), not data(): the search statements return plain values, and data() copies every
                # nested list element by element (a tenth of an API worker's CPU under search load).
                return [dict(record.items()) async for record in result]

    @contextmanager
    def _guarded(self, summary: str) -> Iterator[None]:
        """The circuit breaker and span around one statement: a failed connection marks Neo4j down for
        2 s, during which statements fail at once, and surfaces as :class:`ServiceUnavailable`."""
        if time.monotonic() < self._down_until:
            raise ServiceUnavailable("Neo4j is unavailable (connection failed moments ago)")
        with self.traced(summary):
            try:
                yield
            except (*_CONNECT_ERRORS, SessionExpired) as exc:
                self._down_until = time.monotonic() + 2.0
                raise ServiceUnavailable(f"Neo4j is unavailable: {exc}") from None

    def traced(self, summary: str) -> Any:
        """A span for a named statement or write (when tracing is on): its name, never its values."""
        return tracing.span(f"neo4j {summary}", {"db.system.name": "neo4j", "db.namespace": self.database,
                                                 "db.query.summary": summary})

    async def apply_schema(self, wait_seconds: int = 120) -> None:
        """Create constraints and indexes (idempotent) and wait until they are online."""
        for statement in queries.cypher_script("schema"):
            await self.driver.execute_query(statement, database_=self.database)
        await self.q.admin.await_indexes(wait_seconds)
        self.schema_applied = True

    async def ensure_schema(self) -> None:
        """Apply the schema if it was not yet (Neo4j was away at start)."""
        if not self.schema_applied:
            await self.apply_schema()

    async def ensure_entity_vector_index(self, model: str, dim: int) -> str:
        """The vector index of ``model``'s entity embeddings, created (and awaited) when missing."""
        prop, index = entity_vector_slot(model)
        existing = {r["name"]: r for r in await self.q.entities.vector_indexes()}
        if index in existing:
            have = existing[index]["dim"]
            if have is not None and int(have) != dim:
                raise ConfigurationError(f"Neo4j index {index} holds {have}-dim vectors, not {dim} for {model}")
            return index
        if prop == "embedding" and dim != 384:
            raise ConfigurationError(f"{model} must give 384-dim vectors (the schema's entity_embedding index)")
        if not re.fullmatch(r"[a-z0-9_]+", prop):
            raise ValueError(f"not a property name: {prop!r}")
        statement = queries.cypher("entities", "create_entity_vector_index").replace("/*PROPERTY*/", prop)
        options = {"indexConfig": {"vector.dimensions": dim, "vector.similarity_function": "cosine"}}
        await self.driver.execute_query(statement, parameters_={"index": index, "options": options},
                                        database_=self.database)
        await self.q.admin.await_indexes(120)
        return index

    async def missing_schema(self) -> list[str]:
        """Names of schema indexes/constraints from ``cypher/schema.cypher`` that are absent or not online."""
        import re

        wanted = [m.group(1) for st in queries.cypher_script("schema")
                  if (m := re.match(r"CREATE (?:CONSTRAINT|(?:VECTOR |FULLTEXT )?INDEX) (\w+) IF NOT EXISTS", st))]
        online = {r["name"] for r in await self.q.admin.indexes() if r["state"] == "ONLINE"}
        return [name for name in wanted if name not in online]

    async def health(self) -> Neo4jHealth:
        """Version and edition, or the reason the server cannot be reached."""
        try:
            rows = await self.q.admin.components()
        except (Neo4jError, ServiceUnavailable, SessionExpired, *_CONNECT_ERRORS) as exc:
            return Neo4jHealth(ok=False, error=str(exc))
        kernel = next((r for r in rows if r["name"] == "Neo4j Kernel"), rows[0] if rows else {})
        return Neo4jHealth(ok=True, version=str(kernel.get("version", "")), edition=str(kernel.get("edition", "")))


def set_initial_password(uri: str, user: str, old: str, new: str) -> None:
    """Replace a fresh server's default password (the server forces this before any other query)."""
    with GraphDatabase.driver(uri, auth=(user, old), connection_timeout=10) as driver:
        with driver.session(database="system") as session:
            session.run(queries.cypher("admin", "change_initial_password"), old=old, new=new).consume()


def check_login(uri: str, user: str, password: str) -> bool:
    """True when the credentials work, False when the server rejects them."""
    with GraphDatabase.driver(uri, auth=(user, password), connection_timeout=10) as driver:
        try:
            return bool(driver.verify_authentication())
        except AuthError:
            return False
        except ClientError as exc:
            if exc.code and "AuthenticationRateLimit" in exc.code:
                raise ConfigurationError(
                    f"Neo4j at {uri} is refusing logins for a few seconds after repeated wrong passwords"
                ) from None
            raise


class GraphWrites:
    """Typed graph writes of ingestion; each method is one transaction."""

    def __init__(self, store: Neo4jStore) -> None:
        self.store = store

    async def replace_documents(self, remove_doc_ids: list[str], docs: list[dict[str, Any]],
                                next_pairs: list[list[str]], entities: list[dict[str, Any]],
                                mentions: list[dict[str, Any]], relations: list[dict[str, Any]]) -> None:
        """Take back what ``remove_doc_ids`` contributed, then write ``docs`` with their graph, atomically."""

        async def work(tx: Any) -> None:
            await _remove(tx, remove_doc_ids)
            q = queries.cypher
            await (await tx.run(q("ingest", "write_documents"), docs=docs)).consume()
            if next_pairs:
                await (await tx.run(q("ingest", "link_chunks"), pairs=next_pairs)).consume()
            if entities:
                await (await tx.run(q("ingest", "merge_entities"), entities=entities)).consume()
            if mentions:
                await (await tx.run(q("ingest", "create_mentions"), mentions=mentions)).consume()
            if relations:
                await (await tx.run(q("ingest", "merge_relations"), relations=relations)).consume()
            if entities:
                await _refresh_entities(tx, [e["id"] for e in entities])

        with self.store.traced("ingest.replace_documents"):
            async with self.store.driver.session(database=self.store.database) as session:
                await session.execute_write(work)

    async def remove_documents(self, doc_ids: list[str]) -> None:
        """Remove documents with their chunks, mentions, relation evidence and orphaned entities."""
        with self.store.traced("ingest.remove_documents"):
            async with self.store.driver.session(database=self.store.database) as session:
                await session.execute_write(_remove, doc_ids)

    async def drop_collection(self, collection: str, *, batch: int = 5_000) -> dict[str, int]:
        """Delete the collection's communities, chunks, documents and entities (with their relations),
        in transactions of ``batch`` nodes, so a large collection never needs one huge transaction;
        a drop cut short is finished by running it again. The nodes deleted, by label."""
        deleted: dict[str, int] = {}
        with self.store.traced("ingest.drop_collection"):
            async with self.store.driver.session(database=self.store.database) as session:
                for label in ("communities", "chunks", "documents", "entities"):
                    text = queries.cypher("ingest", f"drop_collection_{label}")
                    deleted[label] = 0
                    while True:
                        n = await session.execute_write(_count_deleted, text, collection, batch)
                        deleted[label] += n
                        if n < batch:
                            break
        return deleted

    async def collection_counts(self) -> dict[str, dict[str, int]]:
        rows = await self.store.q.ingest.collection_counts()
        return {
            r["collection"]: {"graph_documents": r["documents"], "graph_chunks": r["chunks"],
                              "entities": r["entities"], "relations": r["relations"]}
            for r in rows
        }

    async def document_ids(self, collection: str) -> set[str]:
        return await self.store.q.ingest.document_ids(collection)


async def _count_deleted(tx: Any, text: str, collection: str, batch: int) -> int:
    record = await (await tx.run(text, collection=collection, batch=batch)).single()
    return int(record["deleted"]) if record else 0


async def _remove(tx: Any, doc_ids: list[str]) -> None:
    if not doc_ids:
        return
    result = await tx.run(queries.cypher("ingest", "document_chunk_ids"), doc_ids=doc_ids)
    record = await result.single()
    chunk_ids = list(record["ids"]) if record else []
    if chunk_ids:
        await (await tx.run(queries.cypher("ingest", "take_back_relations"), chunk_ids=chunk_ids)).consume()
    result = await tx.run(queries.cypher("ingest", "delete_document_nodes"), chunk_ids=chunk_ids, doc_ids=doc_ids)
    record = await result.single()
    await _refresh_entities(tx, list(record["kept"]) if record else [])


async def _refresh_entities(tx: Any, entity_ids: list[str]) -> None:
    """Mention counts, labels, chunk and neighbour lists of ``entity_ids`` after a write touched them."""
    if entity_ids:
        await (await tx.run(queries.cypher("ingest", "refresh_entity_mentions"),
                            refresh_parameters(entity_ids))).consume()
