"""PostgreSQL access: an asyncpg pool with the pgvector codec, migrations, and typed methods."""

from __future__ import annotations

import hashlib
import json
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import asyncpg
from pgvector.asyncpg import register_vector

from graphrag.errors import ConfigurationError, InvalidInput, NotFound, ServiceUnavailable
from graphrag.models import is_collection_name
from graphrag.stores import queries
from graphrag.stores.repo import PgQueries, UnitOfWork
from graphrag.stores.repo.base import reset_connection
from graphrag.stores.repo.documents import CHUNK_COLUMNS as _CHUNK_COLUMNS

log = logging.getLogger(__name__)

#: The collection records read so far in this request (see :meth:`PostgresStore.one_request`), by names.
_REQUEST_COLLECTIONS: ContextVar[dict[tuple[str, ...] | None, dict[str, CollectionRecord]] | None] = ContextVar(
    "graphrag_request_collections", default=None)


@dataclass(frozen=True)
class PostgresHealth:
    ok: bool
    version: str = ""
    pgvector: str = ""
    error: str = ""


def redact_dsn(dsn: str) -> str:
    """The DSN with any password replaced, safe for logs and status output."""
    if "://" not in dsn or "@" not in dsn:
        return dsn
    scheme, rest = dsn.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}@{host}" if ":" in creds else dsn


#: Exceptions that mean "PostgreSQL cannot be reached" rather than "this statement failed".
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError, asyncpg.InterfaceError, ConnectionError, OSError,
    asyncpg.CannotConnectNowError,
)


def is_connection_error(exc: BaseException) -> bool:
    """True when ``exc`` says PostgreSQL is down or the connection broke (a 503, not a 500)."""
    return isinstance(exc, CONNECTION_ERRORS)


async def _init_connection(conn: asyncpg.Connection) -> None:
    # The vector extension may not exist yet on a brand-new database: migrations create it,
    # and the pool is re-initialised afterwards (see PostgresStore.migrate).
    try:
        await register_vector(conn)
    except (ValueError, asyncpg.PostgresError):
        log.debug("pgvector type not registered yet (extension missing)")


#: Session settings of every pooled connection. Generic plans: the statements are written for them
#: (arrays, ``IS NULL OR`` conditions), and PostgreSQL's default settles on them for the search path
#: anyway, but only after planning the first five executions of each statement on each new connection
#: for their values (4 ms each for the BM25 completion at 100k chunks, against 0.4 generic): under a
#: burst that opens connections, that warm-up cost a fifth of PostgreSQL's CPU per search. A statement
#: whose plan depends on its values asks for its own mode (the HNSW legs: search/legs.py hnsw_settings).
SESSION_SETTINGS = {"plan_cache_mode": "force_generic_plan"}

#: Upper bound of one migration (backfills over millions of rows take minutes).
_MIGRATION_TIMEOUT_S = 6 * 3600.0


class PostgresStore:
    """Owns the asyncpg pool. Create with :meth:`connect`, close with :meth:`close`."""

    def __init__(self, pool: asyncpg.Pool, dsn: str) -> None:
        self.pool = pool
        self._dsn = dsn
        #: The typed statements, each call on a pooled connection of its own.
        self.q = PgQueries(pool)

    @asynccontextmanager
    async def unit_of_work(self, *, isolation: str | None = None) -> AsyncIterator[UnitOfWork]:
        """One connection and one transaction, with the typed statements bound to it: everything done
        through the yielded object commits together, or rolls back when the block raises."""
        async with self.pool.acquire() as conn, conn.transaction(**({"isolation": isolation} if isolation else {})):
            yield UnitOfWork(conn)

    @asynccontextmanager
    async def connection(self) -> AsyncIterator[UnitOfWork]:
        """One pooled connection with the typed statements bound to it, outside a transaction (session
        state such as advisory locks lives as long as the block); open transactions with
        ``uow.conn.transaction()`` inside it."""
        async with self.pool.acquire() as conn:
            yield UnitOfWork(conn)

    @classmethod
    async def connect(cls, dsn: str, *, min_size: int = 1, max_size: int = 10,
                      dsn_source: Callable[[], Awaitable[str]] | None = None) -> PostgresStore:
        """Open a pool; connection problems become one-line :class:`ServiceUnavailable` errors.

        With ``dsn_source`` every new connection asks it for the DSN (a local server that came back on
        another port is followed); when the answer changes, idle connections to the old address are
        dropped, and connections in use are closed when their request releases them.
        """
        holder: list[PostgresStore] = []
        current = [dsn]

        async def connect_now(*_args: Any, **kwargs: Any) -> asyncpg.Connection:
            assert dsn_source is not None
            where = await dsn_source()
            if where != current[0]:
                current[0] = where
                if holder:
                    await holder[0].pool.expire_connections()
            return await asyncpg.connect(where, **kwargs)

        try:
            pool = await asyncpg.create_pool(
                dsn, min_size=min_size, max_size=max_size, init=_init_connection, command_timeout=60,
                connect=connect_now if dsn_source is not None else None, reset=reset_connection,
                server_settings=SESSION_SETTINGS,
            )
        except asyncpg.InvalidPasswordError as exc:
            raise ConfigurationError(
                f"PostgreSQL rejected the credentials in GRAPHRAG_POSTGRES_DSN ({redact_dsn(dsn)}): {exc}"
            ) from None
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise ServiceUnavailable(f"cannot connect to PostgreSQL at {redact_dsn(dsn)}: {exc}") from None
        assert pool is not None
        store = cls(pool, dsn)
        holder.append(store)
        return store

    async def close(self) -> None:
        await self.pool.close()

    async def migrate(self) -> list[str]:
        """Apply pending ``sql/migrations`` in order, once each, under an advisory lock.

        Returns the versions applied now. A migration whose file changed after it was applied is
        an error, because silently diverging schemas are worse than a stop.
        """
        applied_now: list[str] = []
        async with self.unit_of_work() as uow:
            conn, sql = uow.conn, uow.sql
            # One transaction under the migrations lock.
            await sql.execute("migrations", "lock_migrations")
            await sql.execute("migrations", "create_migrations_table")
            done = {r["version"]: r["checksum"] for r in await sql.fetch("migrations", "applied_migrations")}
            for version, text in queries.migrations():
                checksum = hashlib.sha256(text.encode()).hexdigest()
                if version in done:
                    if done[version] != checksum:
                        raise ConfigurationError(
                            f"migration {version} changed after it was applied; restore it or add a new one"
                        )
                    continue
                log.info("applying migration %s", version)
                # A migration may backfill large tables: the per-statement timeout of queries does not apply.
                await conn.execute(text, timeout=_MIGRATION_TIMEOUT_S)
                await sql.execute("migrations", "record_migration", version=version, checksum=checksum)
                applied_now.append(version)
        if applied_now:
            # Connections opened before CREATE EXTENSION lack the vector codec.
            await self.pool.expire_connections()
        return applied_now

    @asynccontextmanager
    async def advisory_lock(self, name: str) -> AsyncIterator[None]:
        """Hold the session-level advisory lock ``name`` (waiting for it): one holder at a time across
        every process that shares this database (API workers, replicas, the CLI)."""
        async with self.connection() as session:
            await session.sql.fetchval("migrations", "advisory_lock", name=name)
            try:
                yield
            finally:
                await session.sql.fetchval("migrations", "advisory_unlock", name=name)

    async def pending_migrations(self) -> list[str]:
        """Versions in ``sql/migrations`` not yet applied (used by readiness checks)."""
        await self.q.sql.execute("migrations", "create_migrations_table")
        done = {r["version"] for r in await self.q.sql.fetch("migrations", "applied_migrations")}
        return [v for v, _ in queries.migrations() if v not in done]

    async def applied_migrations(self) -> list[str]:
        """Versions of the applied migrations, in order."""
        return [r["version"] for r in await self.q.sql.fetch("migrations", "applied_migrations")]

    async def health(self) -> PostgresHealth:
        """Version and pgvector version, or the reason the server cannot be reached."""
        try:
            async with self.connection() as session:
                version = await session.sql.fetchval("health", "server_version")
                pgvector = await session.sql.fetchval("health", "pgvector_version")
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            return PostgresHealth(ok=False, error=str(exc))
        return PostgresHealth(ok=True, version=str(version), pgvector=str(pgvector or ""))

    # -- documents and chunks -----------------------------------------------------------------
    async def existing_documents(self, collection: str, sources: list[str]) -> dict[str, tuple[uuid.UUID, str]]:
        """``source -> (id, content_hash)`` for the given sources that are already stored."""
        rows = await self.q.documents.existing(collection, sources)
        return {r["source"]: (r["id"], r["content_hash"]) for r in rows}

    @staticmethod
    async def upsert_document(uow: PgQueries, row: DocumentRow) -> tuple[uuid.UUID, bool]:
        """Insert or update the document row inside the caller's unit of work; returns (id, inserted)."""
        return await uow.documents.upsert(collection=row.collection, source=row.source, title=row.title,
                                          content_hash=row.content_hash, metadata=json.dumps(row.metadata),
                                          tags=list(row.tags))

    async def collection_counts(self) -> dict[str, dict[str, int]]:
        rows = await self.q.documents.counts()
        return {r["collection"]: {"documents": r["documents"], "chunks": r["chunks"]} for r in rows}

    async def document_ids(self, collection: str) -> set[str]:
        return {str(i) for i in await self.q.documents.ids(collection)}

    # -- collections and their embedding models -------------------------------------------------
    async def register_model(self, name: str, provider: str, spec: str, dim: int,
                             base_url: str | None) -> ModelRecord:
        """Record a model on first use (and make its dimension's vector index); returns what is recorded."""
        record = ModelRecord.of(await self.q.collections.register_model(
            name=name, provider=provider, spec=spec, dim=dim, base_url=base_url))
        await self.q.collections.ensure_vector_index(record.dim)
        return record

    async def model(self, name: str) -> ModelRecord | None:
        row = await self.q.collections.model(name)
        return ModelRecord.of(row) if row is not None else None

    async def collection_info(self, names: list[str] | None) -> dict[str, CollectionRecord]:
        """The recorded model and text-search configuration of these collections (all when None); read
        once per request inside :meth:`one_request`."""
        shared = _REQUEST_COLLECTIONS.get()
        key = tuple(names) if names is not None else None
        if shared is not None and key in shared:
            return shared[key]
        rows = await self.q.collections.info(names)
        found = {r["name"]: CollectionRecord.of(r) for r in rows}
        if shared is not None:
            shared[key] = found
        return found

    @staticmethod
    @contextmanager
    def one_request() -> Iterator[None]:
        """Within it (and the tasks started in it), collection records are read once: a search checks
        that the collections it names exist, then reads their embedding model, and both are the same
        row. For read-only requests: a write inside it would not be seen by a later read."""
        token = _REQUEST_COLLECTIONS.set({})
        try:
            yield
        finally:
            _REQUEST_COLLECTIONS.reset(token)

    async def require_collections(self, names: list[str] | tuple[str, ...] | None) -> None:
        """NotFound naming the first of ``names`` that no document was ever added to (one query).

        Only for collections a caller named: a searcher's typo is then an error, not 0 results."""
        if not names:
            return
        bad = [n for n in names if not is_collection_name(n)]
        if bad:
            raise InvalidInput(f"invalid collection name {bad[0]!r}")
        known = await self.collection_info(list(names))
        missing = [n for n in names if n not in known]
        if missing:
            raise NotFound(f"unknown collection {missing[0]!r}: no document was ever added to it")

    async def create_collection(self, name: str, model: str, text_config: str) -> None:
        """Record a new collection (a no-op when it exists); an unknown configuration is a clear error."""
        if not await self.q.collections.text_config_exists(text_config):
            raise InvalidInput(f"unknown text-search configuration {text_config!r} "
                               "(see `SELECT cfgname FROM pg_ts_config` for the ones this server has)")
        await self.q.collections.create(name, model, text_config)


CHUNK_COLUMNS = _CHUNK_COLUMNS


@dataclass(frozen=True)
class ModelRecord:
    """An ``embedding_models`` row: the name chunks record, how to load the model, its dimension."""

    name: str
    provider: str
    spec: str
    dim: int
    base_url: str | None = None

    @classmethod
    def of(cls, row: Any, prefix: str = "") -> ModelRecord:
        return cls(row[f"{prefix}name"] if prefix else row["name"], row[f"{prefix}provider"], row[f"{prefix}spec"],
                   int(row[f"{prefix}dim"]), row[f"{prefix}base_url"])


@dataclass(frozen=True)
class CollectionRecord:
    """A ``collections`` row with its model (and the model a re-embed is moving it to)."""

    name: str
    model: ModelRecord
    text_config: str
    reembed: ModelRecord | None = None
    #: Its own HNSW index for its model's dimension (graphrag/ingest/vector_index.py); None: the shared one.
    vector_index: str | None = None

    @classmethod
    def of(cls, row: Any) -> CollectionRecord:
        model = ModelRecord(row["embedding_model"], row["provider"], row["spec"], int(row["dim"]), row["base_url"])
        reembed = None
        if row["reembed_model"] is not None:
            reembed = ModelRecord(row["reembed_model"], row["reembed_provider"], row["reembed_spec"],
                                  int(row["reembed_dim"]), row["reembed_base_url"])
        return cls(row["name"], model, row["text_config"], reembed, row.get("vector_index"))


@dataclass(frozen=True)
class DocumentRow:
    """The ``documents`` row of one ingested document."""

    collection: str
    source: str
    title: str
    content_hash: str
    metadata: dict[str, Any]
    tags: tuple[str, ...] = ()

