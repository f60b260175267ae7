"""Typed statements of ``sql/expansion.sql`` that the aliases backfill reads (``graphrag aliases``)."""

from __future__ import annotations

import uuid

import asyncpg

from graphrag.stores.repo.base import Area


class AliasesQueries(Area):
    """Pages of a collection's documents and their chunk texts."""

    async def document_ids(self, collection: str, after: uuid.UUID | None, limit: int) -> list[uuid.UUID]:
        """The next ``limit`` document ids of the collection after ``after`` (None: from the start), in order."""
        rows = await self._sql.fetch("expansion", "collection_document_ids", collection=collection, after=after,
                                     limit=limit)
        return [r["id"] for r in rows]

    async def chunk_texts(self, ids: list[uuid.UUID]) -> list[asyncpg.Record]:
        """``document_id, content`` of the documents' chunks, in order."""
        return await self._sql.fetch("expansion", "chunk_texts", ids=ids)
