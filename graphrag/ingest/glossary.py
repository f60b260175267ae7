"""Domain terms: names the extractor must know, whatever the NER model says of them.

Two lists feed it:

- **A glossary** (``GRAPHRAG_ENTITY_TERMS``, a JSON Lines file of the user's own): every occurrence
  of a term's name or one of its aliases, in any document, is a mention of one entity with the term's
  name and label. A term wins over the NER model (which misses product names or calls them PERSON)
  and over inline code (a backticked ``pgvector`` is the glossary's ``pgvector``); its aliases become
  the entity's aliases, which query expansion uses. One line a term::

      {"name": "pgvector", "label": "TECH", "aliases": ["pg_vector"]}
      {"name": "Acme Widget", "label": "PRODUCT", "ignore_case": true}

  ``label`` defaults to ``TERM``; names are matched as written unless ``ignore_case`` is true; blank
  lines and lines starting with ``#`` are skipped. The setting may name a folder instead: then each
  collection has its own glossary, ``<collection>.jsonl`` there, else the folder's ``_default.jsonl``
  (:func:`glossary_path`), read again when the file changes.
- **Technology names** (``GRAPHRAG_TECH_TERMS``, on by default; ``tech_terms.txt`` beside this module):
  widely used languages, formats, protocols, browsers, systems and databases. An entity the
  extractor found under one of these names, written as listed, takes the label ``TECH`` (the small
  NER model labels "JavaScript", "JSON" and "Firefox" PERSON and "Perl" ORG). Names with another
  meaning ("Java", "Python", "Kafka"; acronyms such as TLS or REST, which biology uses too) are
  relabelled only in documents with code (three or more code spans or blocks), where prose about an
  island or a protein rarely is. The list adds no entities.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from graphrag.errors import ConfigurationError
from graphrag.ingest.extract import normalise_name

DEFAULT_LABEL = "TERM"
MAX_TERMS = 100_000
MAX_ALIASES = 16


@dataclass(frozen=True)
class Term:
    """One glossary entry: the entity's name, label and other names."""

    name: str
    label: str = DEFAULT_LABEL
    aliases: tuple[str, ...] = ()
    ignore_case: bool = False

    @functools.cached_property
    def key(self) -> str:
        """The entity key (normalised name) every form of the term resolves to (computed once: it is read
        for every match)."""
        return normalise_name(self.name)


@dataclass(frozen=True)
class Glossary:
    """The terms of one glossary file and a fingerprint of them (part of the content hash)."""

    terms: tuple[Term, ...] = ()
    fingerprint: str = ""


@functools.cache
def _stop_words() -> frozenset[str]:
    from spacy.lang.en.stop_words import STOP_WORDS

    return frozenset(STOP_WORDS)


def _fail(where: str, why: str) -> ConfigurationError:
    return ConfigurationError(f"GRAPHRAG_ENTITY_TERMS: {where}: {why}")


def _term(row: Any, where: str) -> Term:
    if not isinstance(row, dict):
        raise _fail(where, "each line must be a JSON object with a \"name\"")
    unknown = set(row) - {"name", "label", "aliases", "ignore_case"}
    if unknown:
        raise _fail(where, f"unknown field {sorted(unknown)[0]!r} (name, label, aliases, ignore_case)")
    name, label = row.get("name"), row.get("label", DEFAULT_LABEL)
    aliases, ignore_case = row.get("aliases", []), row.get("ignore_case", False)
    if not isinstance(name, str):
        raise _fail(where, "\"name\" must be a string")
    if not isinstance(label, str) or not label.strip() or len(label) > 40:
        raise _fail(where, "\"label\" must be a non-empty string of at most 40 characters")
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise _fail(where, "\"aliases\" must be a list of strings")
    for position, form in enumerate((name, *aliases)):
        if one_letter(form):
            # "R", "C": an entity of its own, matched as written and only where it stands alone; a
            # question's "R" links to it by the entity's name, so the letter must be the name.
            if position:
                raise _fail(where, f"{form!r}: a one-letter form must be the term's name, not an alias")
            if ignore_case is True:
                raise _fail(where, f"{form!r}: a one-letter name is matched as written (no \"ignore_case\")")
        elif len(normalise_name(form)) < 2:
            raise _fail(where, f"{form!r} keeps fewer than two characters as an entity key "
                               f"({normalise_name(form)!r}: case, punctuation and articles are folded; "
                               "a single capital letter may be a name)")
        if form.strip().lower() in _stop_words():
            raise _fail(where, f"{form!r} is a common word: every {form.strip()!r} in the text would be the term")
    if len(aliases) > MAX_ALIASES:
        raise _fail(where, f"at most {MAX_ALIASES} aliases a term")
    if not isinstance(ignore_case, bool):
        raise _fail(where, "\"ignore_case\" must be true or false")
    return Term(name=name.strip(), label=label.strip().upper(), aliases=tuple(a.strip() for a in aliases),
                ignore_case=ignore_case)


def one_letter(form: str) -> bool:
    """Whether a glossary form is a single capital letter ("R", "C"): a name only a glossary can give
    (the extractor and the graph leg's linking otherwise ignore one-character keys)."""
    form = form.strip()
    return len(form) == 1 and form.isalpha() and form.isupper()


FOLDER_DEFAULT = "_default.jsonl"  # in a folder of glossaries: for collections without a file of their own


def glossary_path(setting: Path | None, collection: str) -> Path | None:
    """The glossary file that applies to ``collection``: ``GRAPHRAG_ENTITY_TERMS`` itself when it names a
    file (every collection), or, when it names a folder, the collection's own ``<collection>.jsonl`` there,
    else the folder's ``_default.jsonl`` (no collection name starts with ``_``); None when none applies."""
    if setting is None or not Path(setting).is_dir():
        return setting
    for name in (f"{collection}.jsonl", FOLDER_DEFAULT):
        found = Path(setting) / name
        if found.is_file():
            return found
    return None


def load_setting(setting: Path | None) -> Glossary:
    """The glossary of ``GRAPHRAG_ENTITY_TERMS`` for collections without one of their own, every file
    checked first: the file it names, or in a folder of glossaries every ``*.jsonl`` (so a bad line
    fails at start-up, not in some later ingest) and the folder's ``_default.jsonl``."""
    if setting is None or not Path(setting).is_dir():
        return load_glossary(setting)
    for path in sorted(Path(setting).glob("*.jsonl")):
        load_glossary(path)
    default = Path(setting) / FOLDER_DEFAULT
    return load_glossary(default) if default.is_file() else Glossary()


def file_stamp(path: Path | None) -> tuple[int, int] | None:
    """What tells an edited glossary file from the one read before: its modification time and size."""
    if path is None:
        return None
    try:
        stat = Path(path).stat()
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def load_glossary(path: Path | None) -> Glossary:
    """The terms of ``path`` (JSON Lines, see the module docstring); an empty glossary for None.
    A missing file, a malformed line or two terms claiming one name is a one-line ConfigurationError."""
    if path is None:
        return Glossary()
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise _fail(str(path), exc.strerror or "cannot be read") from None
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _fail(str(path), "not UTF-8 text") from None
    terms: list[Term] = []
    claimed: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), start=1):  # JSON strings may hold U+2028
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        where = f"{path}:{number}"
        try:
            row = json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise _fail(where, f"not JSON ({exc.msg})") from None
        term = _term(row, where)
        for form in (term.name, *term.aliases):
            first = claimed.setdefault(normalise_name(form), number)
            if first != number:
                raise _fail(where, f"{form!r} is already a name or alias of the term on line {first}")
        terms.append(term)
        if len(terms) > MAX_TERMS:
            raise _fail(str(path), f"more than {MAX_TERMS:,} terms")
    digest = hashlib.sha256(json.dumps([asdict(t) for t in terms], sort_keys=True).encode()).hexdigest()[:16]
    return Glossary(tuple(terms), digest if terms else "")


@dataclass(frozen=True)
class TechNames:
    """The shipped technology list, names as written: those labelled ``TECH`` in any document, and
    those labelled so only in documents with code."""

    anywhere: frozenset[str] = frozenset()
    with_code: frozenset[str] = frozenset()
    fingerprint: str = ""  # of the list (part of the content hash: editing it re-extracts)


@functools.cache
def tech_names() -> TechNames:
    """The shipped technology list (``tech_terms.txt``: a ``[anywhere]`` and a ``[with code]`` section)."""
    text = resources.files("graphrag.ingest").joinpath("tech_terms.txt").read_text(encoding="utf-8")
    sections: dict[str, set[str]] = {"anywhere": set(), "with code": set()}
    current: set[str] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("[") and stripped.endswith("]"):
            current = sections[stripped[1:-1]]
        elif current is not None:
            current.add(stripped)
    listed = json.dumps([sorted(sections["anywhere"]), sorted(sections["with code"])])
    return TechNames(frozenset(sections["anywhere"]), frozenset(sections["with code"]),
                     hashlib.sha256(listed.encode()).hexdigest()[:12])


class TermMatcher:
    """Finds a glossary's names and aliases in parsed texts, tokenized as the texts are (so "Node.js"
    or "C++" match however the tokenizer splits them), with spaCy's ``PhraseMatcher``. White space
    between words does not count (Markdown wraps lines: "Quill\\nFeather" is "Quill Feather"): forms
    and texts are matched without their white-space tokens."""

    def __init__(self, nlp: Any, terms: tuple[Term, ...]) -> None:
        from spacy.matcher import PhraseMatcher

        self._by_id: dict[str, Term] = {}
        self._exact = PhraseMatcher(nlp.vocab, attr="ORTH")
        self._folded = PhraseMatcher(nlp.vocab, attr="LOWER")
        forms = [list(dict.fromkeys((term.name, *term.aliases))) for term in terms]
        docs = iter(nlp.tokenizer.pipe(form for group in forms for form in group))
        for i, (term, group) in enumerate(zip(terms, forms, strict=True)):
            match_id = f"graphrag-term-{i}"
            self._by_id[match_id] = term
            patterns = [_compact(next(docs))[0] for _ in group]
            if one_letter(term.name):
                # A sentence that ends with the letter tokenizes it with its period ("in R."), as an
                # initial is; an initial inside a longer name ("R. Ellis") is that name's (see find).
                patterns.append(nlp.make_doc(term.name + "."))
            (self._folded if term.ignore_case else self._exact).add(match_id, patterns)

    def find(self, doc: Any) -> list[tuple[int, int, Term]]:
        """(token start, token end, term) of each match in ``doc``, longest first where matches
        overlap, in text order."""
        compact, at = _compact(doc)
        strings = doc.vocab.strings
        found = [(at[start], at[end - 1] + 1, self._by_id[strings[mid]]) for matcher in (self._exact, self._folded)
                 for mid, start, end in matcher(compact)]
        found = [m for m in found if not one_letter(m[2].name) or _stands_alone(doc, m[0])]
        found.sort(key=lambda m: (m[0] - m[1], m[0]))  # longest first, then leftmost
        taken: set[int] = set()
        kept: list[tuple[int, int, Term]] = []
        for start, end, term in found:
            if not taken.intersection(range(start, end)):
                taken.update(range(start, end))
                kept.append((start, end, term))
        return sorted(kept, key=lambda m: m[0])

    @staticmethod
    def names(term: Term, name: str) -> bool:
        """Whether ``name`` is written as one of the term's forms (in any case with ``ignore_case``)."""
        forms = (term.name, *term.aliases)
        folded = " ".join(name.split())
        return folded in forms if not term.ignore_case else folded.lower() in {f.lower() for f in forms}


# What may touch a one-letter term without making it part of another word ("in R.", "(R)", "R's").
_OPEN_BEFORE = frozenset("([{\"'“‘")
_CLOSE_AFTER = frozenset(".,;:!?)]}\"”’")


def _stands_alone(doc: Any, i: int) -> bool:
    """Whether the one-letter token ``doc[i]`` is a word of its own: not joined to a neighbour without a
    space ("R-squared", "C++", "x/R", "R2" tokenised apart), but "in R.", "(R)" and "R's" are."""
    before = doc[i - 1] if i > 0 else None
    if before is not None and not (before.whitespace_ or before.is_space or before.text[-1:] in _OPEN_BEFORE):
        return False
    if i + 1 < len(doc) and not doc[i].whitespace_ and not doc[i + 1].is_space:
        after = doc[i + 1].text
        return after in ("'s", "’s") or after[:1] in _CLOSE_AFTER and after[1:2] not in ("+", "#")
    return True


def _compact(doc: Any) -> tuple[Any, list[int]]:
    """``doc`` without its white-space tokens, and each remaining token's index in ``doc``."""
    at = [t.i for t in doc if not t.is_space]
    if len(at) == len(doc):
        return doc, at
    from spacy.tokens import Doc

    return Doc(doc.vocab, words=[doc[i].text for i in at]), at
