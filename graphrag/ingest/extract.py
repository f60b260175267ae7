"""Entities and relations with spaCy (no LLM needed), fit for technical text.

- Entities: NER spans minus purely numeric types (configurable) and minus names that are code
  fragments, structural references or cut headings; inline code spans as ``CODE`` entities;
  noun-chunk key phrases confirmed by recurrence as ``CONCEPT``s (optionally every noun phrase).
- Resolution: one entity per normalised name (the key): case, whitespace, possessives, leading
  articles and company suffixes are folded, so "Apple Inc." and "Apple's" are the entity ``apple``.
  The label is a property: the one most mentions carry in the document (code evidence wins), and in
  the collection the one most mentions carry over all documents (kept up to date by the graph write).
- Relations: entities that co-occur in a sentence are related (weight = co-occurrences, evidence =
  chunk); a subject-verb-object pattern between two entities adds the verb lemma as a predicate.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import logging
import re
import unicodedata
from importlib import resources
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from graphrag.ingest.fast_ner import FastEntityRecognizer
from graphrag.ingest.fast_ruler import FastAttributeRuler
from graphrag.ingest.language import foreign, has_lorem, placeholder
from graphrag.ingest.spec_ids import SPEC_LABEL, find_spec_ids, is_series_name, title_spec
from graphrag.ingest.textprep import IDENTIFIER, Prose, code_name, identifier_shaped, prose_views, reject_name
from graphrag.models import Entity, Extraction, Relation

if TYPE_CHECKING:
    from graphrag.ingest.glossary import Term, TechNames

log = logging.getLogger(__name__)

DEFAULT_DROP_LABELS = frozenset({"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY", "DATE", "TIME"})
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
# A package the code imports or installs: "from pydantic_ai import Agent", "import numpy as np",
# "import React from 'react'" (the package is 'react'; React is only the name bound here), "require('vue')",
# "pip install pydantic-ai", "npm install -D vitest".
_PACKAGE = re.compile(
    r"^[ \t]*(?:from[ \t]+([A-Za-z_][\w.]*)[ \t]+import\b|import[ \t]+([A-Za-z_][\w.]*)\b(?![ \t]*[,{*]|[ \t]+from\b))"
    r"|\bfrom[ \t]+['\"]([^'\"\s]+)['\"]|\brequire\(['\"]([^'\"\s]+)['\"]\)"
    r"|\b(?:pip3?|uv(?:[ \t]+pip)?|poetry|pdm|conda|npm|pnpm|yarn|bun|cargo|gem)[ \t]+(?:install|add)"
    r"((?:[ \t]+[^\s;|&]+)+)", re.M)
_PACKAGE_SPEC = re.compile(r"@?[\w][\w./-]*")
_ARTICLES = re.compile(r"^(?:the|a|an)\s+", re.I)
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$", re.I)
_SUFFIXES = re.compile(
    r"[\s,]+(?:inc|incorporated|corp|corporation|co|company|ltd|limited|llc|plc|gmbh|ag|sa|s\.a|n\.v|nv)\.?$", re.I
)
# Punctuation a name key drops; a "#" only where it does not end a word that it follows ("C#" and "F#"
# are not "C" and "F"; "Issue #42" is "issue 42").
_PUNCT = re.compile(r"[^\w\s&+\-./#]|(?<!\w)#|#(?=[\w#])")
# Words written with a full stop of their own.
_ABBREVIATED = frozenset({"inc", "corp", "co", "ltd", "llc", "bros", "jr", "sr", "dr", "mr", "mrs", "ms", "prof",
                          "st", "mt", "no", "vs", "etc", "dept", "univ", "assn", "intl", "govt", "gen", "col", "capt"})
_SUBJECTS = {"nsubj", "nsubjpass"}
_OBJECTS = {"dobj", "attr", "oprd", "dative"}


def normalise_name(name: str) -> str:
    """The resolution form of an entity name ("The Apple Inc.'s" -> "apple")."""
    text = unicodedata.normalize("NFKC", name).strip()
    text = re.sub(r"\s+", " ", text)
    for _ in range(2):
        text = _POSSESSIVE.sub("", text).strip()
        text = _ARTICLES.sub("", text).strip()
        text = _SUFFIXES.sub("", text).strip()
    text = _PUNCT.sub("", text).strip(" .-")
    return text.lower()


def display_name(name: str) -> str:
    """A clean surface form for display (possessive, leading article and stray quotes removed)."""
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", name)).strip().strip("\"'“”‘’")
    text = _POSSESSIVE.sub("", text).strip()
    text = _ARTICLES.sub("", text).strip()
    last = text.rsplit(" ", 1)[-1]
    # A sentence's full stop ("Turtle Graphics.", "Node.js."), not an abbreviation's ("Inc.", "U.S.").
    if (last.endswith(".") and len(last) > 2 and last[:-1].lower() not in _ABBREVIATED
            and not re.fullmatch(r"(?:[A-Za-z]\.)+", last)):
        text = text[:-1]
    return text


def entity_key(name: str, label: str) -> str:
    return f"{normalise_name(name)}|{label}"


@dataclass(frozen=True)
class ExtractOptions:
    """What the spaCy extractor keeps (see the GRAPHRAG_* settings of the same names)."""

    drop_labels: frozenset[str] = DEFAULT_DROP_LABELS
    noun_phrases: bool = False
    svo: bool = True
    batch_size: int = 64
    code_entities: bool = True
    identifier_min_chunks: int = 2
    keyphrases: bool = True
    keyphrase_min_chunks: int = 3
    precision: str = "float32"  # of the pipeline's large matrix products: float32 or bfloat16
    terms: tuple[Term, ...] = ()  # the glossary (graphrag.ingest.glossary): names that are always entities
    terms_fingerprint: str = ""  # of the glossary's content (part of the content hash)
    tech_names: TechNames | None = None  # technology names labelled TECH (graphrag.ingest.glossary)


CODE = "CODE"  # an identifier written as code (inline code span, or a name the document writes as code)
TECH = "TECH"  # a CamelCase technical name in a document with code (RefCell, RunContext, OpenTelemetry)
_FUNCTION_POS = {"ADP", "DET", "CCONJ", "SCONJ", "PART", "PRON", "AUX"}
_PHRASE_POS = {"NOUN", "PROPN", "ADJ"}
# Adjectives that say which or how many, not what: "multiple agents" is a use of "agent", not a term.
_QUALIFIERS = frozenset("multiple many several various other different same certain own such more most few entire "
                        "whole new original specific particular individual given following previous next first "
                        "second third last additional simple actual main only single".split())
# The model's labels for proper names, which a phrase the document also writes in lower case is not.
_PROPER_LABELS = frozenset({"PERSON", "ORG", "GPE", "NORP", "LOC", "FAC", "EVENT", "LAW", "WORK_OF_ART",
                            "PRODUCT", "LANGUAGE"})
_TRIM = " \t\n,;:"
# Labels of names English always capitalises: a word in lower case under one is a common word or code.
_CAPITALISED_LABELS = frozenset({"PERSON", "GPE", "NORP", "LOC", "FAC"})
# RFC 2119's requirement keywords, which specifications (RFCs, PEPs, standards) write in capitals.
_REQUIREMENT_WORDS = frozenset({"must", "must not", "required", "shall", "shall not", "should", "should not",
                                "recommended", "not recommended", "may", "optional"})


@functools.cache
def section_titles() -> frozenset[str]:
    """The shipped list of section titles that name a part of a document, not a thing
    (``section_titles.txt``: "motivation", "rejected ideas", "see also"), normalised."""
    text = resources.files("graphrag.ingest").joinpath("section_titles.txt").read_text(encoding="utf-8")
    return frozenset(normalise_name(line) for line in text.splitlines() if line.strip() and not line.startswith("#"))


# The model's labels under which it tags a list of names as one ("Uvicorn, Starlette and Sanic" ORG).
_LIST_LABELS = frozenset({"ORG", "PERSON", "PRODUCT", "WORK_OF_ART", "NORP"})
# How a name found earlier makes a side of "A and B" a name by itself (not a noun phrase's candidate).
_NAMED_KINDS = frozenset({"ner", "term", "code", "heading", "title", "bold"})
# What follows a comma inside one name: "Acme, Inc.", "Martin Luther King, Jr.".
_NAME_SUFFIXES = frozenset({"inc", "ltd", "llc", "llp", "lp", "plc", "co", "corp", "gmbh", "ag", "sa", "bv", "nv",
                            "jr", "sr", "ii", "iii", "iv", "esq", "phd", "md"})
_SEGMENT = re.compile(r"::|\.")


@dataclass
class _DocState:
    """What one document's chunks contributed, resolved into an :class:`Extraction` at its end."""

    votes: dict[str, Counter[str]] = field(default_factory=dict)  # norm -> label votes
    names: dict[str, Counter[str]] = field(default_factory=dict)  # norm -> surface forms
    kinds: dict[str, set[str]] = field(default_factory=dict)  # norm -> {"ner", "heading", "bold", "code", ...}
    mentions: Counter[tuple[int, str]] = field(default_factory=Counter)
    sentences: list[tuple[int, set[str]]] = field(default_factory=list)
    svo: list[tuple[str, str, str, int]] = field(default_factory=list)
    code_blocks: list[tuple[int, str]] = field(default_factory=list)
    code_marks: int = 0  # inline code spans + code blocks seen: is this a technical document?
    common: set[str] = field(default_factory=set)  # one-word NER names that may be common words
    lower_words: set[str] = field(default_factory=set)  # words the document writes in lower case
    texts: list[str] = field(default_factory=list)  # the prose of each chunk, white space collapsed
    proper: set[str] = field(default_factory=set)  # multi-word NER names written as "the X" in running text
    terms: dict[str, Term] = field(default_factory=dict)  # norm -> the glossary term found under it
    packages: set[str] = field(default_factory=set)  # package keys its code imports or installs

    def add(self, chunk: int, norm: str, name: str, label: str, kind: str) -> None:
        self.votes.setdefault(norm, Counter())[label] += 1
        self.names.setdefault(norm, Counter())[name] += 1
        self.kinds.setdefault(norm, set()).add(kind)
        self.mentions[(chunk, norm)] += 1


def package_key(name: str) -> str:
    """A name or package name as compared with the other: lower case, without spaces, "-", "_" or "."
    ("Pydantic AI", "pydantic_ai" and "pydantic-ai" are all "pydanticai")."""
    return re.sub(r"[\s\-_.]", "", name.lower())


def packages_in(code: str) -> set[str]:
    """Keys (:func:`package_key`) of the packages ``code`` imports or installs, version pins and
    extras aside ("pydantic-ai>=1.0", "logfire[fastapi]"); a module's first part ("os.path" -> "os")."""
    found: set[str] = set()
    for m in _PACKAGE.finditer(code):
        module = m.group(1) or m.group(2) or m.group(3) or m.group(4)
        if module:
            found.add(package_key(module.split(".")[0] if not module.startswith(".") else ""))
            continue
        for word in m.group(5).split():
            word = word.strip("'\"")
            if not word.startswith("-") and (spec := _PACKAGE_SPEC.match(word)) is not None:
                found.add(package_key(re.split(r"[=<>~!\[]", spec.group(0))[0]))
    found.discard("")
    return found


def _written_as(text: str, form: str) -> bool:
    """Whether ``text`` holds ``form`` as whole words (not inside a longer word or hyphenated name)."""
    at = text.find(form)
    while at >= 0:
        end = at + len(form)
        if (at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_-")) and (
                end == len(text) or not (text[end].isalnum() or text[end] in "_-")):
            return True
        at = text.find(form, at + 1)
    return False


def _capitalised_word(name: str) -> bool:
    """One word of letters, capitalised and otherwise lower case ("Scope", not "JSON" or "iPhone")."""
    return name.isalpha() and name[:1].isupper() and name[1:].islower()


def _code_norm(base: str) -> str:
    return normalise_name(base)


def _is_plain_word(name: str) -> bool:
    """A lower-case word without code punctuation (``counter``, ``push``): a variable or method name
    that must recur before it is an entity."""
    return bool(re.fullmatch(r"[a-z][a-z0-9]*", name))


# Products smaller than this (output cells) stay in float32: casting costs more than it saves there.
_BF16_MIN_CELLS = 16_384
# ... and larger ones go through in blocks of this many rows (see _bfloat16_ops_class).
_BF16_BLOCK_ROWS = 512


def numpy_products(nlp: Any, precision: str = "float32") -> None:
    """Make the pipeline's layers multiply through numpy's OpenBLAS rather than BLIS (thinc's default),
    with one BLAS thread (:func:`one_blas_thread`); with ``precision="bfloat16"``, the large products
    (the token-to-vector layers') in bfloat16 instead.

    BLIS picks its kernels from a list of CPUs it knows and falls back to generic C on the others
    (AMD Zen 4: 30 against OpenBLAS's 95 GFLOPS on the tok2vec's shapes); OpenBLAS detects the CPU at
    run time. The same extractions, 24% less CPU on Zen 4 (docs/benchmarks.md). Layers built at load
    time (the parsers' output layers) are covered too, so every ``ops`` is swapped after loading.
    """
    from thinc.api import NumpyOps

    ops = _bfloat16_ops_class()() if precision == "bfloat16" else NumpyOps(use_blis=False)
    for _, pipe in nlp.pipeline:
        model = getattr(pipe, "model", None)
        if model is None:
            continue
        for node in model.walk():
            if isinstance(node.ops, NumpyOps):
                node.ops = ops
    one_blas_thread()


@functools.cache
def _bfloat16_ops_class() -> type:
    """The class of ops with bfloat16 products (defined on first use: thinc loads with spaCy)."""
    from thinc.api import NumpyOps

    class _BFloat16Ops(NumpyOps):
        """thinc's numpy ops, with matrix products of ``_BF16_MIN_CELLS`` cells or more in bfloat16
        through PyTorch (oneDNN's AVX-512 BF16 kernels, float32 sums, a bfloat16 result): on a CPU
        that has them, twice OpenBLAS's float32 rate, which is already this CPU's float32 peak."""

        def __init__(self) -> None:
            super().__init__(use_blis=False)

        def gemm(self, x: Any, y: Any, out: Any = None, trans1: bool = False, trans2: bool = False) -> Any:
            if x.ndim != 2 or y.ndim != 2 or x.dtype != "float32" or y.dtype != "float32":
                return super().gemm(x, y, out=out, trans1=trans1, trans2=trans2)
            rows = x.shape[1] if trans1 else x.shape[0]
            cols = y.shape[0] if trans2 else y.shape[1]
            if rows * cols < _BF16_MIN_CELLS:
                return super().gemm(x, y, out=out, trans1=trans1, trans2=trans2)
            import torch

            torch.set_num_threads(1)  # per calling thread: the extraction lane has one core
            a = torch.from_numpy(x.T if trans1 else x)
            b = torch.from_numpy(y.T if trans2 else y).to(torch.bfloat16)
            result = np.empty((rows, cols), dtype=np.float32) if out is None else out
            # Rows go through in blocks of one size (the last padded with zeros): oneDNN keeps what it
            # builds per shape in caches of each thread that multiplies, and texts come in every
            # length, so unblocked products grew an ingest by 0.7 GB (about 1.6 MB a shape).
            block = torch.zeros((_BF16_BLOCK_ROWS, a.shape[1]), dtype=torch.bfloat16)
            for start in range(0, rows, _BF16_BLOCK_ROWS):
                end = min(rows, start + _BF16_BLOCK_ROWS)
                block[:end - start] = a[start:end]
                if end - start < _BF16_BLOCK_ROWS:
                    block[end - start:] = 0
                result[start:end] = torch.mm(block, b)[:end - start].float().numpy()
            return result

    return _BFloat16Ops


def one_blas_thread() -> None:
    """Run numpy's BLAS (OpenBLAS) products on the calling thread alone, process-wide (OpenBLAS has
    one thread count per process).

    Cores are shared out explicitly here (the ingest's model lanes, the API's workers): BLAS threads
    of its own for each product only compete with the other lane, and spin while idle.
    """
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")


class SpacyExtractor:
    """Runs one spaCy pipeline over chunk texts with ``nlp.pipe`` batching.

    Each chunk is read through :func:`textprep.prose_view` (code blocks and markup out, inline code
    kept with its positions). Per document: inline code spans become ``CODE`` entities; NER names
    that are code fragments, structural references or cut headings are dropped; noun-chunk key
    phrases that recur in ``keyphrase_min_chunks`` chunks become ``CONCEPT`` entities; and every
    name takes one label, its majority label in the document (code evidence wins), so an entity's
    key is its normalised name alone (:func:`unify_labels`).
    """

    def __init__(self, model: str, options: ExtractOptions | None = None) -> None:
        import spacy

        self.options = options or ExtractOptions()
        needs_parser = self.options.svo or self.options.noun_phrases or self.options.keyphrases
        # The parser gives sentences, SVO and noun chunks; without it a cheap sentencizer will do.
        exclude = [] if needs_parser else ["parser", "lemmatizer"]
        try:
            self.nlp = spacy.load(model, exclude=exclude)
        except OSError as exc:
            from graphrag.errors import ConfigurationError

            raise ConfigurationError(f"GRAPHRAG_SPACY_MODEL: cannot load spaCy model {model!r}: {exc}") from None
        numpy_products(self.nlp, self.options.precision)
        if not needs_parser:
            self.nlp.add_pipe("sentencizer", first=True)
        # Lemmas are read for a few tokens only (a key phrase's head noun, an SVO verb), so the
        # lemmatizer stays out of the pipeline and lemmatizes those tokens on demand (:meth:`lemma`).
        self._lemmatizer: Any = None
        if "lemmatizer" in self.nlp.pipe_names:
            self._lemmatizer = self.nlp.get_pipe("lemmatizer")
            self.nlp.disable_pipe("lemmatizer")
        # The attribute ruler runs as a table look-up (fast_ruler) after the rest of the pipeline:
        # nothing else in it reads what the ruler sets.
        self._ruler: FastAttributeRuler | None = None
        self._skip: list[str] = []
        if "attribute_ruler" in self.nlp.pipe_names and self._ruler_is_last_reader():
            self._ruler = FastAttributeRuler(self.nlp.get_pipe("attribute_ruler"))
            self._skip = ["attribute_ruler"]
        # The entity recogniser's greedy decoding runs over whole batches at once (fast_ner), where
        # it is the last pipe and this decoder knows its model; else spaCy's own loop.
        self._ner: FastEntityRecognizer | None = None
        if self.nlp.pipe_names and self.nlp.pipe_names[-1] == "ner":
            self._ner = FastEntityRecognizer.for_pipe(self.nlp.get_pipe("ner"))
            if self._ner is not None:
                self._skip.append("ner")
        self._terms: Any = None
        if self.options.terms:
            from graphrag.ingest.glossary import TermMatcher

            self._terms = TermMatcher(self.nlp, self.options.terms)
        self.model_name = model
        from spacy.attrs import IS_ALPHA, IS_LOWER, ORTH

        self._lower_attrs = [ORTH, IS_LOWER, IS_ALPHA]

    def with_glossary(self, terms: tuple[Term, ...], fingerprint: str) -> SpacyExtractor:
        """This extractor with another glossary (a collection's own): the same loaded pipeline, shared,
        and a matcher of its own for the terms."""
        other = copy.copy(self)
        other.options = dataclasses.replace(self.options, terms=terms, terms_fingerprint=fingerprint)
        other._terms = None
        if terms:
            from graphrag.ingest.glossary import TermMatcher

            other._terms = TermMatcher(self.nlp, terms)
        return other

    def _ruler_is_last_reader(self) -> bool:
        """Whether the pipes after the attribute ruler are only an NER that reads none of what it sets."""
        names = self.nlp.pipe_names
        after = names[names.index("attribute_ruler") + 1:]
        if any(name != "ner" for name in after):
            return False
        if "ner" not in after:
            return True
        embed = self.nlp.config["components"]["ner"].get("model", {}).get("tok2vec", {}).get("embed", {})
        return set(embed.get("attrs", ())) <= {"NORM", "PREFIX", "SUFFIX", "SHAPE", "ORTH", "LOWER"}

    def parse(self, texts: Any) -> Any:
        """``nlp.pipe`` over ``texts`` with every annotation the extractor reads."""
        docs = self.nlp.pipe(texts, batch_size=self.options.batch_size, disable=self._skip)
        if self._ner is not None:
            docs = self._ner.pipe(docs, batch_size=self.options.batch_size)
        if self._ruler is None:
            return docs
        return (self._ruler(doc) for doc in docs)

    def lemma(self, token: Any) -> str:
        """The token's lemma, as the pipeline's lemmatizer would have set it: a lemma already set
        (by the attribute ruler) wins, else the lemmatizer's rule for it, else the text."""
        if token.lemma != 0 or self._lemmatizer is None:
            return token.lemma_ or token.text
        return self._lemmatizer.lemmatize(token)[0]

    def extract(self, chunk_texts: Sequence[str], into: Extraction | None = None, first_index: int = 0) -> Extraction:
        """Entities, mentions and relations of one document's chunks (chunk i has index first_index+i)."""
        state = _DocState()
        views = prose_views(chunk_texts)
        for offset, (doc, view) in enumerate(zip(self.parse(v.text for v in views), views, strict=True)):
            self._one(doc, view, first_index + offset, state)
        result = self._finish(state)
        if into is None:
            return result
        into.entities.update(result.entities)
        into.mentions.update(result.mentions)
        into.relations.update(result.relations)
        into.phrases.update(result.phrases)
        return into

    def extract_many(self, documents: Sequence[Sequence[str]]) -> list[Extraction]:
        """One :class:`Extraction` per document, all chunks of all documents in one ``nlp.pipe`` stream."""
        flat = [(d, i, view) for d, texts in enumerate(documents) for i, view in enumerate(prose_views(texts))]
        states = [_DocState() for _ in documents]
        docs = self.parse(v.text for _, _, v in flat)
        for (d, i, view), doc in zip(flat, docs, strict=True):
            self._one(doc, view, i, states[d])
        return [self._finish(s) for s in states]

    # --- one chunk ---------------------------------------------------------------------------

    def _one(self, doc: Any, view: Prose, chunk_index: int, state: _DocState) -> None:
        opts = self.options
        spans: list[tuple[int, int, str]] = []  # token start, end, norm
        code_tokens: set[int] = set()
        state.code_marks += len(view.code_spans) + len(view.code_blocks)
        state.lower_words.update(self._lower_words(doc))
        state.texts.append(" ".join(doc.text.split()))
        state.code_blocks.extend((chunk_index, b) for b in view.code_blocks)
        for code_text in (*view.code_blocks, *(content for _, _, content in view.code_spans)):
            if any(word in code_text for word in ("import", "require", "install", " add")):
                state.packages |= packages_in(code_text)
        code = [(span, content) for start, end, content in view.code_spans
                if (span := doc.char_span(start, end, alignment_mode="expand")) is not None]
        # Glossary terms first: a term is an entity whatever the model or the code markup says of it,
        # unless it is part of a longer name or code span ("Python" in "Python Software Foundation",
        # "pgvector" in `pgvector.Vector`), which stays what it is.
        term_tokens: set[int] = set()
        if self._terms is not None:
            longer = [(span.start, span.end) for span, _ in code] + [(e.start, e.end) for e in doc.ents]
            for start, end, term in self._terms.find(doc):
                if any(a <= start and end <= b and b - a > end - start for a, b in longer):
                    continue
                state.terms[term.key] = term
                state.add(chunk_index, term.key, term.name, term.label, "term")
                spans.append((start, end, term.key))
                term_tokens.update(range(start, end))
        # "PEP 484", "RFC 9110": one entity each, not the model's "PEP" ORG (graphrag.ingest.spec_ids).
        in_code = [(span.start_char, span.end_char) for span, _ in code]
        for start_char, end_char, spec in find_spec_ids(doc.text):
            span = doc.char_span(start_char, end_char, alignment_mode="expand")
            if (span is None or term_tokens.intersection(range(span.start, span.end))
                    or any(a < end_char and start_char < b for a, b in in_code)):
                continue
            from graphrag.ingest.glossary import Term  # glossary reads this module's normalise_name

            term = Term(spec, SPEC_LABEL)
            state.terms[term.key] = term
            state.add(chunk_index, term.key, term.name, term.label, "term")
            spans.append((span.start, span.end, term.key))
            term_tokens.update(range(span.start, span.end))
        for span, content in code:
            code_tokens.update(range(span.start, span.end))
            if term_tokens.intersection(range(span.start, span.end)):
                continue
            named = code_name(content) if opts.code_entities else None
            if named is None:
                continue
            norm = _code_norm(named[1])
            if len(norm) < 2:
                continue
            state.add(chunk_index, norm, named[0], CODE, "code")
            spans.append((span.start, span.end, norm))
        code_tokens |= term_tokens
        # A chunk in another language than the model's: the model's names and phrases of it would be
        # noise ("un", "dans"); glossary terms and inline code stand.
        own_language = not foreign(doc.text, self.nlp.lang or "")
        if own_language and has_lorem(doc.text):
            code_tokens |= self._placeholder_tokens(doc)
        link_texts = set(view.links)
        for ent in doc.ents if own_language else ():
            if ent.label_ in opts.drop_labels or any(t in code_tokens for t in range(ent.start, ent.end)):
                continue
            # The period a heading or title ends with in the prose view can end the name too ("Tab 1.").
            end = ent.end_char - ent.text.endswith(".")
            if any(a <= ent.start_char and end <= b for a, b in view.headings):
                kind, items = "heading", [ent]
            elif any(a <= ent.start_char and end <= b for a, b in view.titles):
                kind, items = "bold", [ent]  # a line wholly in bold: a block's title
            elif (ent.start_char, ent.end_char) in link_texts:
                # the whole text of a link to another page or section: that one's title
                kind, items = "title", [ent]
            else:
                kind, items = "ner", self._list_items(ent, state)
            for item in items:
                accepted = self._ner_name(item)
                if accepted is None:
                    continue
                name, norm = accepted
                if ent.label_ in _CAPITALISED_LABELS and name.islower() and " " not in name and not self._tech(name):
                    continue  # "markup" PERSON, "suffix" GPE, "builtin" NORP: people and places are capitalised
                if norm in _REQUIREMENT_WORDS and name.isupper():
                    continue  # a specification's "SHOULD" and "MUST NOT" (RFC 2119), not an ORG
                # A one-word item of a list ("Alternatives, Inspiration and Comparisons") is tagged as
                # a proper noun for its capital alone: a common word where the document writes it so.
                if self._common_word(item, name, ent.label_) or (item is not ent and _capitalised_word(name)):
                    state.common.add(norm)
                if kind == "ner" and " " in norm and self._named_with_the(item):
                    state.proper.add(norm)
                state.add(chunk_index, norm, name, ent.label_, kind)
                spans.append((item.start, item.end, norm))
        covered = {t for s, e, _ in spans for t in range(s, e)} | code_tokens
        if (opts.noun_phrases or opts.keyphrases) and own_language:
            for np_ in doc.noun_chunks:
                if any(t.i in covered for t in np_):
                    continue
                # A block's title is a label ("Technical Details" over every aside), not running text.
                if any(a <= np_.start_char and np_.end_char <= b for a, b in view.titles):
                    continue
                phrase = self._phrase(np_)
                if phrase is None:
                    continue
                name, norm, first, last = phrase
                state.add(chunk_index, norm, name, "CONCEPT", "concept" if opts.noun_phrases else "phrase")
                spans.append((first, last, norm))
        if not spans:
            return
        token_norm = {t: norm for s, e, norm in spans for t in range(s, e)}
        for sent in doc.sents:
            norms = {token_norm[t] for t in range(sent.start, sent.end) if t in token_norm}
            if norms:
                state.sentences.append((chunk_index, norms))
            if opts.svo and len(norms) > 1:
                self._svo(sent, token_norm, chunk_index, state)

    @staticmethod
    def _placeholder_tokens(doc: Any) -> set[int]:
        """The tokens of ``doc``'s placeholder text ("Lorem ipsum dolor sit amet, ..."), which names
        nothing: sentences, or their paragraphs where one runs past a blank line (the sentencizer reads
        "... the block:" and the example below it as one)."""
        tokens: set[int] = set()
        for sent in doc.sents:
            at = 0
            for piece in _PARAGRAPH_BREAK.split(sent.text):
                start = sent.text.find(piece, at)
                at = start + len(piece)
                if placeholder(piece):
                    span = doc.char_span(sent.start_char + start, sent.start_char + at, alignment_mode="expand")
                    tokens.update(range(span.start, span.end) if span is not None else ())
        return tokens

    def _lower_words(self, doc: Any) -> set[str]:
        """The words a chunk writes in lower case (alphabetic tokens), read from the token array
        rather than token by token."""
        rows = doc.to_array(self._lower_attrs)
        if not len(rows):
            return set()
        hashes = rows[(rows[:, 1] != 0) & (rows[:, 2] != 0), 0]
        strings = doc.vocab.strings
        return {strings[h] for h in set(hashes.tolist())}

    def _tech(self, name: str) -> bool:
        """Whether ``name`` is on the shipped technology list (``asyncio``, ``npm``): a name, however written."""
        tech = self.options.tech_names
        return tech is not None and (name in tech.anywhere or name in tech.with_code)

    @staticmethod
    def _common_word(span: Any, name: str, label: str) -> bool:
        """A one-word name that could be a common word: a noun, adjective or verb (not a proper noun),
        without digits or inner capitals, and not a nationality ("Korean")."""
        return len(span) == 1 and span[0].pos_ in ("NOUN", "ADJ", "VERB") and label != "NORP" and _capitalised_word(name)

    def _list_items(self, ent: Any, state: _DocState) -> list[Any]:
        """The names an NER span lists in running text of a technical document ("Uvicorn, Starlette and
        Sanic", "Redis, PostgreSQL", "Bedrock and Vertex"), else ``[ent]``. The small model tags such a
        list as one ORG. A list with a comma is split; a pair joined only by "and" or "&" only where
        each side is a name on its own: a technology name, code-shaped, or named alone earlier in the
        document (so "Structure and Interpretation of Computer Programs" stays whole). Documents
        without code are left alone: there a band or a publisher is often such a list ("Crosby,
        Stills, Nash & Young", "Farrar, Straus and Giroux"). So are a company's suffix ("Acme, Inc.") and a
        greeting ("Hello, World!")."""
        if state.code_marks < 3 or ent.label_ not in _LIST_LABELS or len(ent) < 3:
            return [ent]
        items: list[Any] = []
        start, commas = ent.start, 0
        for token in ent:
            if token.text == "," or token.lower_ in ("and", "&"):
                if token.i > start:
                    items.append(ent.doc[start:token.i])
                start = token.i + 1
                commas += token.text == ","
        if start < ent.end:
            items.append(ent.doc[start:ent.end])
        # Not a list: a company's suffix ("Acme, Inc."), a greeting ("Hello, World!").
        if (len(items) < 2 or ent[-1].text in ("!", "?") or any(
                normalise_name(item.text).rstrip(".") in _NAME_SUFFIXES or item[0].pos_ == "INTJ" for item in items)):
            return [ent]
        if commas == 0 and not all(self._named_alone(item.text, state) for item in items):
            return [ent]
        return items

    def _named_alone(self, text: str, state: _DocState, named_before: bool = True) -> bool:
        """Whether ``text`` is a name by itself: listed as a technology, shaped like code, or (with
        ``named_before``) an entity the document has named before."""
        tech = self.options.tech_names
        return ((tech is not None and (text in tech.anywhere or text in tech.with_code)) or identifier_shaped(text)
                or (named_before and bool(state.kinds.get(normalise_name(text), set()) & _NAMED_KINDS)))

    def _names_technology(self, name: str, state: _DocState) -> bool:
        """Whether ``name`` or one of its words is a technology's name or shaped like code."""
        return any(self._named_alone(part, state, named_before=False) for part in (name, *name.split()))

    @staticmethod
    def _ner_name(ent: Any) -> tuple[str, str] | None:
        """(display name, normalised name) of an NER span that names something, or None."""
        tokens = [t for t in ent if not t.is_space]
        while tokens and (tokens[-1].text in _TRIM or tokens[-1].text in ("'s", "’s", "'", "’")):
            tokens.pop()
        if not tokens or "\n\n" in ent.text:
            return None
        text = ent.doc[tokens[0].i:tokens[-1].i + 1].text  # not doc.text: that joins the whole chunk
        name = display_name(text)
        norm = normalise_name(text)
        if not norm or norm.isdigit() or len(norm) < 2 or reject_name(name) or is_series_name(norm):
            return None
        # Cut headings and prose pieces: "Defining Shared Behavior with", "Using Trait Objects to".
        if len(tokens) > 1 and (tokens[0].tag_ == "VBG" or tokens[-1].pos_ in _FUNCTION_POS):
            return None
        # A single function word tagged as a name ("n't", "May"): not a name. A single capitalised
        # common word ("Types", "Scope") is checked against the document at its end (common_word).
        if len(tokens) == 1 and tokens[0].pos_ in _FUNCTION_POS | {"ADV", "INTJ", "CCONJ"}:
            return None
        return name, norm

    def _phrase(self, np_: Any) -> tuple[str, str, int, int] | None:
        """A noun chunk as a key-phrase candidate: 2-4 content words ending in a noun."""
        toks = list(np_)
        while toks and (toks[0].is_stop or toks[0].pos_ not in _PHRASE_POS or toks[0].lower_ in _QUALIFIERS):
            toks = toks[1:]
        if not 2 <= len(toks) <= 4 or toks[-1].pos_ not in ("NOUN", "PROPN"):
            return None
        if any(t.is_stop or t.pos_ not in _PHRASE_POS or not t.text.replace("-", "").isalpha() for t in toks):
            return None
        words = [t.text if t.pos_ == "PROPN" else t.text.lower() for t in toks[:-1]]
        last = toks[-1].text if toks[-1].pos_ == "PROPN" else toks[-1].lower_
        lemma = self.lemma(toks[-1]).lower()
        if toks[-1].pos_ != "PROPN" and last.startswith(lemma) and len(last) - len(lemma) <= 2:
            last = lemma  # plural to singular ("smart pointers"); not "data" -> "datum"
        name = " ".join([*words, last])
        norm = normalise_name(name)
        if len(norm) < 5 or reject_name(name):
            return None
        return name, norm, toks[0].i, toks[-1].i + 1

    @staticmethod
    def _heading_words(norm: str, state: _DocState) -> bool:
        """Whether a name found only in headings reads as a section's topic rather than a name: its last
        word (the head noun: "usage", "errors", "dependencies") is one the document writes in lower case."""
        last = norm.rsplit(" ", 1)[-1]
        return last.isalpha() and last in state.lower_words

    @staticmethod
    def _named_with_the(ent: Any) -> bool:
        """Whether running text names it as one thing, "the X" with nothing after it that "the" could
        be for ("played in the Football League"; not "the Turtle Graphics module")."""
        doc = ent.doc
        the = ent[0].lower_ == "the" or (ent.start > 0 and doc[ent.start - 1].lower_ == "the")
        return the and (ent.end == len(doc) or doc[ent.end].pos_ not in ("NOUN", "PROPN"))

    @staticmethod
    def _written_lower(state: _DocState, keep: set[str]) -> set[str]:
        """The multi-word model names that the document also writes in lower case: "Integer Types"
        (PERSON) beside "integer types", "Turtle Graphics" (ORG) beside "turtle graphics". A proper
        name keeps its capitals wherever it is written; a phrase written both ways is a term, which
        title case (a title, a heading, a list item) made look like a name. Not a name the text
        calls "the X" ("the Football League" beside "a football league")."""
        forms: dict[str, str] = {}
        for norm in keep:
            if " " not in norm or not state.kinds[norm] <= {"ner", "heading", "bold", "title", "phrase", "concept"}:
                continue
            if norm in state.proper:
                continue  # "played in the Football League": a name, though "a football league" is not
            if state.votes[norm].most_common(1)[0][0] not in _PROPER_LABELS:
                continue
            name = state.names[norm].most_common(1)[0][0]
            if name != name.lower():
                forms[name.lower()] = norm
        if not forms:
            return set()
        text = "\n".join(state.texts)
        return {norm for form, norm in forms.items() if _written_as(text, form)}

    def _svo(self, sent: Any, token_norm: dict[int, str], chunk_index: int, state: _DocState) -> None:
        for token in sent:
            if token.pos_ not in ("VERB", "AUX"):
                continue
            subjects = [c for c in token.children if c.dep_ in _SUBJECTS]
            objects = [c for c in token.children if c.dep_ in _OBJECTS]
            objects += [g for c in token.children if c.dep_ in ("prep", "agent") for g in c.children if g.dep_ == "pobj"]
            for subj in subjects:
                for obj in objects:
                    a, b = token_norm.get(subj.i), token_norm.get(obj.i)
                    if a and b and a != b:
                        state.svo.append((a, b, self.lemma(token).lower(), chunk_index))

    # --- one document ------------------------------------------------------------------------

    def _finish(self, state: _DocState) -> Extraction:
        opts = self.options
        chunks_of: dict[str, set[int]] = {}
        for chunk, norm in state.mentions:
            chunks_of.setdefault(norm, set()).add(chunk)
        keep: set[str] = set()
        technical = state.code_marks >= 3
        topics: set[str] = set()
        for norm, kinds in state.kinds.items():
            spread = len(chunks_of.get(norm, ()))
            if kinds <= {"bold"} and not self._names_technology(state.names[norm].most_common(1)[0][0], state):
                # "Technical Details", "Info": found only in a block's title (an aside's label, over
                # asides on many pages) and named nowhere else; unless it names a technology or code
                # ("Windows PowerShell", a tab's title).
                continue
            if technical and kinds <= {"heading", "bold", "title"} and self._heading_words(norm, state):
                # "Overriding Dependencies", "CLI Usage": a section's heading, or the text of links to
                # a page or section ("see [Usage Limits](agent.md#usage-limits)"), named nowhere else. It
                # stays (a question about the section links to it) as the section's topic, not an ORG.
                topics.add(norm)
            if norm in section_titles() and not kinds & {"code", "term"}:
                # "Motivation", "Rejected Ideas": a part of the document named as a section, whatever
                # NER took it for; only a key phrase the document uses ("backwards compatibility").
                kinds = kinds - {"ner", "heading", "bold", "title"}
                if not kinds:
                    continue
                state.votes[norm] = Counter({"CONCEPT": 1})
            if kinds & {"ner", "concept", "term", "heading", "bold", "title"}:
                # "Scope" tagged as a name where the document also writes "scope": a common word.
                # Only in documents with code: in prose about biology "Condensin"/"condensin" is a term.
                if (technical and kinds <= {"ner", "heading", "bold", "title"} and norm in state.common
                        and norm in state.lower_words):
                    continue
                keep.add(norm)
            elif "code" in kinds:
                name = state.names[norm].most_common(1)[0][0]
                if not _is_plain_word(name) or spread >= opts.identifier_min_chunks:
                    keep.add(norm)
            elif "phrase" in kinds and spread >= opts.keyphrase_min_chunks:
                keep.add(norm)
        mentions = Counter({k: v for k, v in state.mentions.items() if k[1] in keep})
        code_norms = {n for n in keep if "code" in state.kinds[n] or CODE in state.votes[n]}
        # Code blocks: the document's own identifiers count as mentions where its listings use them.
        for chunk, block in state.code_blocks:
            for m in IDENTIFIER.finditer(block):
                ident = m.group(0)
                parts = [ident, *_SEGMENT.split(ident)[:1]]
                for part in dict.fromkeys(parts):
                    norm = _code_norm(part)
                    if norm in code_norms:
                        mentions[(chunk, norm)] += 1
        result = Extraction()
        tech = opts.tech_names
        lowered = self._written_lower(state, keep)
        for norm in keep:
            name = state.names[norm].most_common(1)[0][0]
            votes = state.votes[norm]
            if (term := state.terms.get(norm)) is not None:
                name, label = term.name, term.label
                if term.aliases:
                    result.aliases[norm] = set(term.aliases)
            elif CODE in votes:
                label = CODE
            elif technical and identifier_shaped(name) and "CONCEPT" not in votes:
                label = CODE if re.search(r"_|::|\w\.\w", name) else TECH
            elif tech is not None and (name in tech.anywhere or (technical and name in tech.with_code)):
                label = TECH  # the model's "JavaScript" PERSON, "Perl" ORG
            elif technical and "ner" in state.kinds[norm] and package_key(name) in state.packages:
                # The model's "Pydantic AI" LOC, where the code imports pydantic_ai; only a name the model
                # found in running text, not a heading's phrase ("Tool Output" over `from tool_output import`).
                label = TECH
            elif norm in lowered:
                label = "CONCEPT"
            elif norm in topics:
                label = "TOPIC"
            else:
                label = votes.most_common(1)[0][0]
            result.entities[norm] = Entity(key=norm, name=name, label=label)
        result.mentions = dict(mentions)
        per_norm: Counter[str] = Counter()
        for (_, norm), count in state.mentions.items():
            per_norm[norm] += count
        for norm, kinds in state.kinds.items():
            if norm not in keep and kinds == {"phrase"}:
                result.phrases[norm] = (state.names[norm].most_common(1)[0][0], per_norm[norm])
        for chunk, norms in state.sentences:
            kept = sorted(n for n in norms if n in keep)
            for i, a in enumerate(kept):
                for b in kept[i + 1:]:
                    rel = result.relations.setdefault((a, b), Relation(source=a, target=b))
                    rel.chunk_weights[chunk] = rel.chunk_weights.get(chunk, 0) + 1
        for a, b, lemma, chunk in state.svo:
            pair = (a, b) if a < b else (b, a)
            known = result.relations.get(pair)
            if known is not None:
                known.predicates.add((lemma, chunk))
        return result


def unify_labels(result: Extraction, terms: frozenset[str] = frozenset()) -> Extraction:
    """Key entities by normalised name alone: one name is one entity of a document, with the label
    most of its mentions carry (``rust|ORG`` x3 + ``rust|PERSON`` x1 -> ``rust``, ORG). For extractors
    that key by name + label (the LLM extractor); keys without a label pass through unchanged. Names
    are checked once more (:func:`reject_name`) except code names and glossary ``terms`` (keys)."""
    weight: dict[str, Counter[str]] = {}
    for (_, key), count in result.mentions.items():
        norm, _, label = key.rpartition("|") if "|" in key else (key, "", "")
        if label:
            weight.setdefault(norm, Counter())[label] += count
    out = Extraction(phrases=dict(result.phrases))
    new_key: dict[str, str] = {}
    for key, ent in result.entities.items():
        norm = key.rpartition("|")[0] if "|" in key else key
        if not norm or (ent.label != CODE and norm not in terms and reject_name(ent.name)):
            continue
        new_key[key] = norm
        if norm not in out.entities:
            votes = weight.get(norm)
            label = votes.most_common(1)[0][0] if votes else ent.label
            out.entities[norm] = Entity(key=norm, name=ent.name, label=label)
    for key, names in result.aliases.items():
        if key in new_key:
            out.aliases.setdefault(new_key[key], set()).update(names)
    for (chunk, key), count in result.mentions.items():
        if key in new_key:
            k = (chunk, new_key[key])
            out.mentions[k] = out.mentions.get(k, 0) + count
    for (a, b), rel in result.relations.items():
        na, nb = new_key.get(a), new_key.get(b)
        if not na or not nb or na == nb:
            continue
        pair = (na, nb) if na < nb else (nb, na)
        mine = out.relations.setdefault(pair, Relation(source=pair[0], target=pair[1]))
        for index, w in rel.chunk_weights.items():
            mine.chunk_weights[index] = mine.chunk_weights.get(index, 0) + w
        mine.predicates |= rel.predicates
    return out


EXTRACTION_VERSION = 14  # bump when chunking/extraction changes, so documents are re-extracted on the next ingest
_DISAMBIGUATION = re.compile(r"\s*\([^)]*\)\s*$")


def title_key(title: str) -> str:
    """The key a document is found by when a query names its subject: the normalised title without
    a trailing disambiguation ("Manon (opera)" -> "manon"); the same function keys query mentions."""
    return normalise_name(display_name(_DISAMBIGUATION.sub("", title or "")))


def looks_like_a_name(title: str) -> bool:
    """Short, capitalised titles name something ("Neil Peart", "Summer Wars"); file names do not."""
    words = title.split()
    if not 1 <= len(words) <= 8 or re.search(r"[/\\_]|\.\w{2,4}$", title):
        return False
    capitalised = sum(1 for w in words if w[:1].isupper() or w[:1].isdigit())
    return capitalised >= max(1, (len(words) + 1) // 2)


def add_title_entity(result: Extraction, title: str) -> str | None:
    """Make the document's subject an entity of its first chunk, related to that chunk's entities.

    Small NER models often miss a document's own subject (an article about "Summer Wars" rarely
    tags the title), yet that is the entity other documents link to. The label is the one NER gave
    the same name inside the document, else ``TOPIC``. Returns the entity key, or None.
    """
    spec = title_spec(title)
    if spec is not None:  # "PEP 8 – Style Guide for Python Code": the page is PEP 8, also known by its title
        name, subject = spec
    else:
        name, subject = display_name(_DISAMBIGUATION.sub("", title)), ""
    norm = normalise_name(name)
    if not norm or not (spec or looks_like_a_name(name)) or norm in section_titles():
        return None  # "Overview", "Release Notes": a page's part, not its subject
    key = next((k for k in result.entities if k.rsplit("|", 1)[0] == norm), None)
    if key is None:
        key = norm
        result.entities[key] = Entity(key=key, name=name, label=SPEC_LABEL if spec else "TOPIC")
    if subject:
        result.aliases.setdefault(key, set()).add(subject)
    result.mentions[(0, key)] = result.mentions.get((0, key), 0) + 1
    for (index, other), _count in list(result.mentions.items()):
        if index != 0 or other == key:
            continue
        pair = (key, other) if key < other else (other, key)
        rel = result.relations.setdefault(pair, Relation(source=pair[0], target=pair[1]))
        rel.chunk_weights[0] = rel.chunk_weights.get(0, 0) + 1
    return key
