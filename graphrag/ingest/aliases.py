"""Entity aliases: other names a document gives an entity, written to Neo4j as ``Entity.aliases``.

Query expansion (:mod:`graphrag.search.expansion`) adds an entity's aliases to the keyword leg when
a query names it. A document defines an alias when it introduces an abbreviation,
"tumor necrosis factor (TNF)" or "TNF (tumor necrosis factor)": the pair is found with the
algorithm of Schwartz & Hearst (2003, "A simple algorithm for identifying abbreviation definitions
in biomedical text"), and when either side is an entity of the document, the other becomes one of
its aliases. Names that differ only in case, articles, possessives or company suffixes are one
entity already (:func:`graphrag.ingest.extract.normalise_name`), so they need no alias.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from graphrag.ingest.extract import display_name, normalise_name
from graphrag.models import Extraction

MAX_ALIASES = 16
_PAREN = re.compile(r"\(([^()]{1,120})\)")
_WORD = re.compile(r"[\w][\w'\-]*")
_STOP = frozenset("of and the for in on to a an with by at from".split())


def is_short_form(text: str) -> bool:
    """An abbreviation: 2-10 characters, one word, starts alphanumeric, at least two capitals (or
    one capital and a digit): "TNF", "IL-6", "mTOR", "HbA1c"."""
    if not 2 <= len(text) <= 10 or " " in text or not text[0].isalnum():
        return False
    capitals = sum(ch.isupper() for ch in text)
    return capitals >= 2 or (capitals >= 1 and any(ch.isdigit() for ch in text))


def best_long_form(short: str, long: str) -> str | None:
    """The shortest end of ``long`` that holds the characters of ``short`` in order, the first one
    starting a word (Schwartz & Hearst's matching, right to left); None when there is none."""
    s, i = len(short) - 1, len(long) - 1
    while s >= 0:
        ch = short[s].lower()
        if not ch.isalnum():
            s -= 1
            continue
        while i >= 0 and (long[i].lower() != ch or (s == 0 and i > 0 and long[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i -= 1
        s -= 1
    start = long.rfind(" ", 0, i + 1) + 1
    found = long[start:].strip(" ,;:")
    return found or None


def definitions(text: str) -> list[tuple[str, str]]:
    """``(short form, long form)`` pairs the text defines with a parenthesis, in either order."""
    pairs: list[tuple[str, str]] = []
    for match in _PAREN.finditer(text):
        inside = match.group(1).strip()
        before = text[max(0, match.start() - 200):match.start()].rstrip()
        words_before = _WORD.findall(before)
        if is_short_form(inside):
            # "long form (SF)": at most min(|SF| + 5, 2|SF|) words before the parenthesis.
            limit = min(len(inside) + 5, 2 * len(inside))
            window = " ".join(words_before[-limit:])
            long = best_long_form(inside, window)
            if long and len(long.split()) >= 2 and len(long) > len(inside):
                pairs.append((inside, long))
        elif words_before and is_short_form(words_before[-1]) and len(inside.split()) >= 2:
            # "SF (long form)"
            short = words_before[-1]
            inner = inside.split(",")[0].split(";")[0].strip()
            long = best_long_form(short, inner)
            # The same bound on the long form's words as the other order (an explanation in
            # parentheses is not a definition).
            if long and 2 <= len(long.split()) <= min(len(short) + 5, 2 * len(short)):
                pairs.append((short, long))
    return pairs


def add_aliases(extraction: Extraction, texts: Sequence[str]) -> None:
    """Record, in ``extraction.aliases``, the abbreviations the texts define for their entities."""
    norms = {key.rsplit("|", 1)[0]: key for key in extraction.entities}
    for text in texts:
        for short, long in definitions(text):
            for name, other in ((short, long), (long, short)):
                key = norms.get(normalise_name(name))
                alias = display_name(other)
                if key is None or normalise_name(alias) == normalise_name(name) or not alias:
                    continue
                found = extraction.aliases.setdefault(key, set())
                if len(found) < MAX_ALIASES:
                    found.add(alias)


def is_acronym_of(short: str, long: str) -> bool:
    """Whether ``short`` is the initials of ``long``'s words (with or without its small words):
    "WHO" of "World Health Organization", "DoD" of "Department of Defense"."""
    letters = "".join(ch for ch in short.lower() if ch.isalnum())
    words = [w for w in _WORD.findall(long)]
    if len(letters) < 2 or len(words) < 2:
        return False
    every = "".join(w[0].lower() for w in words)
    content = "".join(w[0].lower() for w in words if w.lower() not in _STOP)
    return letters in (every, content)
