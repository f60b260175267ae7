"""The search legs on PostgreSQL, one async function each: vector and keyword (BM25); the graph leg is in
graph.py. Also the rows check every leg's hits go through."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphrag.search.config import SearchConfig
from graphrag.search.filters import compile_filter
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


def _collections(config: SearchConfig) -> list[str] | None:
    return list(config.collections) if config.collections else None


async def vector_leg(pg: PostgresStore, embedding: np.ndarray, config: SearchConfig, model: str,
                     dim: int | None = None) -> LegResult:
    """HNSW cosine search over the chunks of ``model`` (whose vectors have ``dim`` dimensions, which
    picks that dimension's index); iterative scans keep filtered queries from running dry."""
    compiled = compile_filter(config.filters, first_param=5)
    ef_search = max(config.ef_search, config.overfetch)
    # Always iterative: the model condition filters too (several models may share one dimension's
    # index). Relaxed order streams rows as the scan finds them, so the first `overfetch` rows can miss
    # closer ones found a little later: take the scan's whole first batch (ef_search rows, no extra
    # index work), sort, then cut.
    settings = {"hnsw.ef_search": str(ef_search), "hnsw.iterative_scan": "relaxed_order"}
    fetch = ef_search
    rows = await pg.fetch_filtered("search", "vector_leg", compiled.sql, embedding, _collections(config), model,
                                   fetch, *compiled.params, local_settings=settings,
                                   dim=dim if dim is not None else len(embedding))
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
    compiled = compile_filter(config.filters, first_param=7)
    rows = await pg.fetch_filtered("search", "keyword_leg", compiled.sql, texts or [query], _collections(config),
                                   config.overfetch, BM25_K1, BM25_B, weights or [1.0], *compiled.params)
    return LegResult([(str(r["id"]), float(r["score"]), {"matched": sorted(set(r["matched"]))}) for r in rows])


async def keyword_scores(pg: PostgresStore, query: str, chunk_ids: list[str], config: SearchConfig, *,
                         texts: list[str] | None = None, weights: list[float] | None = None) -> dict[str, float]:
    """The BM25 scores :func:`keyword_leg` would give these chunks (0 for those without a query term)."""
    if not chunk_ids:
        return {}
    rows = await pg.fetch("search", "keyword_scores", texts or [query], _collections(config),
                          [uuid.UUID(i) for i in chunk_ids], BM25_K1, BM25_B, weights or [1.0])
    return {str(r["id"]): float(r["score"] or 0.0) for r in rows}


async def fetch_rows(pg: PostgresStore, ids: list[str], config: SearchConfig) -> dict[str, dict[str, Any]]:
    """Chunk and document columns of the hits, re-checked against collections and filters."""
    if not ids:
        return {}
    compiled = compile_filter(config.filters, first_param=3)
    rows = await pg.fetch_filtered("search", "chunk_rows", compiled.sql, [uuid.UUID(i) for i in ids],
                                   _collections(config), *compiled.params)
    out = {}
    for r in rows:
        row = dict(r)
        for key in ("metadata", "document_metadata"):
            if isinstance(row.get(key), str):
                row[key] = json.loads(row[key])
        out[str(r["id"])] = row
    return out
