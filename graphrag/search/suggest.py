"""Search-as-you-type: ranked completions of a typed prefix from the collections' entity names,
document titles and key phrases (the ``suggest_terms`` table, kept in step by ingestion).

One statement of bounded index-only scans (``sql/suggest.sql`` ``complete``); ranking and
de-duplication of the few candidates happen here.
"""

from __future__ import annotations

import math
import time
from typing import Any

from graphrag.errors import InvalidInput
from graphrag.ingest.terms import MAX_TERM_CHARS, fold
from graphrag.models import is_collection_name

MAX_LIMIT = 50
#: A small prior per kind: on equal document counts a title (a document to open) comes before an
#: entity name, and both before a key phrase.
KIND_PRIOR = {"title": 0.3, "entity": 0.2, "phrase": 0.0}
EXACT_BONUS = 1.0  # the whole typed text is a term: it is what was meant
CANDIDATES_PER_RESULT = 4  # rows read per suggestion returned: enough to fill the list after de-duplication
#: A prefix matching more terms than this is "common": its completions come from the collection's
#: WALK_TERMS most used terms (and the first RANGE_CAP matches), so a short prefix stays as cheap as a
#: long one; below it the answer is exact.
RANGE_CAP = 2000
WALK_TERMS = 5000


def prefix_range(prefix: str) -> tuple[str, str]:
    """``(low, high)`` such that a string starts with ``prefix`` exactly when ``low <= s < high``
    in byte order (the "C" collation): ``high`` is ``prefix`` with its last character incremented."""
    if not prefix:
        raise ValueError("empty prefix")
    last = ord(prefix[-1]) + 1
    if 0xD800 <= last <= 0xDFFF:  # surrogates cannot be sent; the next character is U+E000
        last = 0xE000
    if last > 0x10FFFF:
        return prefix, prefix[:-1] + "\U0010ffff" + "\U0010ffff"
    return prefix, prefix[:-1] + chr(last)


def score(documents: int, mentions: int, kind: str, exact: bool) -> float:
    """How likely a completion is meant: documents it occurs in (log), its kind, an exact match."""
    per_doc = mentions / documents if documents else 0.0
    return round(math.log1p(documents) + 0.1 * math.log1p(per_doc) + KIND_PRIOR.get(kind, 0.0)
                 + (EXACT_BONUS if exact else 0.0), 4)


def rank(rows: list[dict[str, Any]], prefix: str, limit: int) -> list[dict[str, Any]]:
    """Suggestions from candidate rows: one per folded text (its kinds and collections merged, the
    best-scored kind shown), best first."""
    merged: dict[str, dict[str, Any]] = {}
    for r in rows:
        item = {"text": r["display"], "kind": r["kind"], "documents": int(r["documents"]),
                "score": score(int(r["documents"]), int(r["mentions"]), r["kind"], r["norm"] == prefix)}
        found = merged.get(r["norm"])
        if found is None:
            item["collections"] = [r["collection"]]
            merged[r["norm"]] = item
            continue
        if r["collection"] not in found["collections"]:
            found["collections"].append(r["collection"])
        if item["score"] > found["score"]:
            found.update(text=item["text"], kind=item["kind"], score=item["score"])
        found["documents"] = max(found["documents"], item["documents"])
    out = sorted(merged.values(), key=lambda s: (-s["score"], len(s["text"]), s["text"]))
    return out[:limit]


def check(query: Any, limit: Any, what: str = "q") -> tuple[str, int]:
    """The folded prefix and the limit, or :class:`InvalidInput` naming what is wrong (``what``: the
    prefix's name in the caller's interface)."""
    if not isinstance(query, str):
        raise InvalidInput(f"{what} must be a string")
    if "\x00" in query:
        raise InvalidInput(f"{what} contains a NUL character")
    prefix = fold(query)
    if not prefix:
        raise InvalidInput(f"{what} is empty: give the first letters of a term")
    if len(prefix) > MAX_TERM_CHARS:
        raise InvalidInput(f"{what} is {len(prefix)} characters; the limit is {MAX_TERM_CHARS}")
    try:
        prefix.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{what} is not valid Unicode (a lone surrogate)") from None
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_LIMIT}, got {limit!r}")
    return prefix, limit


async def suggest(postgres: Any, query: str, *, collections: tuple[str, ...] | list[str] | None = None,
                  limit: int = 10) -> dict[str, Any]:
    """Completions of ``query`` in ``collections`` (None: every collection), best first.

    Returns ``{"query", "suggestions": [{"text", "kind", "score", "documents", "collections"}], "took_ms"}``.
    The caller resolves an API key's scope into ``collections`` first.
    """
    started = time.perf_counter()
    prefix, limit = check(query, limit)
    if collections is not None:
        bad = [c for c in collections if not is_collection_name(c)]
        if bad:
            raise InvalidInput(f"invalid collection name {bad[0]!r}")
        names = list(dict.fromkeys(collections))
    else:
        names = await postgres.q.search.collection_names()
    rows: list[dict[str, Any]] = []
    if names:
        low, high = prefix_range(prefix)
        rows = await postgres.q.search.complete(names, low, high, k=limit * CANDIDATES_PER_RESULT,
                                                range_limit=RANGE_CAP, top_per_collection=WALK_TERMS)
    return {"query": query, "suggestions": rank(rows, prefix, limit),
            "took_ms": round((time.perf_counter() - started) * 1000, 2)}
