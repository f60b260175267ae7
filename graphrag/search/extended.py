"""The extended leg: match titles, summaries and propositions first, then return the chunks they stand for.

Representations (made at ingestion, :mod:`graphrag.ingest.representations`) are searched by vector
(HNSW over their embeddings) and by BM25 (their tsvector; IDF from the chunks' statistics). Each
representation's score is the sum of its two scores, each divided by the best of its kind in this
search (the convex fusion the router uses for chunks; a representation the vector search did not
return gets its exact similarity from its stored vector). Scores then pass to chunks:

- a proposition to the chunk it was taken from;
- a title or a summary to its document's best chunk (the one most similar to the query).

A chunk keeps its best representation's score, and that representation is what the hit reports as
``matched``. The leg's ranking fuses with the other legs like any leg.
"""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import numpy as np

from graphrag.models import Hit, Leg
from graphrag.search.config import SearchConfig
from graphrag.stores.filters import compile_filter
from graphrag.search.legs import BM25_B, BM25_K1, LegResult, collection_list, hnsw_settings
from graphrag.stores.postgres import PostgresStore

LEG = Leg.EXTENDED
#: Mean length (words) BM25 normalises representation lengths by: a typical proposition.
MEAN_WORDS = 20.0
#: Chunks a title or summary match passes its score to, per document.
CHUNKS_PER_DOCUMENT = 1
MATCHED_TEXT_CHARS = 400


async def extended_leg(pg: PostgresStore, query: str, embedding: np.ndarray, config: SearchConfig, model: str,
                       dim: int) -> LegResult:
    """Chunks ranked by their best-matching representation (see the module docstring)."""
    where = compile_filter(config.filters)
    settings, fetch = hnsw_settings(config)
    vector_rows, keyword_rows = await asyncio.gather(
        pg.q.search.representation_vector(embedding, collections=collection_list(config), model=model, limit=fetch,
                                          dim=dim, where=where, settings=settings),
        pg.q.search.representation_keyword(query, collections=collection_list(config), limit=config.overfetch,
                                           k1=BM25_K1, b=BM25_B, mean_words=MEAN_WORDS, where=where))
    vector_rows = sorted(vector_rows, key=lambda r: -float(r["similarity"]))[: config.overfetch]
    reps: dict[str, dict[str, Any]] = {}
    for r in vector_rows:
        reps[str(r["id"])] = {"row": r, "vector": max(float(r["similarity"]), 0.0), "keyword": 0.0}
    for r in keyword_rows:
        entry = reps.setdefault(str(r["id"]), {"row": r, "vector": None, "keyword": 0.0})
        entry["keyword"] = float(r["score"] or 0.0)
        if entry["vector"] is None:
            entry["vector"] = _similarity(r, embedding, model)
    if not reps:
        return LegResult()
    best_vector = max((e["vector"] for e in reps.values()), default=0.0) or 1.0
    best_keyword = max((e["keyword"] for e in reps.values()), default=0.0) or 1.0
    for entry in reps.values():
        # As for chunks, the threshold is on vector similarity: below it the vector evidence counts 0.
        vector = entry["vector"] if config.threshold is None or entry["vector"] >= config.threshold else 0.0
        entry["score"] = vector / best_vector + entry["keyword"] / best_keyword
    # Titles and summaries stand for their documents: their best chunks take the score.
    documents = list({e["row"]["document_id"] for e in reps.values() if e["row"]["chunk_id"] is None and e["score"] > 0})
    best: dict[uuid.UUID, list[uuid.UUID]] = {}
    if documents:
        for row in await pg.q.search.best_chunks_of_documents(documents, embedding, model=model,
                                                              per_document=CHUNKS_PER_DOCUMENT):
            best.setdefault(row["document_id"], []).append(row["id"])
    chunks: dict[str, tuple[float, dict[str, Any]]] = {}
    for entry in sorted(reps.values(), key=lambda e: -e["score"]):
        if entry["score"] <= 0:
            continue
        row = entry["row"]
        targets = [row["chunk_id"]] if row["chunk_id"] is not None else best.get(row["document_id"], [])
        for chunk_id in targets:
            key = str(chunk_id)
            if key not in chunks:  # the best representation of the chunk comes first
                chunks[key] = (entry["score"], {"kind": row["kind"], "text": row["content"]})
    hits = sorted(((cid, score, extra) for cid, (score, extra) in chunks.items()), key=lambda h: -h[1])
    return LegResult(hits[: config.overfetch])


def _similarity(row: Any, embedding: np.ndarray, model: str) -> float:
    vector = row["embedding"]
    if vector is None or row["embedding_model"] != model:
        return 0.0
    if hasattr(vector, "to_numpy"):
        vector = vector.to_numpy()
    return max(float(np.dot(np.asarray(vector, dtype=np.float32), embedding)), 0.0)


def annotate(hits: list[Hit], legs_of: list[dict[str, dict[str, Any]]], bests: dict[str, float]) -> None:
    """Add ``matched`` to each hit: the representation that found it, when the extended leg's
    (normalised) evidence is at least that of the chunk's own legs; else ``{"kind": "chunk"}``."""
    for hit, legs in zip(hits, legs_of, strict=True):
        ext = legs.get(LEG)
        own = max((_norm(info, bests.get(leg)) for leg, info in legs.items() if leg in ("vector", "keyword")),
                  default=0.0)
        if ext is not None and ext.get("kind") and _norm(ext, bests.get(LEG)) >= own:
            text = str(ext.get("text") or "")
            hit.extra["matched"] = {"kind": ext["kind"], "text": text[:MATCHED_TEXT_CHARS]}
        else:
            hit.extra["matched"] = {"kind": "chunk"}
        if ext is not None:
            hit.legs.setdefault(LEG, {}).update({"kind": ext.get("kind")})


def _norm(info: dict[str, Any], best: float | None) -> float:
    score = float(info.get("score") or 0.0)
    return score / best if best else 0.0
