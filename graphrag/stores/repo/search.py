"""Typed statements of the search path: the legs (``sql/search.sql``), extended search's
representations (``sql/extended.sql``), the result options (``sql/results.sql``) and completions
(``sql/suggest.sql``). Statements with a ``/*FILTER*/`` marker take the compiled JSON filter as a
:class:`~graphrag.stores.repo.base.Condition`."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import asyncpg
import numpy as np

from graphrag.stores.repo.base import Area, Condition


class SearchQueries(Area):
    """What one search reads from PostgreSQL."""

    async def vector_leg(self, embedding: np.ndarray, *, collections: list[str] | None, model: str, limit: int,
                         dim: int, where: Condition, settings: Mapping[str, str]) -> list[asyncpg.Record]:
        """``id, similarity`` of the nearest chunks of ``model`` (the HNSW index of ``dim``), in scan order."""
        return await self._sql.fetch_where("search", "vector_leg", where=where, dim=dim, settings=settings,
                                           embedding=embedding, collections=collections, model=model, limit=limit)

    async def keyword_leg(self, texts: list[str], weights: list[float], *, collections: list[str] | None,
                          limit: int, k1: float, b: float, where: Condition) -> list[asyncpg.Record]:
        """``id, score, matched`` of the best BM25 chunks for the weighted query strings."""
        return await self._sql.fetch_where("search", "keyword_leg", where=where, texts=texts, weights=weights,
                                           collections=collections, limit=limit, k1=k1, b=b)

    async def keyword_scores(self, texts: list[str], weights: list[float], *, collections: list[str] | None,
                             chunk_ids: Sequence[uuid.UUID | str], k1: float, b: float) -> list[asyncpg.Record]:
        """``id, score``: the BM25 score :meth:`keyword_leg` would give these chunks (those with a term)."""
        return await self._sql.fetch("search", "keyword_scores", texts=texts, weights=weights,
                                     collections=collections, chunk_ids=chunk_ids, k1=k1, b=b)

    async def completion_scores(self, texts: list[str], weights: list[float], *, collections: list[str] | None,
                                keyword_ids: Sequence[uuid.UUID | str], k1: float, b: float, embedding: np.ndarray,
                                vector_ids: Sequence[uuid.UUID | str], model: str) -> list[asyncpg.Record]:
        """``id, kind, score``: :meth:`keyword_scores` of ``keyword_ids`` (kind ``keyword``) and
        :meth:`chunk_similarity` of ``vector_ids`` (kind ``vector``), in one statement."""
        return await self._sql.fetch("search", "completion_scores", texts=texts, weights=weights,
                                     collections=collections, chunk_ids=keyword_ids, k1=k1, b=b,
                                     embedding=embedding, vector_ids=vector_ids, model=model)

    async def chunk_rows(self, ids: Sequence[uuid.UUID | str], *, collections: list[str] | None, where: Condition,
                         vectors: bool = False) -> list[asyncpg.Record]:
        """Chunk and document columns of these chunks, those outside the collections or filter left out;
        ``embedding`` is None unless ``vectors``."""
        return await self._sql.fetch_where("search", "chunk_rows", where=where, ids=ids, collections=collections,
                                           vectors=vectors)

    async def chunk_similarity(self, embedding: np.ndarray, ids: Sequence[uuid.UUID | str], *, model: str) -> list[asyncpg.Record]:
        """``id, similarity`` (cosine) of those of these chunks that ``model`` embedded."""
        return await self._sql.fetch("search", "chunk_similarity", embedding=embedding, ids=ids, model=model)

    async def chunk_count(self, collections: list[str] | None) -> int:
        """Chunks in these collections (all when None)."""
        return int(await self._sql.fetchval("search", "collection_chunk_count", collections=collections) or 0)

    async def representation_vector(self, embedding: np.ndarray, *, collections: list[str] | None, model: str,
                                    limit: int, dim: int, where: Condition,
                                    settings: Mapping[str, str]) -> list[asyncpg.Record]:
        """Nearest representations (``id, document_id, chunk_id, kind, content, similarity``), in scan order."""
        return await self._sql.fetch_where("extended", "representation_vector", where=where, dim=dim,
                                           settings=settings, embedding=embedding, collections=collections,
                                           model=model, limit=limit)

    async def representation_keyword(self, query: str, *, collections: list[str] | None, limit: int, k1: float,
                                     b: float, mean_words: float, where: Condition) -> list[asyncpg.Record]:
        """Best BM25 representations, with their vectors (``... score, embedding, embedding_model``)."""
        return await self._sql.fetch_where("extended", "representation_keyword", where=where, query=query,
                                           collections=collections, limit=limit, k1=k1, b=b,
                                           mean_words=mean_words)

    async def best_chunks_of_documents(self, document_ids: list[uuid.UUID], embedding: np.ndarray, *, model: str,
                                       per_document: int) -> list[asyncpg.Record]:
        """``id, document_id, similarity`` of each document's chunks most similar to ``embedding``."""
        return await self._sql.fetch("extended", "best_chunks_of_documents", document_ids=document_ids,
                                     embedding=embedding, model=model, per_document=per_document)

    async def document_windows(self, document_ids: list[uuid.UUID], chunk_indexes: list[int],
                               radius: int) -> list[asyncpg.Record]:
        """The documents' chunks within ``radius`` positions of each hit's chunk, in order, with counts."""
        return await self._sql.fetch("results", "document_windows", document_ids=document_ids,
                                     chunk_indexes=chunk_indexes, radius=radius)

    async def word_lexemes(self, collections: list[str], words: list[str]) -> list[asyncpg.Record]:
        """``collection, word, lexemes``: each word stemmed by its collection's text-search configuration."""
        return await self._sql.fetch("results", "word_lexemes", collections=collections, words=words)

    async def collection_names(self) -> list[str]:
        """Every collection's name, in order."""
        return [r["name"] for r in await self._sql.fetch("suggest", "collection_names")]

    async def complete(self, collections: list[str], low: str, high: str, *, k: int, range_limit: int,
                       top_per_collection: int) -> list[dict[str, Any]]:
        """Completion candidates of a prefix (its range ``low <= norm < high``); the caller ranks them."""
        rows = await self._sql.fetch("suggest", "complete", collections=collections, low=low, high=high, k=k,
                                     range_limit=range_limit, top_per_collection=top_per_collection)
        return [dict(r) for r in rows]
