"""The graph leg: one Neo4j statement (``cypher/graph_leg.cypher``) links the query to entities, walks
two hops from them and scores chunks; a PostgreSQL check of the hits follows only when the request
has filters (collections are checked in the statement itself)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Sequence
from typing import Any

from graphrag.search.config import SearchConfig
from graphrag.search.legs import LegResult, collection_list, fetch_rows
from graphrag.search.linking import MAX_GRAMS, Span, letter_grams, name_grams, query_spans
from graphrag.stores.neo4j import Neo4jStore
from graphrag.stores.postgres import PostgresStore

#: Full-text candidates of one span that name overlap then judges.
PER_SPAN = 8
#: Neighbours a seed spreads to, and a node of the first hop.
PER_FIRST, PER_NEXT = 25, 8
#: Nodes of the first hop that spread further.
FRONTIER = 100
#: Entities whose chunks are scored, and chunks read per entity (from its chunk list).
TOP_ENTITIES, PER_ENTITY = 30, 40
#: Entities among which the context relations are read, and how many relations.
CONTEXT_ENTITIES, RELATION_LIMIT = 15, 20


def chunk_limit(config: SearchConfig) -> int:
    """Chunks the statement returns: the leg's ``overfetch``, twice that when filters may drop some in
    PostgreSQL afterwards. Fewer chunks also let the statement prune more before its title check."""
    return config.overfetch * 2 if config.filters else config.overfetch


def _prf_weights(n: int) -> list[float]:
    return [1.0 / (1 + i) for i in range(n)]


async def _value(value: Any) -> Any:
    # Shielded: a timeout of this leg must not cancel work that the rest of the search shares.
    return await asyncio.shield(value) if inspect.isawaitable(value) else value


def graph_parameters(query: str, config: SearchConfig, *, total_chunks: int,
                     feedback: list[tuple[str, float]]) -> dict[str, Any]:
    """The fields of ``graph_leg``'s one parameter, ``$leg``, for this query and config (pure: no store is
    asked). Exact-name
    n-grams come from the name-like spans, or from the whole query when it has none (lower case):
    beside spans, the query's other words mostly add common words that happen to be entity names."""
    spans = query_spans(query)
    titles = list(dict.fromkeys(s.title_key for s in spans if s.title_key))
    prf = [{"chunk": chunk_id, "w": config.graph_prf_weight * rank_weight * relative}
           for rank_weight, (chunk_id, relative) in zip(_prf_weights(len(feedback)), feedback, strict=True)]
    return {
        "spans": [{"q": s.lucene, "toks": list(dict.fromkeys(s.tokens))} for s in spans],
        "grams": grams(query, spans),
        "prf": prf,
        "titles": titles,
        "collections": collection_list(config),
        "total": max(int(total_chunks), 1),
        "max_seeds": config.graph_seeds + 2 * config.graph_prf,
        "per_span": PER_SPAN, "per_first": PER_FIRST, "per_next": PER_NEXT if config.graph_hops >= 2 else 0,
        "frontier": FRONTIER if config.graph_hops >= 2 else 0,
        "alpha": config.ppr_alpha, "top_entities": TOP_ENTITIES, "per_entity": PER_ENTITY,
        "title_boost": config.graph_title_boost,
        "limit": chunk_limit(config), "context_entities": CONTEXT_ENTITIES, "relation_limit": RELATION_LIMIT,
        "named_limit": 2 * len(titles) + 2,
    }


def grams(query: str, spans: list[Span]) -> list[dict[str, Any]]:
    """Exact-name n-grams of the spans (of the query without spans), then, where the list has room,
    the query's one-letter names ("Python and R"; only a glossary gives an entity such a name)."""
    texts = [s.text for s in spans] if spans else [query]
    found = name_grams(texts)
    letters = letter_grams(query, len(spans), texts) if spans else letter_grams(query, 0)
    return found + letters[:max(0, MAX_GRAMS - len(found))]


async def plan_graph_leg(neo4j: Neo4jStore, config: SearchConfig) -> None:
    """Have Neo4j plan the graph statement ahead of the first search (planning it takes seconds, which
    would count against that search's leg timeout): a run with nothing to link, which reads nothing."""
    await neo4j.q.search.graph_leg(graph_parameters("", config, total_chunks=1, feedback=[]))


async def graph_leg(pg: PostgresStore, neo4j: Neo4jStore, query: str, config: SearchConfig, *,
                    total_chunks: int | Awaitable[int],
                    feedback: Sequence[tuple[str, float]] | Awaitable[list[tuple[str, float]]] = ()) -> LegResult:
    """Link the query to entities (name-like spans through the entity-name full-text index, or the
    n-grams of a query without such spans as exact names, and the entities of the ``feedback``
    passages: the keyword leg's top hits, BM25 relative to the best), walk two hops from them, score chunks through MENTIONS:
    all in one Neo4j statement. Beside the walk, documents named after what the query names come
    back as ``named`` (a second ranking). With filters, the hits, relations and named documents are
    checked in PostgreSQL (one more round trip); without, the router's row fetch drops chunks that
    are gone, and collections are checked in the statement.

    ``total_chunks`` and ``feedback`` may be awaitables (shared with the rest of the search); the
    statement waits for them."""
    total, passages = await asyncio.gather(_value(total_chunks), _value(feedback))
    params = graph_parameters(query, config, total_chunks=total, feedback=list(passages)[: config.graph_prf])
    record = await neo4j.q.search.graph_leg(params)
    chunks = [(c, float(score), via) for c, score, via in record["chunks"] if c is not None]
    named_rows = [(c, title) for c, title in record["named"] if c is not None]
    rows: dict[str, dict[str, Any]] = {}
    if config.filters:
        cited = {e for r in record["relations"] for e in (r[3] or [])}
        rows = await fetch_rows(pg, list({c for c, _, _ in chunks} | cited | {c for c, _ in named_rows}), config)
        chunks = [c for c in chunks if c[0] in rows]
        named_rows = [n for n in named_rows if n[0] in rows]
    walked = [{"id": e, "name": name, "label": label} for e, _, name, label in record["walked"]]
    hits = [(c, score, {"entities": [walked[i] for i in via[:5]]}) for c, score, via in chunks[: config.overfetch]]
    relations = []
    for source, target, predicates, evidence_ids in record["relations"]:
        evidence: str | None = next((str(e) for e in (evidence_ids or []) if not config.filters or e in rows), None)
        if evidence is None:
            continue  # every piece of evidence is outside the request's scope
        relations.append({"source": source, "type": (predicates or ["RELATED_TO"])[0], "target": target,
                          "evidence_chunk_id": evidence})
    named: list[tuple[str, float, dict[str, Any]]] = []
    for chunk_id, title in named_rows:
        if all(chunk_id != h[0] for h in named):
            named.append((chunk_id, 1.0, {"title": title}))
    linked = [{"id": e, "name": name, "label": label, "score": round(float(seed), 4)}
              for e, name, label, seed, _ in record["linked"]]
    # Confidence: did the query itself name entities we know? Without any, the walk starts from
    # passage feedback alone and mostly echoes the keyword leg, so fusion should lean on it less.
    if not linked:
        confidence = 0.0 if not named else 1.0
    else:
        confidence = max(0.25, min(1.0, float(record["named_link"] or 0.0)))
    kept = {h[0] for h in hits} | {h[0] for h in named}
    return LegResult(hits, {"entities": linked, "relations": relations}, confidence,
                     rows={cid: row for cid, row in rows.items() if cid in kept}, named=named)


def passages(keyword: LegResult, n: int) -> list[tuple[str, float]]:
    """The graph leg's passage feedback from keyword hits: the top ``n``, each scored by its BM25 score
    relative to the best one's (in (0, 1], the scale of the entity links it competes with)."""
    top = keyword.hits[:n]
    best = max((score for _, score, _ in top), default=0.0)
    return [(chunk_id, score / best) for chunk_id, score, _ in top] if best > 0 else []
