"""Typed statements of ``sql/collections.sql`` (collections, their embedding models, re-embedding)."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

import asyncpg

from graphrag.stores import queries
from graphrag.stores.repo.base import Area


#: Seconds an index build may take (a collection's own HNSW index of a million chunks takes minutes).
INDEX_BUILD_TIMEOUT_S = 3 * 3600.0
#: The names graphrag_ensure_collection_vector_index gives (migrations/009): all a dropped index may be.
_OWN_INDEX = re.compile(r"chunks_hnsw_[0-9]{1,4}_[0-9a-f]{16}")


@dataclass(frozen=True)
class DroppedRows:
    """What :meth:`CollectionsQueries.drop` deleted, and the collection's own indexes left to drop."""

    documents: int
    chunks: int
    indexes: list[str]


class CollectionsQueries(Area):
    """Collections and the models they record. Model rows: ``name, provider, spec, dim, base_url``."""

    async def register_model(self, *, name: str, provider: str, spec: str, dim: int,
                             base_url: str | None) -> asyncpg.Record:
        """Record a model on first use; the row as recorded (the first use's dimension wins)."""
        row = await self._sql.fetchrow("collections", "register_model", name=name, provider=provider, spec=spec,
                                       dim=dim, base_url=base_url)
        assert row is not None
        return row

    async def model(self, name: str) -> asyncpg.Record | None:
        return await self._sql.fetchrow("collections", "model_by_name", name=name)

    async def ensure_vector_index(self, dim: int) -> None:
        """The chunks' partial HNSW index of one dimension (made once)."""
        await self._sql.fetchval("collections", "ensure_vector_index", dim=dim)

    async def due_vector_indexes(self, min_chunks: int) -> list[asyncpg.Record]:
        """``collection, dim`` of collections of ``min_chunks`` or more chunks that share their dimension's
        index with another collection and have no HNSW index of their own yet."""
        return await self._sql.fetch("collections", "collections_due_vector_index", min_chunks=min_chunks)

    async def ensure_collection_vector_index(self, collection: str, dim: int) -> str:
        """Build (once) the collection's own partial HNSW index of ``dim``; its name."""
        # Minutes for a million chunks: past the pool's per-statement timeout.
        return str(await self._sql.fetchval("collections", "ensure_collection_vector_index", collection=collection,
                                            dim=dim, timeout_s=INDEX_BUILD_TIMEOUT_S))

    async def vector_indexes(self, names: list[str] | None = None) -> list[asyncpg.Record]:
        """``collection, dim, index_name, created_at`` of the collections' own vector indexes."""
        return await self._sql.fetch("collections", "collection_vector_indexes", names=names)

    async def text_config_exists(self, text_config: str) -> bool:
        return bool(await self._sql.fetchval("collections", "text_config_exists", text_config=text_config))

    async def create(self, name: str, model: str, text_config: str) -> None:
        """Record a collection (a no-op when it exists)."""
        await self._sql.execute("collections", "create_collection", name=name, model=model, text_config=text_config)

    async def info(self, names: list[str] | None) -> list[asyncpg.Record]:
        """Collections with their model and re-embed model columns (all when ``names`` is None)."""
        return await self._sql.fetch("collections", "collection_info", names=names)

    async def lock(self, collection: str) -> None:
        """The collection's exclusive transaction lock (re-embed start and switch)."""
        await self._sql.fetchval("collections", "lock_collection", collection=collection)

    async def lock_shared(self, collection: str) -> None:
        """The collection's shared transaction lock (every write of chunks)."""
        await self._sql.fetchval("collections", "lock_collection_shared", collection=collection)

    async def current_model(self, collection: str) -> asyncpg.Record | None:
        """``embedding_model, text_config`` recorded for the collection."""
        return await self._sql.fetchrow("collections", "collection_model", collection=collection)

    async def start_reembed(self, collection: str, model: str) -> None:
        await self._sql.execute("collections", "start_reembed", collection=collection, model=model)

    async def reset_reembed_vectors(self, collection: str) -> None:
        await self._sql.execute("collections", "reset_reembed_vectors", collection=collection)

    async def reembed_todo(self, collection: str, limit: int) -> list[asyncpg.Record]:
        """``id, content, heading_path, token_count`` of chunks without a new vector."""
        return await self._sql.fetch("collections", "reembed_todo", collection=collection, limit=limit)

    async def reembed_counts(self, collection: str) -> tuple[int, int]:
        """``(total, done)`` chunks of the collection's re-embed."""
        row = await self._sql.fetchrow("collections", "reembed_counts", collection=collection)
        assert row is not None
        return int(row["total"]), int(row["done"])

    async def set_reembed_vectors(self, rows: list[tuple[uuid.UUID, Any]]) -> None:
        """Store the new vector of each ``(chunk id, vector)``."""
        await self._sql.executemany("collections", "set_reembed_vector", [{"id": i, "vector": v} for i, v in rows])

    async def switch_chunks(self, collection: str, model: str) -> None:
        await self._sql.execute("collections", "switch_chunks", collection=collection, model=model)

    async def switch(self, collection: str, model: str) -> None:
        await self._sql.execute("collections", "switch_collection", collection=collection, model=model)

    async def drop(self, collection: str) -> DroppedRows:
        """Delete everything the collection holds in PostgreSQL (run it in a unit of work, with the
        collection's lock held and the graph's outbox entry); its own vector indexes stay for
        :meth:`drop_vector_index`, after the commit."""
        row = await self._sql.fetchrow("collections", "drop_collection_rows", collection=collection)
        assert row is not None
        return DroppedRows(int(row["documents"]), int(row["chunks"]), list(row["indexes"]))

    async def drop_vector_index(self, index_name: str) -> None:
        """Drop one of a dropped collection's own HNSW indexes, concurrently (outside a transaction:
        run it on the pool)."""
        if not _OWN_INDEX.fullmatch(index_name):
            raise ValueError(f"not a collection vector index: {index_name!r}")
        await self._sql.target.execute(queries.sql("collections", "drop_vector_index").replace("/*INDEX*/", index_name))
