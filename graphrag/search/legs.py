"""The search legs on PostgreSQL, one async function each: vector and keyword (BM25); the graph leg is in
graph.py. Also the rows check every leg's hits go through."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphrag.search.config import SearchConfig
from graphrag.stores.filters import compile_filter
from graphrag.stores.postgres import PostgresStore

BM25_K1 = 0.9
BM25_B = 0.4


@dataclass
class LegResult:
    """A leg's ranked hits ``(chunk_id, score, extra)`` and, for the graph leg, its context."""

    hits: list[tuple[str, float, dict[str, Any]]] = field(default_factory=list)
    context: dict[str, Any] = field(default_factory=dict)
    confidence: float = 1.0  # how much the leg trusts its own ranking; scales its fusion weight
    rows: dict[str, dict[str, Any]] = field(default_factory=dict)  # chunk rows the leg already fetched
    # The graph leg's second ranking: first chunks of documents named after an entity the query names.
    named: list[tuple[str, float, dict[str, Any]]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # extra keys for the leg's entry in ``legs``


def collection_list(config: SearchConfig) -> list[str] | None:
    """The searched collections as a statement value (None: every collection)."""
    return list(config.collections) if config.collections else None


def hnsw_settings(config: SearchConfig) -> tuple[dict[str, str], int]:
    """The session settings of an HNSW leg and how many rows it fetches.

    Always an iterative scan: the model condition filters too (several models may share one
    dimension's index), as do collections and filters. Relaxed order streams rows as the scan finds
    them, so the first ``overfetch`` rows can miss closer ones found a little later: the leg takes the
    scan's whole first batch (``ef_search`` rows, no extra index work), sorts, then cuts.
    """
    ef_search = max(config.ef_search, config.overfetch)
    settings = {"hnsw.ef_search": str(ef_search), "hnsw.iterative_scan": "relaxed_order", "plan_cache_mode": "auto"}
    if config.collections:
        # A plan for these collections (as constants): it can use their own partial indexes
        # (graphrag/ingest/vector_index.py), and for a small collection it sorts the few rows exactly.
        # A generic plan (the pool's sessions plan generically, and PostgreSQL's own choice settles on
        # one after five executions on a connection) can only walk the shared index, whose iterative
        # scan reads through other collections' vectors first and can give up before it finds these.
        settings["plan_cache_mode"] = "force_custom_plan"
    return settings, ef_search


async def vector_leg(pg: PostgresStore, embedding: np.ndarray, config: SearchConfig, model: str,
                     dim: int | None = None) -> LegResult:
    """HNSW cosine search over the chunks of ``model`` (whose vectors have ``dim`` dimensions, which
    picks that dimension's index); iterative scans keep filtered queries from running dry. A search of
    named collections is planned for them (:func:`hnsw_settings`): their own indexes where they have
    them, an exact sort of a small collection's rows where that is cheaper."""
    settings, fetch = hnsw_settings(config)
    rows = await pg.q.search.vector_leg(embedding, collections=collection_list(config), model=model, limit=fetch,
                                        dim=dim if dim is not None else len(embedding),
                                        where=compile_filter(config.filters), settings=settings)
    hits: list[tuple[str, float, dict[str, Any]]] = [(str(r["id"]), float(r["similarity"]), {}) for r in rows]
    hits.sort(key=lambda h: -h[1])
    hits = hits[: config.overfetch]
    if config.threshold is not None:
        hits = [h for h in hits if h[1] >= config.threshold]
    return LegResult(hits)


async def keyword_leg(pg: PostgresStore, query: str, config: SearchConfig, *, texts: list[str] | None = None,
                      weights: list[float] | None = None) -> LegResult:
    """BM25 (OR semantics, IDF from lexeme statistics) from the keyword postings. ``texts`` and
    ``weights`` replace the query by weighted strings (query expansion: the query at weight 1, its
    expansions below); each term's IDF is multiplied by its weight."""
    rows = await pg.q.search.keyword_leg(texts or [query], weights or [1.0], collections=collection_list(config),
                                         limit=config.overfetch, k1=BM25_K1, b=BM25_B,
                                         where=compile_filter(config.filters))
    return LegResult([(str(r["id"]), float(r["score"]), {"matched": sorted(set(r["matched"]))}) for r in rows])


async def keyword_scores(pg: PostgresStore, query: str, chunk_ids: list[str], config: SearchConfig, *,
                         texts: list[str] | None = None, weights: list[float] | None = None) -> dict[str, float]:
    """The BM25 scores :func:`keyword_leg` would give these chunks (0 for those without a query term)."""
    if not chunk_ids:
        return {}
    rows = await pg.q.search.keyword_scores(texts or [query], weights or [1.0], collections=collection_list(config),
                                            chunk_ids=chunk_ids, k1=BM25_K1, b=BM25_B)
    return {str(r["id"]): float(r["score"] or 0.0) for r in rows}


async def similarities(pg: PostgresStore, embedding: np.ndarray, ids: list[str], model: str) -> dict[str, float]:
    """The query similarity (cosine) of those of these chunks that ``model`` embedded."""
    if not ids:
        return {}
    rows = await pg.q.search.chunk_similarity(embedding, ids, model=model)
    return {str(r["id"]): float(r["similarity"]) for r in rows}


async def completion_scores(pg: PostgresStore, texts: list[str], weights: list[float], keyword_ids: list[str],
                            embedding: np.ndarray, vector_ids: list[str], model: str,
                            config: SearchConfig) -> tuple[dict[str, float], dict[str, float]]:
    """:func:`keyword_scores` of ``keyword_ids`` (for the weighted strings ``texts``) and
    :func:`similarities` of ``vector_ids``, in one round trip."""
    rows = await pg.q.search.completion_scores(texts, weights, collections=collection_list(config),
                                               keyword_ids=keyword_ids, k1=BM25_K1, b=BM25_B, embedding=embedding,
                                               vector_ids=vector_ids, model=model)
    keyword: dict[str, float] = {}
    vector: dict[str, float] = {}
    for r in rows:
        (keyword if r["kind"] == "keyword" else vector)[str(r["id"])] = float(r["score"] or 0.0)
    return keyword, vector


async def fetch_rows(pg: PostgresStore, ids: list[str], config: SearchConfig) -> dict[str, dict[str, Any]]:
    """Chunk and document columns of the hits, re-checked against collections and filters; their
    vectors only for MMR (the one step that compares them)."""
    if not ids:
        return {}
    rows = await pg.q.search.chunk_rows(ids, collections=collection_list(config),
                                        where=compile_filter(config.filters), vectors=config.mmr_lambda is not None)
    out = {}
    for r in rows:
        row = dict(r)
        for key in ("metadata", "document_metadata"):
            if isinstance(row.get(key), str):
                row[key] = json.loads(row[key])
        out[str(r["id"])] = row
    return out
