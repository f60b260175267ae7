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
from typing import Any

from graphrag.errors import InvalidInput
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


async def apply(postgres: Any, response: dict[str, Any], *, highlight: bool = False,
                full_document_threshold: float | None = None, token_limit: int = DEFAULT_TOKEN_LIMIT) -> None:
    """Apply the result options to a search response in place."""
    if full_document_threshold is not None:
        response["results"] = await full_documents(postgres, response["results"], full_document_threshold,
                                                   token_limit)
    if highlight:
        await add_highlights(postgres, response)


async def full_documents(postgres: Any, results: list[dict[str, Any]], threshold: float,
                         token_limit: int) -> list[dict[str, Any]]:
    """The results with each hit at or above ``threshold`` holding its document's text (best hit
    first, until ``token_limit`` tokens are given out); hits whose chunk is in such a text fold into it."""
    strong = [h for h in results if h["score"] >= threshold and h.get("content")]
    if not strong:
        return results
    seen: dict[str, dict[str, Any]] = {}
    for hit in strong:
        seen.setdefault(hit["document_id"], hit)
    rows = await postgres.q.search.document_windows([uuid.UUID(d) for d in seen],
                                                    [int(h["chunk_index"]) for h in seen.values()], token_limit)
    pieces: dict[str, list[Piece]] = {}
    totals: dict[str, int] = {}
    for r in rows:
        doc = str(r["document_id"])
        pieces.setdefault(doc, []).append(Piece(r["chunk_index"], r["content"], r["char_start"], r["char_end"],
                                                int(r["token_count"] or 0)))
        totals[doc] = int(r["total"])
    left = token_limit
    expanded: dict[str, tuple[dict[str, Any], set[int]]] = {}
    out: list[dict[str, Any]] = []
    for hit in results:
        doc = hit["document_id"]
        if doc in expanded:
            whole, indexes = expanded[doc]
            if hit.get("chunk_index") in indexes:
                whole.setdefault("folded_chunk_ids", []).append(hit["chunk_id"])
                continue
        elif seen.get(doc) is hit and doc in pieces:
            parts = pieces[doc]
            at = next((i for i, p in enumerate(parts) if p.index == hit["chunk_index"]), None)
            found = window(parts, at, left, complete=len(parts) == totals[doc]) if at is not None else None
            if found is not None:
                left -= found.tokens
                hit = {**hit, "content": found.text, "full_document": True, "truncated": not found.whole,
                       "document_tokens": found.tokens, "content_char_start": found.char_start,
                       "content_char_end": found.char_end}
                expanded[doc] = (hit, {p.index for p in parts[found.lo:found.hi + 1]})
        out.append(hit)
    return out


async def add_highlights(postgres: Any, response: dict[str, Any]) -> None:
    """Give every hit ``highlights``, ``snippet``, ``snippet_start`` and ``snippet_end``."""
    results = response["results"]
    if not results:
        return
    terms = hl.query_words(response["query"])
    linked = [e.get("name") for e in (response.get("graph_context") or {}).get("entities", [])]
    initials = {hl.initial(t) for t in terms}
    # The words to stem, per collection (each has its own text-search configuration).
    wanted: dict[tuple[str, str], None] = {}
    for hit in results:
        for term in terms:
            wanted[(hit["collection"], term.lower())] = None
        for _, _, word in hl.words(hit.get("content") or ""):
            if hl.initial(word) in initials:
                wanted[(hit["collection"], word)] = None
    stems: dict[str, dict[str, list[str]]] = {}
    if wanted and terms:
        rows = await postgres.q.search.word_lexemes([c for c, _ in wanted], [w for _, w in wanted])
        for r in rows:
            stems.setdefault(r["collection"], {})[r["word"]] = list(r["lexemes"] or [])
    for hit in results:
        lexemes_of = stems.get(hit["collection"], {})
        query_terms: dict[str, str] = {}
        for term in terms:
            for lexeme in lexemes_of.get(term.lower(), ()):
                query_terms.setdefault(lexeme, term)
        via = [e.get("name") for e in (hit.get("legs", {}).get("graph", {}).get("entities") or [])]
        names = [n for n in _names(linked, via) if _named_in_query(n, terms, lexemes_of, query_terms)]
        hit.update(hl.highlight(hit.get("content") or "", lexemes_of, query_terms, names))


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
