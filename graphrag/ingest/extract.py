"""Entities and relations with spaCy (no LLM needed).

- Entities: NER spans minus purely numeric types (configurable), optionally noun-phrase terms,
  resolved inside a collection by a normalised key: case, whitespace, possessives, leading articles
  and company suffixes are folded, so "Apple Inc." and "Apple's" are the entity ``apple|ORG``.
- Relations: entities that co-occur in a sentence are related (weight = co-occurrences, evidence =
  chunk); a subject-verb-object pattern between two entities adds the verb lemma as a predicate.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field

from graphrag.models import Entity, Extraction, Relation

log = logging.getLogger(__name__)

DEFAULT_DROP_LABELS = frozenset({"CARDINAL", "ORDINAL", "PERCENT", "QUANTITY", "MONEY", "DATE", "TIME"})
_ARTICLES = re.compile(r"^(?:the|a|an)\s+", re.I)
_POSSESSIVE = re.compile(r"(?:'s|’s|'|’)$", re.I)
_SUFFIXES = re.compile(
    r"[\s,]+(?:inc|incorporated|corp|corporation|co|company|ltd|limited|llc|plc|gmbh|ag|sa|s\.a|n\.v|nv)\.?$", re.I
)
_PUNCT = re.compile(r"[^\w\s&+\-./]")
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
    return _ARTICLES.sub("", text).strip()


def entity_key(name: str, label: str) -> str:
    return f"{normalise_name(name)}|{label}"


@dataclass(frozen=True)
class ExtractOptions:
    """Which labels to drop, whether to add noun-phrase terms and SVO predicates."""

    drop_labels: frozenset[str] = DEFAULT_DROP_LABELS
    noun_phrases: bool = False
    svo: bool = True
    batch_size: int = 64


@dataclass
class _DocEntities:
    spans: list[tuple[int, int, str]] = field(default_factory=list)  # token start, end, key


class SpacyExtractor:
    """Runs one spaCy pipeline over chunk texts with ``nlp.pipe`` batching."""

    def __init__(self, model: str, options: ExtractOptions | None = None) -> None:
        import spacy

        self.options = options or ExtractOptions()
        needs_parser = self.options.svo or self.options.noun_phrases
        # The parser gives sentences, SVO and noun chunks; without it a cheap sentencizer will do.
        exclude = [] if needs_parser else ["parser", "lemmatizer"]
        try:
            self.nlp = spacy.load(model, exclude=exclude)
        except OSError as exc:
            from graphrag.errors import ConfigurationError

            raise ConfigurationError(f"GRAPHRAG_SPACY_MODEL: cannot load spaCy model {model!r}: {exc}") from None
        if not needs_parser:
            self.nlp.add_pipe("sentencizer", first=True)
        self.model_name = model

    def extract(self, chunk_texts: Sequence[str], into: Extraction | None = None, first_index: int = 0) -> Extraction:
        """Entities, mentions and relations of a document's chunks (chunk i has index first_index+i)."""
        result = into or Extraction()
        docs = self.nlp.pipe(chunk_texts, batch_size=self.options.batch_size)
        for offset, doc in enumerate(docs):
            self._one(doc, first_index + offset, result)
        return result

    def extract_many(self, documents: Sequence[Sequence[str]]) -> list[Extraction]:
        """One :class:`Extraction` per document, all chunks of all documents in one ``nlp.pipe`` stream."""
        flat = [(d, i, text) for d, texts in enumerate(documents) for i, text in enumerate(texts)]
        results = [Extraction() for _ in documents]
        for (d, i, _), doc in zip(flat, self.nlp.pipe((t for _, _, t in flat), batch_size=self.options.batch_size),
                                  strict=True):
            self._one(doc, i, results[d])
        return results

    def _one(self, doc: object, chunk_index: int, result: Extraction) -> None:
        spans: list[tuple[int, int, str]] = []
        for ent in doc.ents:  # type: ignore[attr-defined]
            if ent.label_ in self.options.drop_labels:
                continue
            name = display_name(ent.text)
            norm = normalise_name(ent.text)
            if not norm or norm.isdigit() or len(norm) < 2:
                continue
            key = f"{norm}|{ent.label_}"
            result.entities.setdefault(key, Entity(key=key, name=name, label=ent.label_))
            spans.append((ent.start, ent.end, key))
        if self.options.noun_phrases:
            covered = {t for s, e, _ in spans for t in range(s, e)}
            for np_ in doc.noun_chunks:  # type: ignore[attr-defined]
                toks = [t for t in np_ if not t.is_stop and t.pos_ in ("NOUN", "PROPN", "ADJ")]
                if len(toks) < 2 or any(t.i in covered for t in np_):
                    continue
                text = " ".join(t.text for t in toks)
                key = f"{normalise_name(text)}|CONCEPT"
                result.entities.setdefault(key, Entity(key=key, name=text, label="CONCEPT"))
                spans.append((toks[0].i, toks[-1].i + 1, key))
        for _, _, key in spans:
            result.mentions[(chunk_index, key)] = result.mentions.get((chunk_index, key), 0) + 1
        if not spans:
            return
        token_key = {t: key for s, e, key in spans for t in range(s, e)}
        for sent in doc.sents:  # type: ignore[attr-defined]
            keys = sorted({token_key[t] for t in range(sent.start, sent.end) if t in token_key})
            for i, a in enumerate(keys):
                for b in keys[i + 1:]:
                    rel = result.relations.setdefault((a, b), Relation(source=a, target=b))
                    rel.chunk_weights[chunk_index] = rel.chunk_weights.get(chunk_index, 0) + 1
            if self.options.svo and len(keys) > 1:
                self._svo(sent, token_key, chunk_index, result)

    @staticmethod
    def _svo(sent: object, token_key: dict[int, str], chunk_index: int, result: Extraction) -> None:
        for token in sent:  # type: ignore[attr-defined]
            if token.pos_ not in ("VERB", "AUX"):
                continue
            subjects = [c for c in token.children if c.dep_ in _SUBJECTS]
            objects = [c for c in token.children if c.dep_ in _OBJECTS]
            objects += [g for c in token.children if c.dep_ in ("prep", "agent") for g in c.children if g.dep_ == "pobj"]
            for subj in subjects:
                for obj in objects:
                    a, b = token_key.get(subj.i), token_key.get(obj.i)
                    if a and b and a != b:
                        pair = (a, b) if a < b else (b, a)
                        rel = result.relations.get(pair)
                        if rel is not None:
                            rel.predicates.add((token.lemma_.lower(), chunk_index))


EXTRACTION_VERSION = 3  # bump when chunking/extraction changes, so documents are re-extracted on the next ingest
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
    name = display_name(_DISAMBIGUATION.sub("", title))
    norm = normalise_name(name)
    if not norm or not looks_like_a_name(name):
        return None
    key = next((k for k in result.entities if k.rsplit("|", 1)[0] == norm), None)
    if key is None:
        key = f"{norm}|TOPIC"
        result.entities[key] = Entity(key=key, name=name, label="TOPIC")
    result.mentions[(0, key)] = result.mentions.get((0, key), 0) + 1
    for (index, other), _count in list(result.mentions.items()):
        if index != 0 or other == key:
            continue
        pair = (key, other) if key < other else (other, key)
        rel = result.relations.setdefault(pair, Relation(source=pair[0], target=pair[1]))
        rel.chunk_weights[0] = rel.chunk_weights.get(0, 0) + 1
    return key
