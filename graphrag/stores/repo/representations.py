"""Typed statements of ``sql/extended.sql`` that ingestion and re-embedding use (extended search's
representations); the search statements of that file are in :mod:`graphrag.stores.repo.search`."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg

from graphrag.stores.repo.base import Area


class RepresentationsQueries(Area):
    """The ``representations`` table and the collections' extended mode."""

    async def mode(self, collection: str) -> str | None:
        return await self._sql.fetchval("extended", "collection_extended", collection=collection)

    async def set_mode(self, collection: str, mode: str | None) -> None:
        await self._sql.execute("extended", "set_collection_extended", collection=collection, mode=mode)

    async def ensure_index(self, dim: int) -> None:
        """The representations' HNSW index of one dimension (made once)."""
        await self._sql.execute("extended", "ensure_representation_index", dim=dim)

    async def delete_of_documents(self, ids: list[uuid.UUID]) -> None:
        await self._sql.execute("extended", "delete_representations_of_documents", ids=ids)

    async def delete_of_collection(self, collection: str) -> None:
        await self._sql.execute("extended", "delete_representations_of_collection", collection=collection)

    async def documents_to_represent(self, collection: str, ids: list[uuid.UUID],
                                     generator: str) -> list[asyncpg.Record]:
        """``id, title`` of the documents among ``ids`` with no representation by ``generator``."""
        return await self._sql.fetch("extended", "documents_to_represent", collection=collection, ids=ids,
                                     generator=generator)

    async def chunks_to_represent(self, ids: list[uuid.UUID]) -> list[asyncpg.Record]:
        """``id, document_id, chunk_index, content`` of the documents' chunks, in order."""
        return await self._sql.fetch("extended", "chunks_to_represent", ids=ids)

    async def reembed_todo(self, collection: str, limit: int) -> list[asyncpg.Record]:
        """``id, text`` of representations without a vector of the new model."""
        return await self._sql.fetch("extended", "reembed_representation_todo", collection=collection, limit=limit)

    async def reembed_counts(self, collection: str) -> tuple[int, int]:
        """``(total, done)`` representations of the collection's re-embed."""
        row = await self._sql.fetchrow("extended", "reembed_representation_counts", collection=collection)
        assert row is not None
        return int(row["total"]), int(row["done"])

    async def set_reembed_vectors(self, rows: list[tuple[uuid.UUID, Any]]) -> None:
        await self._sql.executemany("extended", "set_representation_vector",
                                     [{"id": i, "vector": v} for i, v in rows])

    async def reset_reembed_vectors(self, collection: str) -> None:
        await self._sql.execute("extended", "reset_representation_vectors", collection=collection)

    async def switch(self, collection: str, model: str) -> None:
        await self._sql.execute("extended", "switch_representations", collection=collection, model=model)
