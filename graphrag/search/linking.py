"""Query analysis for the graph leg, without a parser: the spans of a query that may name entities, and
the scores of entity-name matches. Pure functions; the graph statement (``cypher/graph_leg.cypher``)
applies the same scores inside Neo4j.

A parse of the query (spaCy) took a CPU slice on every graph search before any store was asked.
Names in questions are written the way names are written: capitalised words, optionally joined by
short particles ("Bank of England", "Ludwig van Beethoven"), or in quotes. The spans found that way
are linked through the entity-name full-text index, and their word n-grams are looked up as exact
entity names (a dictionary match: a run of names such as "Danube Vienna Budapest" is one span but
three entities); a query without spans (written in lower case) has its own n-grams looked up.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from graphrag.ingest.extract import normalise_name, title_key
from graphrag.ingest.glossary import one_letter

_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')
_LUCENE_WORDS = {"AND", "OR", "NOT", "TO"}
# Word tokens: letters/digits with inner apostrophes, dots, hyphens and ampersands ("O'Neil",
# "J.", "Jean-Luc", "AT&T"); a trailing dot stays with initials.
_WORD = re.compile(r"\w(?:[\w'’&-]*\w)?(?:#(?!\w)|\.)?")  # "C#" is a word of its own, as entity keys keep it
_QUOTED = re.compile(r"[\"“”]([^\"“”]{2,80})[\"“”]")
_NAME_SPLIT = re.compile(r"[\s.\-/&+]+")
# Particles that may sit inside a name, never at its ends.
_JOINERS = {"of", "the", "de", "da", "del", "der", "di", "du", "la", "le", "van", "von", "y", "&", "v", "v.", "vs", "vs."}
# Capitalised only because they start the question (or are function words): never start a name.
_FUNCTION_WORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each either few for from further had has have
having he her here hers herself him himself his how i if in into is it its itself just last least less many
me more most much my myself neither no nor not now of off on once only or other our ours ourselves out over
own same she should so some such than that the their theirs them themselves then there these they this
those through to too under until up upon very was we were what when where which while who whom whose why
will with would yes you your yours yourself yourselves name named names known called whats who's what's
""".split())
MAX_SPANS = 12
MAX_GRAM = 4
MAX_GRAMS = 64


@dataclass(frozen=True)
class Span:
    """A stretch of the query that may name an entity: its text, Lucene query, name tokens and title key."""

    text: str
    lucene: str
    tokens: tuple[str, ...]
    title_key: str


def name_tokens(text: str) -> tuple[str, ...]:
    """The tokens of a name as entity linking compares them: the normalised name (see
    :func:`normalise_name`, which is what ``Entity.norm`` holds) split on spaces and ``. - / & +``.
    ``cypher/graph_leg.cypher`` splits ``Entity.norm`` the same way."""
    return tuple(t for t in _NAME_SPLIT.split(normalise_name(text)) if t)


def name_overlap(mention: str | tuple[str, ...], name: str | tuple[str, ...]) -> float:
    """How well an entity name matches a query mention: Jaccard overlap of their tokens, or, for names
    of two tokens or more, 0.8 when the mention contains the whole name ("Killing Pablo" in "Killing
    Pablo: The Hunt for ..."); one-word names are contained in long mentions by chance."""
    a = set(name_tokens(mention) if isinstance(mention, str) else mention)
    b = set(name_tokens(name) if isinstance(name, str) else name)
    if not a or not b:
        return 0.0
    common = len(a & b)
    contained = 0.8 if len(b) >= 2 and common == len(b) else 0.0
    return max(common / len(a | b), contained)


def lucene_query(text: str) -> str:
    """A Lucene query that matches ``text``'s words (any of them), the whole phrase boosted."""
    words = [w for w in re.findall(r"\w[\w'.-]*", text) if w.upper() not in _LUCENE_WORDS]
    escaped = [_LUCENE_SPECIAL.sub(r"\\\1", w) for w in words]
    if not escaped:
        return ""
    phrase = " ".join(escaped)
    return f'"{phrase}"^3 {phrase}' if len(escaped) > 1 else phrase


def _number(word: str) -> bool:
    return re.sub(r"(?:'s|’s|s|\.)$", "", word).isdigit()


def _is_name_word(word: str) -> bool:
    first = word[0]
    return (first.isupper() or first.isdigit()) and word.lower().rstrip(".") not in _FUNCTION_WORDS


def name_spans(query: str) -> list[str]:
    """Spans of ``query`` written like names: runs of capitalised words (particles such as "of" or
    "van" allowed inside), and quoted titles; numbers alone are not names. In query order, without
    duplicates (case-insensitive), at most ``MAX_SPANS``."""
    found: list[tuple[int, str]] = [(m.start(1), m.group(1).strip()) for m in _QUOTED.finditer(query)]
    words = list(_WORD.finditer(query))
    run: list[re.Match[str]] = []

    def close() -> None:
        while run and run[-1].group(0).lower() in _JOINERS:
            run.pop()
        if run and not all(_number(w.group(0)) for w in run):
            found.append((run[0].start(), query[run[0].start():run[-1].end()]))
        run.clear()

    for i, match in enumerate(words):
        word = match.group(0)
        gap = query[words[i - 1].end():match.start()] if i else ""
        if run and (gap.strip() not in ("", "'s", "’s") or "\n" in gap):
            close()  # punctuation between two words ends a name
        if _is_name_word(word):
            run.append(match)
        elif run and word.lower() in _JOINERS:
            run.append(match)
        else:
            close()
    close()
    out: list[str] = []
    seen: set[str] = set()
    for _, text in sorted(found):
        text = re.sub(r"(?:'s|’s)$", "", text.strip(" \"'“”‘’,;:?!")).strip()
        key = text.lower()
        if len(key) > 1 and key not in seen:
            seen.add(key)
            out.append(text)
    return out[:MAX_SPANS]


def query_spans(query: str) -> list[Span]:
    """:func:`name_spans` with what linking needs of each (spans without a usable Lucene query or
    name tokens are left out)."""
    spans = []
    for text in name_spans(query):
        lucene, tokens = lucene_query(text), name_tokens(text)
        if lucene and tokens:
            spans.append(Span(text, lucene, tokens, title_key(text)))
    return spans


def name_grams(texts: list[str], max_n: int = MAX_GRAM) -> list[dict[str, object]]:
    """Word n-grams (1 to ``max_n`` words) of each text as exact entity-name keys (``Entity.norm``),
    with where they sit: ``{"norm", "span": index of the text, "start", "end": word positions}``.
    N-grams that start or end with a function word, and numbers alone, are left out; longest first,
    at most ``MAX_GRAMS``. The graph statement keeps only the longest matches of each text, so that
    "Violent Femmes" does not also link "Femmes", while "Danube Vienna Budapest" links all three."""
    found: list[tuple[int, int, dict[str, object]]] = []
    for index, text in enumerate(texts):
        words = list(_WORD.finditer(text))
        lowered = [w.group(0).rstrip(".").lower() for w in words]
        seen: set[str] = set()
        for n in range(min(max_n, len(words)), 0, -1):
            for i in range(len(words) - n + 1):
                first, last = lowered[i], lowered[i + n - 1]
                if first in _FUNCTION_WORDS or last in _FUNCTION_WORDS or (n == 1 and _number(first)):
                    continue
                norm = normalise_name(text[words[i].start():words[i + n - 1].end()])
                if len(norm) > 1 and norm not in seen:
                    seen.add(norm)
                    found.append((-n, len(found), {"norm": norm, "span": index, "start": i, "end": i + n}))
    return [gram for _, _, gram in sorted(found, key=lambda f: (f[0], f[1]))][:MAX_GRAMS]


def capital_letter(word: str) -> bool:
    """A word that is one capital letter ("R", "C"): an entity name only a glossary gives
    (:func:`~graphrag.ingest.glossary.one_letter`), looked up as written ("in R", not "in r"). "A" and
    "I" are function words, never names."""
    return one_letter(word) and word.lower() not in _FUNCTION_WORDS


def letter_grams(query: str, span: int, inside: Sequence[str] = ()) -> list[dict[str, object]]:
    """The query's one-capital-letter words ("plots in R") as exact entity names, numbered as text
    ``span``, but for those within a text of ``inside`` where the query writes it (a longer name,
    "Appendix C", is looked up as that). :func:`name_grams` leaves them out: a name needs two
    characters but these."""
    covered = [(m.start(), m.end()) for text in inside for m in re.finditer(re.escape(text), query)]
    return [{"norm": w.group(0).lower(), "span": span, "start": i, "end": i + 1}
            for i, w in enumerate(_WORD.finditer(query))
            if capital_letter(w.group(0)) and not any(a <= w.start() < b for a, b in covered)]
