"""Pluggable entity extractors: one small protocol, a registry, and the boilerplate gate around them.

``GRAPHRAG_EXTRACTOR`` picks the extractor:

- ``spacy`` (default): :class:`graphrag.ingest.extract.SpacyExtractor`; with
  ``GRAPHRAG_LLM_EXTRACTOR_MODEL`` set, the LLM runs beside it (``GRAPHRAG_LLM_EXTRACTOR_MODE``).
- ``llm``: the optional LLM extractor (needs ``GRAPHRAG_LLM_EXTRACTOR_MODEL``), alone or beside spaCy
  as ``GRAPHRAG_LLM_EXTRACTOR_MODE`` says.
- ``package.module:Class``: any class with ``extract_many``; built as ``Class(settings)``.

Whatever runs, chunks that are boilerplate (licence text, or a chunk repeated verbatim in several
documents of a batch) reach it as empty text, so they yield no entities, and its output is keyed by
normalised name (:func:`graphrag.ingest.extract.unify_labels`).
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from graphrag.config import Settings
from graphrag.errors import ConfigurationError
from graphrag.ingest.extract import ExtractOptions, SpacyExtractor, unify_labels
from graphrag.ingest.glossary import Term, TermMatcher, load_setting, tech_names
from graphrag.ingest.textprep import boilerplate_flags, repeated_chunks
from graphrag.models import Entity, Extraction

log = logging.getLogger(__name__)


@runtime_checkable
class Extractor(Protocol):
    """What ingestion needs of an extractor: one :class:`Extraction` per document, chunk indexes
    counted from 0 within each document. Called in a worker thread."""

    def extract_many(self, documents: Sequence[Sequence[str]]) -> list[Extraction]: ...


Factory = Callable[[Settings, SpacyExtractor, Any], Extractor]


def _spacy(settings: Settings, spacy: SpacyExtractor, llm_model: Any) -> Extractor:
    model = llm_model or settings.llm_extractor_model
    return _with_llm(settings, spacy, model) if model is not None else spacy


def _llm(settings: Settings, spacy: SpacyExtractor, llm_model: Any) -> Extractor:
    model = llm_model or settings.llm_extractor_model
    if model is None:
        raise ConfigurationError("GRAPHRAG_EXTRACTOR=llm needs GRAPHRAG_LLM_EXTRACTOR_MODEL (a pydantic-ai model name)")
    return _with_llm(settings, spacy, model)


def _with_llm(settings: Settings, spacy: SpacyExtractor, model: Any) -> Extractor:
    from graphrag.ingest.llm_extract import CombinedExtractor, LLMExtractor

    return CombinedExtractor(spacy, LLMExtractor(model), settings.llm_extractor_mode)


EXTRACTORS: dict[str, Factory] = {"spacy": _spacy, "llm": _llm}


def _from_path(spec: str, settings: Settings) -> Extractor:
    module_name, _, attr = spec.partition(":")
    try:
        cls = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise ConfigurationError(f"GRAPHRAG_EXTRACTOR: cannot import {spec!r}: {exc}") from None
    extractor = cls(settings)
    if not isinstance(extractor, Extractor):
        raise ConfigurationError(f"GRAPHRAG_EXTRACTOR: {spec!r} has no extract_many(documents) method")
    return extractor


class BoilerplateGate:
    """Blanks boilerplate chunks before the extractor sees them, and keys its output by name."""

    def __init__(self, inner: Extractor, *, enabled: bool = True, repeated_min_documents: int = 3,
                 terms: Sequence[Term] = ()) -> None:
        self.inner = inner
        self.enabled = enabled
        self.repeated_min_documents = repeated_min_documents
        self.terms = {t.key: t for t in terms}  # the glossary: its names and labels win over any extractor's
        self._term_keys = frozenset(self.terms)

    @property
    def spacy(self) -> Any:
        """The spaCy extractor inside, if any (the graph leg parses queries with its pipeline)."""
        inner = self.inner
        return inner if isinstance(inner, SpacyExtractor) else getattr(inner, "spacy", None)

    def extract_many(self, documents: Sequence[Sequence[str]]) -> list[Extraction]:
        docs = [list(texts) for texts in documents]
        if self.enabled:
            repeated = repeated_chunks(docs, self.repeated_min_documents)
            blanked = 0
            for texts in docs:
                for i, (text, licence) in enumerate(zip(texts, boilerplate_flags(texts), strict=True)):
                    if licence or (repeated and " ".join(text.split()) in repeated):
                        texts[i] = ""
                        blanked += 1
            if blanked:
                log.debug("%d boilerplate chunk(s) yield no entities", blanked)
        return [self._glossary(unify_labels(x, self._term_keys)) for x in self.inner.extract_many(docs)]

    def _glossary(self, result: Extraction) -> Extraction:
        """Glossary terms keep the glossary's name, label and aliases (an LLM beside spaCy may name them
        otherwise)."""
        for key in result.entities.keys() & self.terms.keys():
            term = self.terms[key]
            if not TermMatcher.names(term, result.entities[key].name):
                continue  # "APPLE" is not the glossary's case-sensitive "Apple"
            result.entities[key] = Entity(key=key, name=term.name, label=term.label)
            if term.aliases:
                result.aliases.setdefault(key, set()).update(term.aliases)
        return result


def build_extractor(settings: Settings, spacy: SpacyExtractor, llm_model: Any = None) -> BoilerplateGate:
    """The configured extractor (``GRAPHRAG_EXTRACTOR``) behind the boilerplate gate."""
    name = settings.extractor
    if name in EXTRACTORS:
        inner = EXTRACTORS[name](settings, spacy, llm_model)
    elif ":" in name:
        inner = _from_path(name, settings)
    else:
        raise ConfigurationError(
            f"GRAPHRAG_EXTRACTOR: unknown extractor {name!r}; use {', '.join(EXTRACTORS)} or package.module:Class")
    return BoilerplateGate(inner, enabled=settings.boilerplate_filter,
                           repeated_min_documents=settings.boilerplate_repeated_documents,
                           terms=spacy.options.terms)


def with_glossary(gate: BoilerplateGate, settings: Settings, spacy: SpacyExtractor,
                  llm_model: Any = None) -> BoilerplateGate:
    """``gate`` (built by :func:`build_extractor`) for the glossary of ``spacy`` (a collection's own):
    a configured extractor around spaCy is built again around it; a plug-in extractor is kept, and its
    output still takes the glossary's names, labels and aliases."""
    name = settings.extractor
    inner = EXTRACTORS[name](settings, spacy, llm_model) if name in EXTRACTORS else gate.inner
    return BoilerplateGate(inner, enabled=gate.enabled, repeated_min_documents=gate.repeated_min_documents,
                           terms=spacy.options.terms)


def extract_options(settings: Settings) -> ExtractOptions:
    """The spaCy extractor's options from settings (with a folder of glossaries, the folder's default
    one; every file in it is checked)."""
    from graphrag.ingest.embed import resolve_precision

    glossary = load_setting(settings.entity_terms)
    return ExtractOptions(drop_labels=frozenset(settings.entity_drop_labels), noun_phrases=settings.noun_phrases,
                          code_entities=settings.code_entities, identifier_min_chunks=settings.identifier_min_chunks,
                          keyphrases=settings.keyphrases, keyphrase_min_chunks=settings.keyphrase_min_chunks,
                          precision=resolve_precision(settings.extraction_precision, setting="EXTRACTION"),
                          terms=glossary.terms, terms_fingerprint=glossary.fingerprint,
                          tech_names=tech_names() if settings.tech_terms else None)
