"""The ``global`` search mode: community reports ranked for a corpus-level question.

A report's score is its cosine similarity to the query, plus ``KEYWORD_WEIGHT`` x the share of the
query's content words it contains, plus ``RANK_WEIGHT`` x its importance (log of its internal
relation weight, relative to the best candidate's). A question whose words are all generic ("what are
the main themes of this collection?") gets the coarsest level's reports by importance (plus
``GENERIC_SIMILARITY_WEIGHT`` x similarity): one report per main theme, the largest first.

``auto`` routes a query here when :func:`is_global_question` says it is about the corpus as a
whole: a cue such as "main themes", "summarize the collection" or "across the documents", and no
name in it that links to an entity of the searched collections. Ordinary questions (factual
questions about entities, claims) have no cue, so their results never change; a cued question in
collections without communities falls back to the ordinary auto search.
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import time
import uuid
from collections.abc import Sequence
from typing import Any

import numpy as np

from graphrag.communities.build import collection_signatures, community_vector_slot
from graphrag.errors import InvalidInput, one_line
from graphrag.models import Hit, LegReport, SearchResult
from graphrag.search.config import LEGS
from graphrag.search.linking import lucene_query, name_overlap, name_spans

log = logging.getLogger(__name__)

KEYWORD_WEIGHT = 0.3
RANK_WEIGHT = 0.1
GENERIC_SIMILARITY_WEIGHT = 0.2
CANDIDATES = 50
REPORT_ENTITIES = 8
LINK_OVERLAP = 0.8  # how much of an entity's name a query mention must cover to count as linked

_COLLECTION_NOUNS = (r"(?:collection|corpus|dataset|data\s?set|knowledge\s?base|documents?|document\s+set|archive|"
                     r"library|papers|articles|texts|sources|records|files|notes|material)")
_CUES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(pattern, re.I)) for name, pattern in (
    ("themes", r"\b(?:main|major|key|common|recurring|central|overarching|dominant|prevalent|principal|"
               r"general|overall|top|biggest|most\s+(?:common|important|frequent|discussed))\s+"
               r"(?:themes?|topics?|subjects?|ideas|trends?|issues|concepts|threads|areas|findings|patterns)\b"),
    ("themes", r"\b(?:what|which)\s+(?:themes|topics|subjects|trends)\s+(?:are|do|does|run|recur|appear|emerge|come)\b"),
    ("summarize", r"^\s*(?:please\s+|can\s+you\s+|could\s+you\s+)?(?:summari[sz]e|give\s+(?:me\s+)?(?:an?\s+)?"
                  r"(?:summary|overview|outline)|provide\s+(?:an?\s+)?(?:summary|overview))\b"),
    ("summarize", rf"\b(?:summary|overview|outline|summari[sz]e)\s+(?:of\s+)?(?:the\s+|this\s+|these\s+|all\s+"
                  rf"(?:the\s+)?|the\s+whole\s+|the\s+entire\s+)?{_COLLECTION_NOUNS}\b"),
    ("across", rf"\bacross\s+(?:all\s+|the\s+|these\s+|this\s+|every\s+|many\s+|different\s+)*"
               rf"(?:(?:whole|entire)\s+)?{_COLLECTION_NOUNS}\b"),
    ("about", rf"\bwhat\s+(?:is|are)\s+(?:this|the|these)\s+(?:whole\s+|entire\s+)?{_COLLECTION_NOUNS}\s+"
              r"(?:mainly\s+|mostly\s+|all\s+)?about\b"),
    ("about", rf"\bwhat\s+(?:does|do)\s+(?:this|the|these)\s+(?:whole\s+|entire\s+)?{_COLLECTION_NOUNS}\s+"
              r"(?:mainly\s+|mostly\s+)?(?:cover|discuss|contain|describe|deal\s+with|talk\s+about)\b"),
    ("overall", r"\b(?:overall|big|broad|high[-\s]level)\s+(?:picture|view|overview|summary|trends?|patterns?)\b"),
))

# Words of a global question that say nothing about which communities fit it.
_GENERIC = frozenset("""
a about across all also an and any are as at be been by can could did do does each for from give has have how
i in is it its me most of on or our over please provide that the their them these they this those to us was
were what which who why will with would you your main major key common recurring central overarching dominant
prevalent principal general overall top biggest important frequent discussed theme themes topic topics subject
subjects idea ideas trend trends issue issues concept concepts thread threads area areas finding findings pattern
patterns summarize summarise summary overview outline collection corpus dataset data set knowledge base
document documents archive library papers articles texts sources records files notes material whole entire
picture view broad high level mainly mostly cover covers discuss discusses contain contains describe describes
deal talk run recur appear emerge come different many every there
""".split())


def global_cue(query: str) -> str | None:
    """The name of the corpus-level cue ``query`` carries ("themes", "summarize", "across",
    "about", "overall"), or ``None``."""
    for name, pattern in _CUES:
        if pattern.search(query):
            return name
    return None


def is_global_question(query: str, linked_entities: Sequence[str]) -> bool:
    """True when ``query`` asks about the collection as a whole: it carries a corpus-level cue and
    names no entity of the collection (``linked_entities``: the names its mentions linked to)."""
    return not linked_entities and global_cue(query) is not None


def content_terms(query: str) -> list[str]:
    """The query's words that can tell one community from another (generic question words dropped)."""
    words = [w.lower() for w in re.findall(r"\w[\w'-]*", query)]
    return list(dict.fromkeys(w for w in words if len(w) > 2 and w not in _GENERIC and not w.isdigit()))


def _stem(word: str) -> str:
    """A light stem: no plural 's', at most six letters ('wines' ~ 'wine', 'regional' ~ 'regions')."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:6]


def keyword_overlap(terms: Sequence[str], text: str) -> float:
    """Share of ``terms`` that ``text`` contains as a word, compared by light stems."""
    if not terms:
        return 0.0
    stems = {_stem(w) for w in re.findall(r"\w[\w'-]*", text.lower())}
    return sum(1 for t in terms if _stem(t) in stems) / len(terms)


async def linked_entities(router: Any, query: str, collections: tuple[str, ...] | None) -> list[str]:
    """Entity names of the collections that the query's name-like spans link to (the graph leg's
    linking by name, without a parser: the full-text index, then how much of the name the span covers)."""
    mentions = name_spans(query)
    lucene = {m: q for m in mentions if (q := lucene_query(m))}
    if not lucene:
        return []
    rows = await router.neo4j.q.linking.link_fulltext(list(lucene.values()), list(collections) if collections else None,
                                                      k=5)
    by_query = {q: m for m, q in lucene.items()}
    return sorted({h["name"] for row in rows for h in row["hits"]
                   if name_overlap(by_query.get(row["query"], ""), h["name"] or "") >= LINK_OVERLAP})


async def rank_reports(router: Any, query: str, embedding: np.ndarray, model: str,
                       collections: tuple[str, ...] | None, limit: int) -> list[Hit]:
    """The community reports of ``collections`` (all when None) best fitting ``query``, shaped as
    search hits of kind ``community``; ``embedding`` is the query's by ``model``, the collections' model."""
    prop, index = community_vector_slot(model)
    vector = [float(x) for x in embedding]
    scope = list(collections) if collections else None
    terms = content_terms(query)
    k = max(CANDIDATES, limit * 3)
    calls = []
    if not terms:
        calls.append(router.neo4j.q.communities.top(scope, prop, vector, k))
    elif scope is not None:
        calls.append(router.neo4j.q.communities.scan(scope, prop, vector, k))
    else:
        calls.append(router.neo4j.q.communities.by_index(index, vector, k))
    text_query = lucene_query(" ".join(terms))
    if text_query:
        calls.append(router.neo4j.q.communities.by_text(text_query, scope, prop, vector, k))
    found = await asyncio.gather(*calls, return_exceptions=True)
    similarity: dict[str, float] = {}
    for result in found:
        if isinstance(result, BaseException):
            # No communities yet (no index) reads as none; anything else is logged.
            log.info("community candidates unavailable: %s", one_line(result))
            continue
        for r in result:
            similarity[r["id"]] = 2.0 * float(r["score"]) - 1.0  # Neo4j gives (1 + cos) / 2
    if not similarity:
        return []
    details = await router.neo4j.q.communities.details(sorted(similarity), REPORT_ENTITIES)
    details = [d for d in details if scope is None or d["collection"] in scope]
    if not details:
        return []
    best_rank = max(math.log1p(max(float(d["rank"] or 0.0), 0.0)) for d in details) or 1.0
    scored = []
    for d in details:
        overlap = keyword_overlap(terms, f"{d['title']}\n{d['report']}")
        importance = math.log1p(max(float(d["rank"] or 0.0), 0.0)) / best_rank
        if terms:
            score = similarity[d["id"]] + KEYWORD_WEIGHT * overlap + RANK_WEIGHT * importance
        else:  # nothing specific asked: the coarse level's most important communities, one per theme
            score = importance + GENERIC_SIMILARITY_WEIGHT * similarity[d["id"]]
        scored.append((score, d, overlap))
    if terms:
        scored.sort(key=lambda s: (-s[0], s[1]["level"], s[1]["id"]))
    else:
        scored.sort(key=lambda s: (s[1]["level"], -s[0], s[1]["id"]))
    top = scored[:limit]
    signatures = await collection_signatures(router.postgres, sorted({d["collection"] for _, d, _ in top}))
    provenance = await _first_chunks(router.postgres, [d for _, d, _ in top])
    hits = []
    for rank, (score, d, overlap) in enumerate(top, 1):
        chunk = provenance.get(d["id"])
        hits.append(Hit(
            chunk_id=chunk["chunk_id"] if chunk else "",
            document_id=chunk["document_id"] if chunk else "",
            collection=d["collection"],
            source=chunk["source"] if chunk else f"community:{d['id']}",
            title=d["title"],
            content=d["report"],
            score=round(score, 6),
            legs={"global": {"rank": rank, "score": round(similarity[d["id"]], 6),
                             "matched": [t for t in terms if keyword_overlap([t], d["title"] + " " + d["report"])]}},
            entities=[e for e in d["entities"] if e.get("id")],
            extra={"kind": "community", "community": {
                "id": d["id"], "level": d["level"], "size": d["size"], "rank": d["rank"], "parent": d["parent"],
                "stale": d["signature"] != signatures.get(d["collection"]), "generated": d["generated"],
                "computed_at": d["computed_at"], "chunk_ids": list(d["chunk_ids"]),
                "keyword_overlap": round(overlap, 3),
            }},
        ))
    return hits


async def _first_chunks(postgres: Any, details: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    """Each community's first evidence chunk that still exists, with its document (hit provenance)."""
    wanted = {c for d in details for c in d["chunk_ids"]}
    if not wanted:
        return {}
    rows = await postgres.q.documents.chunks_by_id([uuid.UUID(c) for c in sorted(wanted)],
                                sorted({d["collection"] for d in details}))
    found = {str(r["id"]): {"chunk_id": str(r["id"]), "document_id": str(r["document_id"]), "source": r["source"]}
             for r in rows}
    out = {}
    for d in details:
        first = next((found[c] for c in d["chunk_ids"] if c in found), None)
        if first is not None:
            out[d["id"]] = first
    return out


async def route_global(router: Any, text: str, mode: str, options: dict[str, Any],
                       started: float) -> SearchResult | None:
    """The search response of mode ``global``, or for ``auto`` when the query is a corpus-level
    question over collections that have communities; ``None`` lets ``auto`` search as usual."""
    config = router.build_config("vector", **options)  # the same validation as every other mode
    cue = global_cue(text)
    if mode == "global":
        if config.filters:
            raise InvalidInput("filters do not apply to mode 'global' (community reports span documents); "
                               "search another mode to filter")
    elif config.filters or cue is None:
        return None
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    if mode == "auto":
        try:
            linked = await linked_entities(router, text, config.collections)
        except Exception as exc:  # noqa: BLE001 - without linking, auto searches as usual
            log.info("entity linking for global routing unavailable: %s", one_line(exc))
            return None
        timings["link_ms"] = _ms(t0)
        if not is_global_question(text, linked):
            return None
    space = await router.space(config.collections)
    embedding = await router.embed_query(text, space)
    timings["embed_ms"] = _ms(t0)
    t1 = time.perf_counter()
    hits = await rank_reports(router, text, embedding, space.name, config.collections, config.limit)
    if mode == "auto" and not hits:
        return None  # no communities computed here: the ordinary search answers
    took = _ms(t1)
    if config.metadata_only:
        for hit in hits:
            hit.content = ""
    legs = {leg: LegReport("skipped", reason="not part of mode 'global'") for leg in LEGS}
    legs["global"] = LegReport("ok", took, len(hits))
    if mode == "auto":
        legs["global"].reason = f"corpus-level question (cue: {cue}; no linked entity)"
    if not hits:
        legs["global"].note = "no community reports in these collections: run `graphrag communities --collection C`"
    timings["global_ms"] = took
    return SearchResult(query=text, mode="global", took_ms=_ms(started), legs=legs, hits=hits, timings=timings,
                        routed_from=None if mode == "global" else mode)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
