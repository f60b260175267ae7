"""Query expansion for the keyword leg: synonyms a user lists, and aliases of the entities a query names.

Opt-in: per request (``expand: true``), or per collection (``GRAPHRAG_EXPAND_COLLECTIONS``). The
expanded terms are OR-ed into the keyword leg's BM25 with a lower weight (each term's IDF times
``GRAPHRAG_EXPANSION_WEIGHT``, 0.5 by default; a term the query has keeps weight 1), and the leg
reports them in ``legs.keyword.expanded``. The vector and graph legs are not changed.

Sources:

- **Synonyms** (``GRAPHRAG_SYNONYMS_FILE``, and/or ``synonyms`` in the request): groups of
  equivalent terms, one group per line, comma-separated (``car, automobile, auto``). When a member
  occurs in the query (whole words, case-insensitive, a plural "s" ignored), the other members are
  added.
- **Entity aliases** (the searched collections' graph): the query's word runs (1-4 words) are
  normalised as entity names are (:func:`graphrag.ingest.extract.normalise_name`); for an entity
  so named, its recorded aliases (abbreviations its documents define, see
  :mod:`graphrag.ingest.aliases`) and its related entities whose name is its acronym (or that it is
  the acronym of) are added; an entity that has the word run as an alias adds its name (only its
  name: one abbreviation may stand for several things).
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from graphrag.errors import ConfigurationError, InvalidInput, one_line
from graphrag.ingest.aliases import is_acronym_of, is_short_form
from graphrag.ingest.extract import normalise_name
from graphrag.search.config import SearchConfig
from graphrag.search.legs import LegResult, keyword_leg
from graphrag.search.linking import _LUCENE_SPECIAL, capital_letter
from graphrag.stores.neo4j import Neo4jStore
from graphrag.stores.postgres import PostgresStore

log = logging.getLogger(__name__)

MAX_NGRAM = 4
MAX_TERMS = 24
MAX_GROUPS = 1000
MAX_GROUP_TERMS = 50
_WORD = re.compile(r"\w[\w'\-]*")
_STOP = frozenset(
    "a an the of and or in on at to for from by with as is are was were be been being do does did has have had "
    "what which who whom whose when where why how that this these those it its than then there their they them "
    "not no can could would should will may might must about into over under between".split())

Groups = tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Term:
    """An expanded term, what in the query it stands for, and where it came from."""

    term: str
    of: str
    source: str  # "synonyms" | "alias"


@dataclass
class Expansion:
    """The terms added to one query (possibly none)."""

    terms: list[Term] = field(default_factory=list)

    def strings(self) -> list[str]:
        return list(dict.fromkeys(t.term for t in self.terms))

    def report(self) -> dict[str, Any]:
        """What ``legs.keyword`` shows of it."""
        return {"expanded": self.strings(),
                "expansions": [{"term": t.term, "for": t.of, "source": t.source} for t in self.terms]}


# --- synonyms ------------------------------------------------------------------------------------

def parse_synonyms(text: str, where: str = "synonyms") -> Groups:
    """Groups of a synonym list: one per line, comma-separated, ``#`` comments; a line with fewer than
    two terms is an error naming the line."""
    groups: list[tuple[str, ...]] = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        terms = tuple(dict.fromkeys(" ".join(t.split()) for t in line.split(",") if t.strip()))
        if len(terms) < 2:
            raise InvalidInput(f"{where} line {n}: a group needs two or more comma-separated terms")
        groups.append(terms)
    return tuple(groups)


def check_groups(value: Any) -> Groups:
    """Synonym groups given in a request (a list of lists of strings), validated."""
    if value is None:
        return ()
    if not isinstance(value, (list, tuple)) or len(value) > MAX_GROUPS:
        raise InvalidInput(f"synonyms must be a list of at most {MAX_GROUPS} groups (lists of terms)")
    groups = []
    for i, group in enumerate(value):
        if (not isinstance(group, (list, tuple)) or not 2 <= len(group) <= MAX_GROUP_TERMS
                or not all(isinstance(t, str) and t.strip() and len(t) <= 200 and _storable(t) for t in group)):
            raise InvalidInput(f"synonyms[{i}] must be a list of 2-{MAX_GROUP_TERMS} non-empty terms")
        groups.append(tuple(dict.fromkeys(" ".join(t.split()) for t in group)))
    return tuple(groups)


def _storable(text: str) -> bool:
    """No NUL and valid Unicode: what PostgreSQL can take as a parameter."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _stem(word: str) -> str:
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _tokens(text: str) -> list[str]:
    return [_stem(w) for w in _WORD.findall(text)]


def _contains(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return n > 0 and any(haystack[i:i + n] == needle for i in range(len(haystack) - n + 1))


def synonym_terms(query: str, groups: Groups) -> list[Term]:
    """The other members of every group one of whose members the query contains."""
    words = _tokens(query)
    out: list[Term] = []
    for group in groups:
        present = [t for t in group if _contains(words, _tokens(t))]
        if present:
            out += [Term(t, present[0], "synonyms") for t in group if t not in present]
    return out


class SynonymFile:
    """A synonym file, re-read when it changes (checked on each use: a stat call)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path.expanduser() if path is not None else None
        self._stamp: tuple[float, int] | None = None
        self._groups: Groups = ()

    def groups(self) -> Groups:
        if self.path is None:
            return ()
        try:
            stat = self.path.stat()
        except OSError as exc:
            raise ConfigurationError(f"GRAPHRAG_SYNONYMS_FILE {self.path}: {exc.strerror or exc}") from None
        stamp = (stat.st_mtime, stat.st_size)
        if stamp != self._stamp:
            try:
                self._groups = parse_synonyms(self.path.read_text(encoding="utf-8"), str(self.path))
            except InvalidInput as exc:
                raise ConfigurationError(f"GRAPHRAG_SYNONYMS_FILE: {exc.message}") from None
            except (OSError, UnicodeDecodeError) as exc:
                raise ConfigurationError(f"GRAPHRAG_SYNONYMS_FILE {self.path}: {exc}") from None
            self._stamp = stamp
        return self._groups


# --- entity aliases ------------------------------------------------------------------------------

def word_runs(query: str) -> dict[str, str]:
    """Normalised word runs of the query (1-4 words, not starting or ending with a small word) ->
    the words as the query wrote them."""
    words = _WORD.findall(query)
    out: dict[str, str] = {}
    for n in range(MAX_NGRAM, 0, -1):
        for i in range(len(words) - n + 1):
            run = words[i:i + n]
            if _small(run[0]) or _small(run[-1]):
                continue
            text = " ".join(run)
            norm = normalise_name(text)
            if norm and (len(norm) > 1 or capital_letter(text)) and norm not in out:  # "R": a glossary's name
                out[norm] = text
    return dict(list(out.items())[:80])


def _small(word: str) -> bool:
    """A small word cannot start or end a name ("What", "who"); an abbreviation can ("WHO")."""
    return word.lower() in _STOP and not (word.isupper() and len(word) > 1)


def _acronym_pair(a: str, b: str) -> bool:
    return (is_short_form(a) and is_acronym_of(a, b)) or (is_short_form(b) and is_acronym_of(b, a))


async def alias_terms(neo4j: Neo4jStore, query: str, collections: list[str]) -> list[Term]:
    """Other names of the entities the query names, from the collections' graph (see the module)."""
    runs = word_runs(query)
    if not runs or not collections:
        return []
    out: list[Term] = []
    phrases = ['"' + _LUCENE_SPECIAL.sub(r"\\\1", run) + '"' for run in runs.values()]
    rows, aliased = await asyncio.gather(
        neo4j.q.search.entities_named(list(runs), collections),
        neo4j.q.search.entities_aliased(" OR ".join(phrases[:40]), collections))
    for row in rows:
        said: str = runs.get(row["norm"]) or str(row["name"] or "")
        if is_short_form(row["name"] or "") and not is_short_form(said):
            continue  # an entity named by an abbreviation ("SAC") is not named by the word ("sac")
        names = list(row["aliases"] or [])
        names += [n for n in row["neighbours"] or [] if n and _acronym_pair(row["name"] or "", n)]
        out += [Term(n, said, "alias") for n in names]
    for row in aliased:
        aliases = {normalise_name(a): a for a in row["aliases"] or []}
        # Likewise an alias that is an abbreviation.
        hit = next((runs[norm] for norm in runs if norm in aliases
                    and (not is_short_form(aliases[norm]) or is_short_form(runs[norm]))), None)
        # Only the entity's own name: its other aliases may be other things with the same
        # abbreviation ("TMC": Thurgood Marshall College, Toyota Motor Corporation).
        if hit is not None and row["name"] and normalise_name(row["name"]) != normalise_name(hit):
            out.append(Term(row["name"], hit, "alias"))
    return out


# --- the expander --------------------------------------------------------------------------------

class QueryExpander:
    """Decides whether a search expands its query, and with what; one per process."""

    def __init__(self, synonyms_file: Path | None = None, collections: Sequence[str] = (), weight: float = 0.5) -> None:
        self.synonyms = SynonymFile(synonyms_file)
        self.collections = frozenset(collections)
        self.weight = weight

    @classmethod
    def from_settings(cls, settings: Any) -> QueryExpander:
        return cls(settings.synonyms_file, settings.expand_collections, settings.expansion_weight)

    def wanted(self, expand: bool | None, collections: Sequence[str] | None) -> bool:
        """A request's ``expand``, else whether every searched collection expands by default."""
        if expand is not None:
            return bool(expand)
        if "*" in self.collections:
            return True
        return bool(collections) and all(c in self.collections for c in collections or ())

    async def expand(self, postgres: PostgresStore, neo4j: Neo4jStore, query: str,
                     collections: Sequence[str] | None, groups: Groups = ()) -> Expansion:
        """The query's synonyms and entity aliases, minus terms the query already has."""
        terms = synonym_terms(query, self.synonyms.groups() + tuple(groups))
        names = list(collections) if collections else list(await postgres.collection_info(None))
        try:
            terms += await alias_terms(neo4j, query, names)
        except Exception as exc:  # noqa: BLE001 - without the graph the synonyms still expand
            log.info("entity aliases unavailable for expansion: %s", one_line(exc))
        have = set(_tokens(query))
        kept: list[Term] = []
        seen: set[str] = set()
        for t in terms:
            key = t.term.lower()
            if key in seen or set(_tokens(t.term)) <= have:
                continue
            seen.add(key)
            kept.append(t)
        return Expansion(kept[:MAX_TERMS])


async def expanded_keyword_leg(pg: PostgresStore, query: str, expansion: Expansion, weight: float,
                               config: SearchConfig) -> LegResult:
    """BM25 over the query and its expanded terms, the latter weighted ``weight``."""
    texts, weights = weighted_strings(query, expansion, weight)
    return await keyword_leg(pg, query, config, texts=texts, weights=weights)


def weighted_strings(query: str, expansion: Expansion | None, weight: float) -> tuple[list[str], list[float]]:
    """The keyword statements' weighted query strings: the query at weight 1, its expansions (if any) at ``weight``."""
    if expansion is None:
        return [query], [1.0]
    terms = expansion.strings()
    return [query, *terms], [1.0, *([weight] * len(terms))]
