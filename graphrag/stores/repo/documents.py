"""Typed statements of ``sql/documents.sql`` (documents, chunks and the BM25 statistics)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

import asyncpg

from graphrag.stores.repo.base import Area


CHUNK_COLUMNS = (
    "id", "document_id", "collection", "chunk_index", "content", "heading_path", "char_start", "char_end",
    "token_count", "has_code", "metadata", "embedding", "embedding_model", "text_config",
)


@dataclass(frozen=True)
class Totals:
    """A collection's document and chunk counts."""

    documents: int
    chunks: int


class DocumentsQueries(Area):
    """Documents and their chunks. Rows keep the statement's column names."""

    async def existing(self, collection: str, sources: list[str]) -> list[asyncpg.Record]:
        """``id, source, content_hash`` of the given sources already stored."""
        return await self._sql.fetch("documents", "existing_documents", collection=collection, sources=sources)

    async def upsert(self, *, collection: str, source: str, title: str, content_hash: str, metadata: str,
                     tags: list[str]) -> tuple[uuid.UUID, bool]:
        """Insert or update a document row (``metadata`` is JSON text); ``(id, inserted)``."""
        row = await self._sql.fetchrow("documents", "upsert_document", collection=collection, source=source,
                                       title=title, content_hash=content_hash, metadata=metadata, tags=tags)
        assert row is not None
        return row["id"], bool(row["inserted"])

    async def replace_chunks(self, document_ids: list[uuid.UUID], rows: list[tuple[Any, ...]]) -> None:
        """Delete the documents' chunks and COPY the new ones in (``rows`` in :data:`CHUNK_COLUMNS` order):
        one statement each for a whole batch, since every statement on ``chunks`` opens all its indexes
        (one partial vector index per collection that has its own, and per dimension)."""
        await self._sql.execute("documents", "delete_chunks_of_documents", ids=document_ids)
        if rows:
            await self._sql.copy("chunks", rows, list(CHUNK_COLUMNS))

    async def delete(self, ids: list[uuid.UUID]) -> list[str]:
        """Delete documents (chunks cascade) after taking them out of the BM25 statistics; their sources.
        Run it in a unit of work: the two statements belong together."""
        await self.stats_subtract(ids)
        return [r["source"] for r in await self._sql.fetch("documents", "delete_documents", ids=ids)]

    async def by_id(self, document_id: uuid.UUID) -> asyncpg.Record | None:
        """The document row (id, collection, source, title, content_hash, metadata, tags, created_at,
        updated_at)."""
        return await self._sql.fetchrow("documents", "document_by_id", id=document_id)

    async def by_source(self, collection: str, source: str) -> asyncpg.Record | None:
        """``id, collection, source, title`` of the document stored under ``source``."""
        return await self._sql.fetchrow("documents", "document_by_source", collection=collection, source=source)

    async def upload_sha256(self, collection: str, source: str) -> tuple[bool, str | None]:
        """Whether ``source`` is stored, and the SHA-256 of the upload stored under it (None for text)."""
        row = await self._sql.fetchrow("documents", "upload_identity", collection=collection, source=source)
        return (row is not None, row["file_sha256"] if row is not None else None)

    async def sources(self, collection: str) -> list[asyncpg.Record]:
        """``id, source`` of every document of the collection."""
        return await self._sql.fetch("documents", "sources_of_collection", collection=collection)

    async def ids(self, collection: str) -> list[uuid.UUID]:
        return [r["id"] for r in await self._sql.fetch("documents", "document_ids", collection=collection)]

    async def counts(self) -> list[asyncpg.Record]:
        """``collection, documents, chunks`` of every collection."""
        return await self._sql.fetch("documents", "collection_counts")

    async def totals(self, collection: str) -> Totals:
        row = await self._sql.fetchrow("documents", "collection_totals", collection=collection)
        assert row is not None
        return Totals(int(row["documents"]), int(row["chunks"]))

    async def stats_add(self, ids: list[uuid.UUID]) -> None:
        """Add the documents' current chunks to the BM25 statistics and the keyword postings."""
        await self._sql.execute("documents", "stats_add", ids=ids)
        # After stats_add: a posting's impact uses the collection's mean length with these chunks.
        await self._sql.execute("postings", "postings_add", ids=ids)

    async def stats_subtract(self, ids: list[uuid.UUID]) -> None:
        """Take the documents' current chunks out of the BM25 statistics and the keyword postings."""
        await self._sql.execute("documents", "stats_subtract", ids=ids)
        await self._sql.execute("postings", "postings_remove", ids=ids)

    async def page(self, collections: list[str] | None, limit: int, offset: int) -> list[asyncpg.Record]:
        """One page, newest first, with each document's ``chunks`` and the ``total``."""
        return await self._sql.fetch("documents", "list_documents", collections=collections, limit=limit,
                                     offset=offset)

    async def count(self, collections: list[str] | None) -> int:
        return int(await self._sql.fetchval("documents", "count_documents", collections=collections))

    async def chunks_of(self, document_id: uuid.UUID) -> list[asyncpg.Record]:
        """A document's chunks in order."""
        return await self._sql.fetch("documents", "document_chunks", document_id=document_id)

    async def chunk_count(self, document_id: uuid.UUID) -> int:
        return int(await self._sql.fetchval("documents", "document_chunk_count", document_id=document_id))

    async def chunks_by_id(self, ids: list[uuid.UUID], collections: list[str] | None) -> list[asyncpg.Record]:
        """Chunks with their document's source and title, of ``collections`` only (any when None)."""
        return await self._sql.fetch("documents", "chunks_by_id", ids=ids, collections=collections)

    async def collections_of(self, ids: list[uuid.UUID]) -> list[asyncpg.Record]:
        """``collection, ids``: the documents grouped by collection."""
        return await self._sql.fetch("documents", "collections_of", ids=ids)

    async def by_ids(self, ids: list[uuid.UUID]) -> list[asyncpg.Record]:
        """``id, collection, source, title`` of the documents."""
        return await self._sql.fetch("documents", "documents_by_ids", ids=ids)

    async def chunks_of_documents(self, ids: list[uuid.UUID]) -> list[asyncpg.Record]:
        """The documents' chunks, by document and position."""
        return await self._sql.fetch("documents", "chunks_of_documents", ids=ids)

    async def chunk_ids(self, collection: str) -> dict[str, list[str]]:
        """``document id -> its chunk ids in order`` for the collection."""
        rows = await self._sql.fetch("documents", "chunk_ids_of_collection", collection=collection)
        return {str(r["document_id"]): list(r["chunk_ids"]) for r in rows}

    async def collections(self) -> list[str]:
        """Every collection with a document."""
        return [r["collection"] for r in await self._sql.fetch("documents", "collections")]
