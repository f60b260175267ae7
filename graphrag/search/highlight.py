"""Highlights of a hit's text: character offsets of the query's keyword terms (as the collection's
text-search configuration stems them) and of the entities the graph leg linked, and a snippet
window around the best of them. Pure functions; the stems come from PostgreSQL (see
:mod:`graphrag.search.extras`).

Offsets are Python string indexes into the hit's ``content``: ``content[start:end]`` is the
highlighted text. Words are runs of letters and digits, the pieces PostgreSQL's parser makes
lexemes of (it splits ``e-mail`` and ``foo_bar`` there too).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

WORD = re.compile(r"[^\W_]+")
SNIPPET_CHARS = 240
_CONTEXT_BEFORE = 0.25  # share of the snippet shown before its first highlight
_SNAP_CHARS = 24  # how far a snippet edge moves to land between words


@dataclass(frozen=True)
class Span:
    """``text[start:end]`` matches ``term`` (a query term or an entity name)."""

    start: int
    end: int
    term: str
    kind: str  # "keyword" | "entity"

    def as_dict(self) -> dict[str, object]:
        return {"start": self.start, "end": self.end, "term": self.term, "kind": self.kind}


def words(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, lower-case word)`` of every word of ``text``."""
    return [(m.start(), m.end(), m.group(0).lower()) for m in WORD.finditer(text)]


def query_words(query: str) -> list[str]:
    """The query's words worth highlighting, in order, once each (case kept for display): single
    letters are left out unless they are all there is."""
    firsts: dict[str, str] = {}
    for m in WORD.finditer(query):
        firsts.setdefault(m.group(0).lower(), m.group(0))
    kept = [w for w in firsts.values() if len(w) > 1 or w.isdigit()]
    return kept or list(firsts.values())


def initial(word: str) -> str:
    """The first letter without accents: a stem starts where its word does (modulo accents), which
    lets callers skip asking for the stems of words no query stem could match."""
    base = unicodedata.normalize("NFKD", word[:2])
    return "".join(c for c in base if not unicodedata.combining(c))[:1].lower()


def keyword_spans(text: str, lexemes_of: Mapping[str, Sequence[str]], query_terms: Mapping[str, str]) -> list[Span]:
    """Spans of the words of ``text`` that share a lexeme with the query.

    ``lexemes_of`` maps a lower-case word to its lexemes; ``query_terms`` maps a query lexeme to the
    query word it came from (which becomes the span's ``term``).
    """
    spans = []
    for start, end, word in words(text):
        for lexeme in lexemes_of.get(word, ()):
            term = query_terms.get(lexeme)
            if term is not None:
                spans.append(Span(start, end, term, "keyword"))
                break
    return spans


def entity_spans(text: str, names: Iterable[str]) -> list[Span]:
    """Case-insensitive whole-word occurrences of the entity ``names`` in ``text`` (any run of white
    space matching the space between two words of a name)."""
    spans: list[Span] = []
    for name in dict.fromkeys(n.strip() for n in names if n and n.strip()):
        parts = [re.escape(p) for p in name.split()]
        pattern = re.compile(r"(?<!\w)" + r"\s+".join(parts) + r"(?!\w)", re.IGNORECASE)
        spans.extend(Span(m.start(), m.end(), name, "entity") for m in pattern.finditer(text))
    return spans


def merge(spans: Iterable[Span]) -> list[Span]:
    """Spans in text order without overlaps: of two overlapping spans the longer one stays (the
    earlier on a tie), so an entity name wins over a keyword inside it."""
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, -(s.end - s.start))):
        if span.end <= span.start:
            continue
        if kept and span.start < kept[-1].end:
            if span.end - span.start > kept[-1].end - kept[-1].start:
                kept[-1] = span
            continue
        kept.append(span)
    return kept


def snippet_window(text: str, spans: Sequence[Span], width: int = SNIPPET_CHARS) -> tuple[int, int]:
    """``(start, end)`` of a window of about ``width`` characters of ``text`` that covers the most
    distinct highlighted terms (then the most highlights), its edges moved to fall between words."""
    n = len(text)
    if n <= width:
        return 0, n
    if not spans:
        return 0, _snap_end(text, width, 0)
    best: tuple[tuple[int, int, int], int] | None = None
    for span in spans:
        lo = max(0, min(span.start - int(width * _CONTEXT_BEFORE), n - width))
        inside = [s for s in spans if s.start >= lo and s.end <= lo + width]
        key = (len({s.term.lower() for s in inside}), len(inside), -lo)
        if best is None or key > best[0]:
            best = (key, lo)
    assert best is not None
    lo = best[1]
    inside = [s for s in spans if s.start >= lo and s.end <= lo + width]
    first = min((s.start for s in inside), default=lo)
    last = max((s.end for s in inside), default=lo)
    return _snap_start(text, lo, first), _snap_end(text, lo + width, last)


def _snap_start(text: str, pos: int, limit: int) -> int:
    """``pos`` moved forward to the start of a word (never past ``limit``, the first highlight)."""
    if pos <= 0:
        return 0
    if text[pos - 1].isspace():
        return pos
    for i in range(pos, min(limit, pos + _SNAP_CHARS, len(text))):
        if text[i].isspace():
            return i + 1
    return pos


def _snap_end(text: str, pos: int, limit: int) -> int:
    """``pos`` moved back to the end of a word (never before ``limit``, the last highlight's end)."""
    n = len(text)
    if pos >= n:
        return n
    if text[pos].isspace():
        return pos
    for i in range(pos, max(limit, pos - _SNAP_CHARS, 0), -1):
        if text[i - 1].isspace():
            return i - 1
    return pos


def highlight(text: str, lexemes_of: Mapping[str, Sequence[str]], query_terms: Mapping[str, str],
              entity_names: Iterable[str] = (), width: int = SNIPPET_CHARS) -> dict[str, object]:
    """A hit's ``highlights`` and its ``snippet`` (``text[snippet_start:snippet_end]``)."""
    spans = merge([*keyword_spans(text, lexemes_of, query_terms), *entity_spans(text, entity_names)])
    start, end = snippet_window(text, spans, width)
    return {"highlights": [s.as_dict() for s in spans], "snippet": text[start:end],
            "snippet_start": start, "snippet_end": end}


def render(text: str, spans: Sequence[Mapping[str, object]], start: int = 0, end: int | None = None,
           before: str = "[[", after: str = "]]") -> str:
    """``text[start:end]`` with each highlight wrapped in ``before`` ... ``after`` (for a terminal:
    ANSI bold; elsewhere ``[[term]]``)."""
    end = len(text) if end is None else end
    out: list[str] = []
    pos = start
    for span in spans:
        s, e = int(span["start"]), int(span["end"])  # type: ignore[call-overload]
        if s < pos or e > end:
            continue
        out += [text[pos:s], before, text[s:e], after]
        pos = e
    out.append(text[pos:end])
    return "".join(out)
