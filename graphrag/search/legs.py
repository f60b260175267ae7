"""The search legs, one async function each: vector, keyword (BM25), graph (entity linking + PPR)."""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import re
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphrag.ingest.extract import normalise_name, title_key
from graphrag.search.config import SearchConfig
from graphrag.search.filters import compile_filter
from graphrag.stores.neo4j import Neo4jStore
from graphrag.stores.postgres import PostgresStore

BM25_K1 = 0.9
BM25_B = 0.4
_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
_LUCENE_WORDS = {"AND", "OR", "NOT", "TO"}
_NUMERIC_LABELS = {"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY", "DATE", "TIME"}


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
    settings = {"hnsw.ef_search": str(ef_search)}
    fetch = config.overfetch
    if config.filters or config.collections:
        settings["hnsw.iterative_scan"] = "relaxed_order"
        # Relaxed order streams rows as the scan finds them, so the first `overfetch` rows can miss
        # closer ones found a little later: take the scan's whole first batch (ef_search rows, no
        # extra index work), sort, then cut. On HotpotQA beside larger collections this restored
        # the exact top 50 (vector nDCG@10 0.785 -> 0.795).
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


async def keyword_leg(pg: PostgresStore, query: str, config: SearchConfig) -> LegResult:
    """BM25 (OR semantics, IDF from lexeme statistics) over the GIN-indexed tsvector."""
    compiled = compile_filter(config.filters, first_param=6)
    rows = await pg.fetch_filtered("search", "keyword_leg", compiled.sql, query, _collections(config),
                                   config.overfetch, BM25_K1, BM25_B, *compiled.params)
    return LegResult([(str(r["id"]), float(r["score"]), {"matched": sorted(set(r["matched"]))}) for r in rows])


async def keyword_scores(pg: PostgresStore, query: str, chunk_ids: list[str], config: SearchConfig) -> dict[str, float]:
    """The BM25 scores :func:`keyword_leg` would give these chunks (0 for those without a query term)."""
    if not chunk_ids:
        return {}
    rows = await pg.fetch("search", "keyword_scores", query, _collections(config),
                          [uuid.UUID(i) for i in chunk_ids], BM25_K1, BM25_B)
    return {str(r["id"]): float(r["score"] or 0.0) for r in rows}


def lucene_query(text: str) -> str:
    """A Lucene query that matches ``text``'s words (any of them), the whole phrase boosted."""
    words = [w for w in re.findall(r"\w[\w'.-]*", text) if w.upper() not in _LUCENE_WORDS]
    escaped = [_LUCENE_SPECIAL.sub(r"\\\1", w) for w in words]
    if not escaped:
        return ""
    phrase = " ".join(escaped)
    return f'"{phrase}"^3 {phrase}' if len(escaped) > 1 else phrase


# Pipes a query's mentions do not need (entities and part-of-speech tags do not depend on them).
_QUERY_SKIP_PIPES = ("parser", "lemmatizer")


def query_mentions(nlp: Any, query: str) -> list[str]:
    """Names in the query worth linking to entities: named entities and runs of proper nouns."""
    skip = [p for p in _QUERY_SKIP_PIPES if p in getattr(nlp, "pipe_names", ())]
    doc = nlp(query, disable=skip) if skip else nlp(query)
    found: list[str] = [ent.text for ent in doc.ents if ent.label_ not in _NUMERIC_LABELS]
    run: list[str] = []
    for token in doc:
        if token.pos_ == "PROPN" or (run and token.lower_ in ("of", "the", "&", "de", "von", "van")):
            run.append(token.text)
        else:
            if run:
                found.append(" ".join(run))
            run = []
    if run:
        found.append(" ".join(run))
    seen: set[str] = set()
    out = []
    for text in found:
        text = text.strip(" \"'“”‘’")
        key = text.lower()
        if key and key not in seen and len(key) > 1:
            seen.add(key)
            out.append(text)
    return out[:12]


def _tokens(text: str) -> set[str]:
    return set(re.findall(r"\w+", normalise_name(text)))


def name_overlap(mention: str, name: str) -> float:
    """How well an entity name matches a query mention: Jaccard overlap of their normalised tokens,
    or, for names of two words or more, the share of the name the mention contains ("Killing Pablo"
    in "Killing Pablo: The Hunt for ..."); one-word names are contained in long mentions by chance."""
    a, b = _tokens(mention), _tokens(name)
    if not a or not b:
        return 0.0
    common = len(a & b)
    contained = common / len(b) if len(b) >= 2 and common == len(b) else 0.0
    return max(common / len(a | b), 0.8 * contained)


def personalized_pagerank(nodes: list[str], edges: dict[tuple[str, str], float], seeds: dict[str, float],
                          damp: dict[str, float], alpha: float, iterations: int = 30) -> dict[str, float]:
    """PPR on an undirected weighted graph; walks into a node are scaled by its damping factor
    (hub entities pass on little), and restarts go to the seeds in proportion to their scores."""
    index = {n: i for i, n in enumerate(nodes)}
    size = len(nodes)
    if size == 0:
        return {}
    matrix = np.zeros((size, size))
    for (a, b), w in edges.items():
        i, j = index[a], index[b]
        matrix[j, i] += w * damp.get(b, 1.0)
        matrix[i, j] += w * damp.get(a, 1.0)
    col = matrix.sum(axis=0)
    col[col == 0] = 1.0
    transition = matrix / col
    restart = np.array([seeds.get(n, 0.0) for n in nodes])
    restart = restart / restart.sum() if restart.sum() > 0 else np.full(size, 1.0 / size)
    rank = restart.copy()
    for _ in range(iterations):
        rank = alpha * restart + (1 - alpha) * transition @ rank
    return {n: float(rank[index[n]]) for n in nodes}


async def graph_leg(pg: PostgresStore, neo4j: Neo4jStore, nlp: Any, query: str,
                    embedding: np.ndarray | Awaitable[np.ndarray], config: SearchConfig, model: str,
                    embed: Callable[[list[str]], Awaitable[np.ndarray]], *, dim: int | None = None,
                    entity_index: str = "entity_embedding") -> LegResult:
    """Link the query to entities, expand up to ``graph_hops`` over RELATED_TO, rank entities with
    personalised PageRank (hubs damped by an IDF-like factor), and score chunks through MENTIONS.
    Every chunk and relation is re-checked against collections and filters in PostgreSQL. Beside
    the walk, documents named after what the query names come back as ``named`` (a second ranking).

    ``embedding`` may be an awaitable (the router's query embedding still being computed): only the
    passage feedback needs it, so the query parse and the entity linking do not wait for it."""
    collections = _collections(config)
    mentions = await asyncio.to_thread(query_mentions, nlp, query)
    lucene = {m: q for m in mentions if (q := lucene_query(m))}
    prf_config = config.model_copy(update={"overfetch": config.graph_prf, "threshold": None})

    by_query = {q: m for m, q in lucene.items()}

    async def link_text() -> list[tuple[str, dict[str, Any], float]]:
        """(mention, entity hit, name overlap) for each full-text candidate of each mention."""
        if not lucene:
            return []
        rows = await neo4j.run("search", "link_entities_fulltext", queries=list(lucene.values()),
                               collections=collections, k=8)
        # Lucene finds candidates; how much of the name the mention covers decides the link.
        return [(mention, h, name_overlap(mention, h["name"] or ""))
                for row in rows for mention in (by_query.get(row["query"], ""),) for h in row["hits"]]

    async def link_vectors(text_task: Awaitable[list[tuple[str, dict[str, Any], float]]]) -> list[dict[str, Any]]:
        # Names the full-text index matched exactly need no fuzzy link: only the others are embedded
        # (a model call saved on most queries; the full-text lookup is faster than the model anyway).
        exact = {mention for mention, _, overlap in await text_task if overlap >= 1.0}
        rest = [m for m in mentions if m not in exact]
        if not rest:
            return []
        vectors = await embed(rest)
        return await neo4j.run("search", "link_mentions_vector", k=3, embeddings=[v.tolist() for v in vectors],
                               collections=collections, min_score=0.8, index=entity_index)

    async def feedback() -> tuple[LegResult, list[dict[str, Any]]]:
        # The entities of the top passages, fetched as soon as those passages are known.
        if not config.graph_prf:
            return LegResult(), []
        # Shielded: a timeout of this leg must not cancel the embedding the other legs share.
        query_vector = await asyncio.shield(embedding) if inspect.isawaitable(embedding) else embedding
        found = await vector_leg(pg, query_vector, prf_config, model, dim)
        rows = await neo4j.run("search", "chunk_entities", chunk_ids=[h[0] for h in found.hits]) if found.hits else []
        return found, rows

    async def named_documents() -> list[dict[str, Any]]:
        # Documents whose title is what a mention names ("Who lived longer, Edward Albee or J. M.
        # Barrie?" -> the pages "Edward Albee" and "J. M. Barrie"), found by the Document title index.
        norms = list(dict.fromkeys(k for m in mentions if (k := title_key(m))))
        if not norms:
            return []
        return await neo4j.run("search", "named_documents", norms=norms, collections=collections,
                               limit=2 * len(norms) + 2)

    text_task = asyncio.ensure_future(link_text())
    try:
        text_links, vector_rows, total_rows, (prf, prf_rows), named_rows = await asyncio.gather(
            text_task, link_vectors(text_task), pg.fetch("search", "collection_chunk_count", collections),
            feedback(), named_documents())
    finally:
        text_task.cancel()  # a no-op once done; stops the lookup when the leg times out
    total_chunks = max(int(total_rows[0][0]) if total_rows else 1, 1)
    info: dict[str, dict[str, Any]] = {}
    seeds: dict[str, float] = {}
    for _, h, overlap in text_links:
        if overlap >= 0.5 and h["id"] is not None:
            info[h["id"]] = h
            seeds[h["id"]] = max(seeds.get(h["id"], 0.0), overlap)
    for r in vector_rows:
        if r["id"] is None:
            continue  # deleted by a concurrent write
        info.setdefault(r["id"], dict(r))
        seeds[r["id"]] = max(seeds.get(r["id"], 0.0), float(r["score"]))
    # Confidence: did the query itself name entities we know? Without any, the walk starts from
    # passage feedback alone and mostly echoes the vector leg, so fusion should lean on it less.
    confidence = max(0.25, min(1.0, max(seeds.values(), default=0.0)))
    # Pseudo-relevance feedback: the entities of the passages most similar to the query are seeds
    # too (HippoRAG 2 links queries to passages as well as to entities), which lets the walk reach
    # bridge entities that the question never names.
    if prf.hits:
        for rank_weight, (chunk_id, similarity, _) in zip(_prf_weights(len(prf.hits)), prf.hits, strict=True):
            for r in prf_rows:
                if r["chunk_id"] == chunk_id and r["id"] is not None:
                    info.setdefault(r["id"], {"id": r["id"], "name": r["name"], "label": r["label"],
                                              "mentions": r.get("mentions")})
                    seeds[r["id"]] = max(seeds.get(r["id"], 0.0), config.graph_prf_weight * rank_weight * similarity)

    def idf(entity: str) -> float:
        mentions_n = int(info.get(entity, {}).get("mentions") or 1)
        return math.log((total_chunks + 1) / (mentions_n + 0.5)) / math.log(total_chunks + 1.5)

    ranked_seeds = sorted(seeds, key=lambda e: -seeds[e] * idf(e))[: config.graph_seeds + 2 * config.graph_prf]
    seeds = {e: seeds[e] * idf(e) for e in ranked_seeds}
    if not seeds:
        named = await _named_hits(pg, named_rows, config)
        return LegResult(context={"entities": [], "relations": []}, confidence=0.0 if not named else 1.0,
                         named=named)
    edges: dict[tuple[str, str], float] = {}
    frontier = list(seeds)
    visited = set(frontier)
    for hop in range(config.graph_hops):
        if not frontier:
            break
        rows = await neo4j.run("search", "neighbours", ids=frontier, per_node=25 if hop == 0 else 8)
        nxt = []
        for row in rows:
            for n_id, n_mentions, n_weight in row["ns"]:
                if n_id is None or row["id"] is None:
                    continue  # a node deleted by a concurrent write while this read ran
                info.setdefault(n_id, {"id": n_id, "mentions": n_mentions})
                a, b = sorted((row["id"], n_id))
                edges[(a, b)] = math.log1p(float(n_weight or 1))
                if n_id not in visited:
                    visited.add(n_id)
                    nxt.append(n_id)
        frontier = nxt[:100]
    nodes = sorted(visited)
    damp = {n: max(idf(n), 0.05) for n in nodes}
    ppr = personalized_pagerank(nodes, edges, seeds, damp, config.ppr_alpha)
    top_entities = sorted(ppr, key=lambda n: -ppr[n] * damp[n])[:30]
    # Chunks are scored in Neo4j (only the best travel back); the relations shown as context, among
    # the top entities, are read beside them.
    weighted = [{"id": e, "w": ppr[e] * damp[e]} for e in sorted(top_entities, key=lambda n: -ppr[n])]
    chunk_rows, relation_rows = await asyncio.gather(
        neo4j.run("search", "score_chunks", entities=weighted, per_entity=40, scan=config.graph_mention_scan,
                  title_boost=config.graph_title_boost, limit=config.overfetch * 2),
        neo4j.run("search", "context_relations", ids=top_entities[:15], limit=20))
    scores = {row["chunk"]: float(row["score"]) for row in chunk_rows if row["chunk"] is not None}
    via = {row["chunk"]: row["via"] for row in chunk_rows}
    ranked = sorted(scores, key=lambda c: -scores[c])
    evidence_ids = {e for r in relation_rows for e in (r["evidence"] or [])}
    named_ids = {r["chunk"] for r in named_rows if r["chunk"] is not None}
    rows = await fetch_rows(pg, list(set(ranked) | evidence_ids | named_ids), config)
    allowed = set(rows)
    hits = []
    for chunk_id in ranked:
        if chunk_id in allowed and len(hits) < config.overfetch:
            ents = [{"id": e, "name": name, "label": label} for e, name, label in via[chunk_id][:5]]
            hits.append((chunk_id, scores[chunk_id], {"entities": ents}))
    relations = []
    for r in relation_rows:
        evidence = next((e for e in (r["evidence"] or []) if e in allowed), None)
        if evidence is None:
            continue  # every piece of evidence is outside the request's scope
        predicates = r["predicates"] or []
        relations.append({"source": r["source"], "type": predicates[0] if predicates else "RELATED_TO",
                          "target": r["target"], "evidence_chunk_id": evidence})
    linked = [{"id": e, "name": info[e].get("name"), "label": info[e].get("label"), "score": round(seeds[e], 4)}
              for e in seeds]
    named = _named(named_rows, allowed)
    kept = {h[0] for h in hits} | {h[0] for h in named}
    return LegResult(hits, {"entities": linked, "relations": relations}, confidence,
                     rows={cid: row for cid, row in rows.items() if cid in kept}, named=named)


def _named(named_rows: list[dict[str, Any]], allowed: set[str]) -> list[tuple[str, float, dict[str, Any]]]:
    """The named documents' first chunks that passed the collection and filter check, in query order."""
    out: list[tuple[str, float, dict[str, Any]]] = []
    for r in named_rows:
        if r["chunk"] in allowed and all(r["chunk"] != h[0] for h in out):
            out.append((r["chunk"], 1.0, {"title": r["title"]}))
    return out


async def _named_hits(pg: PostgresStore, named_rows: list[dict[str, Any]],
                      config: SearchConfig) -> list[tuple[str, float, dict[str, Any]]]:
    ids = [r["chunk"] for r in named_rows if r["chunk"] is not None]
    return _named(named_rows, set(await fetch_rows(pg, ids, config))) if ids else []


def _prf_weights(n: int) -> list[float]:
    return [1.0 / (1 + i) for i in range(n)]


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
