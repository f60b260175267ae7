"""Typed statements of ``sql/suggest.sql`` that keep the suggestion terms (the writes of ingestion and
``graphrag suggest --rebuild``); the completion statements belong to the search path."""

from __future__ import annotations

import uuid

import asyncpg

from graphrag.stores.repo.base import Area

TERM_COLUMNS = ("document_id", "kind", "norm", "display", "mentions")


class TermsQueries(Area):
    """``document_terms`` and their per-collection sums ``suggest_terms``."""

    async def subtract(self, ids: list[uuid.UUID]) -> list[asyncpg.Record]:
        """Take the documents' terms out of the sums; ``collection, norm, kind, documents`` of the sums touched."""
        return await self._sql.fetch("suggest", "subtract", ids=ids)

    async def prune(self, collections: list[str], norms: list[str], kinds: list[str]) -> None:
        """Remove the sums (given column-wise) no document contributes to any more."""
        await self._sql.execute("suggest", "prune", collections=collections, norms=norms, kinds=kinds)

    async def insert(self, rows: list[tuple[uuid.UUID, str, str, str, int]]) -> None:
        """COPY ``(document_id, kind, norm, display, mentions)`` rows in."""
        await self._sql.copy("document_terms", rows, list(TERM_COLUMNS))

    async def add(self, ids: list[uuid.UUID]) -> None:
        """Add the documents' terms (already in ``document_terms``) to the sums."""
        await self._sql.execute("suggest", "add", ids=ids)

    async def documents_without_terms(self, collection: str) -> list[asyncpg.Record]:
        """``id, title`` of the collection's documents with no term but their title."""
        return await self._sql.fetch("suggest", "documents_without_terms", collection=collection)

    async def counts(self, collection: str) -> dict[str, int]:
        """``kind -> terms`` offered for the collection."""
        return {r["kind"]: int(r["terms"]) for r in await self._sql.fetch("suggest", "counts",
                                                                         collection=collection)}
