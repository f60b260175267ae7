"""Typed statements of ``sql/portable.sql`` (``graphrag export`` and ``graphrag import``)."""

from __future__ import annotations

import uuid
from typing import Any

import asyncpg

from graphrag.stores.repo.base import Area


class PortableQueries(Area):
    """Reads of an export (on one connection, inside its snapshot) and the checks and deletes of an import."""

    async def lock_shared(self, collection: str) -> None:
        """The collection's shared session lock, held by an export for its whole run."""
        await self._sql.fetchval("portable", "lock_collection", collection=collection)

    async def unlock_shared(self, collection: str) -> None:
        await self._sql.fetchval("portable", "unlock_collection", collection=collection)

    def documents(self, collection: str, *, prefetch: int) -> Any:
        """The collection's documents in id order with their ``chunk_count``, read through a cursor
        (iterate with ``async for``; needs a unit of work's connection inside a transaction)."""
        return self._sql.cursor("portable", "export_documents", prefetch=prefetch, collection=collection)

    async def chunks(self, ids: list[uuid.UUID]) -> list[asyncpg.Record]:
        """The documents' chunks with their vectors, by document and position."""
        return await self._sql.fetch("portable", "export_chunks", ids=ids)

    async def representations(self, ids: list[uuid.UUID]) -> list[asyncpg.Record]:
        return await self._sql.fetch("portable", "export_representations", ids=ids)

    async def foreign_document(self, ids: list[uuid.UUID], collection: str) -> asyncpg.Record | None:
        """``id, collection`` of one of ``ids`` stored in another collection, if any."""
        return await self._sql.fetchrow("portable", "foreign_documents", ids=ids, collection=collection)

    async def foreign_chunk(self, ids: list[uuid.UUID], collection: str) -> asyncpg.Record | None:
        return await self._sql.fetchrow("portable", "foreign_chunks", ids=ids, collection=collection)

    async def replaced_documents(self, collection: str, ids: list[uuid.UUID], sources: list[str]) -> list[uuid.UUID]:
        """The collection's documents an imported part replaces (same ids or same sources)."""
        rows = await self._sql.fetch("portable", "replaced_documents", collection=collection, ids=ids,
                                     sources=sources)
        return [r["id"] for r in rows]

    async def delete_documents(self, ids: list[uuid.UUID]) -> None:
        await self._sql.execute("portable", "delete_documents", ids=ids)
