"""Result options applied after fusion: full documents for strong hits, and highlights.

- ``full_document_threshold``: a hit scoring at or above it carries its document's whole text
  (:mod:`graphrag.search.wholedoc`) in ``content``, within ``token_limit`` tokens for the whole
  response; later hits whose chunk that text already holds are folded into it.
- ``highlight``: each hit gets ``highlights`` (offsets of query terms, stemmed as its collection's
  text-search configuration stems them, and of the entity names the graph leg linked to the query's
  words) and a ``snippet`` (:mod:`graphrag.search.highlight`). One PostgreSQL round trip stems all
  the words.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from graphrag.errors import InvalidInput
from graphrag.models import Hit, SearchResult
from graphrag.search import highlight as hl
from graphrag.search.wholedoc import Piece, window

log = logging.getLogger(__name__)

DEFAULT_TOKEN_LIMIT = 5000
MAX_TOKEN_LIMIT = 1_000_000


def options(highlight: Any = False, full_document_threshold: Any = None,
            token_limit: Any = DEFAULT_TOKEN_LIMIT) -> dict[str, Any]:
    """The result options, checked (:class:`InvalidInput` naming a bad one)."""
    if not isinstance(highlight, bool):
        raise InvalidInput(f"highlight must be true or false, got {highlight!r}")
    if full_document_threshold is not None and (
            isinstance(full_document_threshold, bool) or not isinstance(full_document_threshold, (int, float))
            or not math.isfinite(full_document_threshold)):
        raise InvalidInput(f"full_document_threshold must be a number, got {full_document_threshold!r}")
    if token_limit is None:
        token_limit = DEFAULT_TOKEN_LIMIT
    if isinstance(token_limit, bool) or not isinstance(token_limit, int) or not 1 <= token_limit <= MAX_TOKEN_LIMIT:
        raise InvalidInput(f"token_limit must be an integer from 1 to {MAX_TOKEN_LIMIT}, got {token_limit!r}")
    return {"highlight": highlight, "full_document_threshold": full_document_threshold, "token_limit": token_limit}


async def apply(postgres: Any, result: SearchResult, *, highlight: bool = False,
                full_document_threshold: float | None = None, token_limit: int = DEFAULT_TOKEN_LIMIT) -> None:
    """Apply the result options to a search result in place."""
    if full_document_threshold is not None:
        result.hits = await full_documents(postgres, result.hits, full_document_threshold, token_limit)
    if highlight:
        await add_highlights(postgres, result)


async def full_documents(postgres: Any, hits: list[Hit], threshold: float, token_limit: int) -> list[Hit]:
    """The hits with each one at or above ``threshold`` holding its document's text (best hit
    first, until ``token_limit`` tokens are given out); hits whose chunk is in such a text fold into it."""
    strong = [h for h in hits if h.score >= threshold and h.content and h.chunk_index is not None]
    if not strong:
        return hits
    seen: dict[str, Hit] = {}
    for hit in strong:
        seen.setdefault(hit.document_id, hit)
    rows = await postgres.q.search.document_windows([uuid.UUID(d) for d in seen],
                                                    [int(h.chunk_index or 0) for h in seen.values()], token_limit)
    pieces: dict[str, list[Piece]] = {}
    totals: dict[str, int] = {}
    for r in rows:
        doc = str(r["document_id"])
        pieces.setdefault(doc, []).append(Piece(r["chunk_index"], r["content"], r["char_start"], r["char_end"],
                                                int(r["token_count"] or 0)))
        totals[doc] = int(r["total"])
    left = token_limit
    expanded: dict[str, tuple[Hit, set[int]]] = {}
    out: list[Hit] = []
    for hit in hits:
        doc = hit.document_id
        if doc in expanded:
            whole, indexes = expanded[doc]
            if hit.chunk_index in indexes:
                whole.extra.setdefault("folded_chunk_ids", []).append(hit.chunk_id)
                continue
        elif seen.get(doc) is hit and doc in pieces:
            parts = pieces[doc]
            at = next((i for i, p in enumerate(parts) if p.index == hit.chunk_index), None)
            found = window(parts, at, left, complete=len(parts) == totals[doc]) if at is not None else None
            if found is not None:
                left -= found.tokens
                hit = replace(hit, content=found.text, extra={
                    **hit.extra, "full_document": True, "truncated": not found.whole, "document_tokens": found.tokens,
                    "content_char_start": found.char_start, "content_char_end": found.char_end})
                expanded[doc] = (hit, {p.index for p in parts[found.lo:found.hi + 1]})
        out.append(hit)
    return out


async def add_highlights(postgres: Any, result: SearchResult) -> None:
    """Give every hit ``highlights``, ``snippet``, ``snippet_start`` and ``snippet_end``."""
    hits = result.hits
    if not hits:
        return
    terms = hl.query_words(result.query)
    linked = [e.get("name") for e in (result.graph_context or {}).get("entities", [])]
    initials = {hl.initial(t) for t in terms}
    # The words to stem, per collection (each has its own text-search configuration).
    wanted: dict[tuple[str, str], None] = {}
    for hit in hits:
        for term in terms:
            wanted[(hit.collection, term.lower())] = None
        for _, _, word in hl.words(hit.content or ""):
            if hl.initial(word) in initials:
                wanted[(hit.collection, word)] = None
    stems: dict[str, dict[str, list[str]]] = {}
    if wanted and terms:
        rows = await postgres.q.search.word_lexemes([c for c, _ in wanted], [w for _, w in wanted])
        for r in rows:
            stems.setdefault(r["collection"], {})[r["word"]] = list(r["lexemes"] or [])
    for hit in hits:
        lexemes_of = stems.get(hit.collection, {})
        query_terms: dict[str, str] = {}
        for term in terms:
            for lexeme in lexemes_of.get(term.lower(), ()):
                query_terms.setdefault(lexeme, term)
        via = [e.get("name") for e in (hit.legs.get("graph", {}).get("entities") or [])]
        names = [n for n in _names(linked, via) if _named_in_query(n, terms, lexemes_of, query_terms)]
        hit.extra.update(hl.highlight(hit.content or "", lexemes_of, query_terms, names))


def _names(*groups: Iterable[Any]) -> list[str]:
    return [str(n) for group in groups for n in group if isinstance(n, str) and len(n.strip()) > 1]


def _named_in_query(name: str, terms: list[str], lexemes_of: dict[str, list[str]], query_terms: dict[str, str]) -> bool:
    """Whether the query names the entity: a word of the name is a query word, or a form of one.
    (The graph leg also seeds its walk with the entities of the best passages; those are not
    what the query asked for, so they are not highlighted.)"""
    asked = {t.lower() for t in terms}
    for _, _, word in hl.words(name):
        if word in asked or any(lexeme in query_terms for lexeme in lexemes_of.get(word, ())):
            return True
    return False
