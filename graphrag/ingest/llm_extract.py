"""Optional LLM extractor: a pydantic-ai Agent with structured output (entities + typed relations).

Used instead of spaCy (``GRAPHRAG_LLM_EXTRACTOR_MODE=replace``) or beside it (``merge``) when
``GRAPHRAG_LLM_EXTRACTOR_MODEL`` names a model the user has credentials for. Never required.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from graphrag.ingest.extract import display_name, entity_key, unify_labels
from graphrag.ingest.textprep import reject_name
from graphrag.models import Entity, Extraction, Relation

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Extract the named entities and the relations between them from the text. "
    "Use short canonical names, an upper-case label such as PERSON, ORG, GPE, PRODUCT, EVENT, WORK, CONCEPT, "
    "and a lower-case verb lemma as the relation predicate. Only relations stated in the text."
)


class LLMEntity(BaseModel):
    name: str = Field(description="canonical entity name as written in the text")
    label: str = Field(description="upper-case type, e.g. PERSON, ORG, GPE, PRODUCT, CONCEPT")


class LLMRelation(BaseModel):
    source: str = Field(description="name of the subject entity")
    predicate: str = Field(description="verb lemma, e.g. found, acquire, treat")
    target: str = Field(description="name of the object entity")


class LLMExtraction(BaseModel):
    entities: list[LLMEntity] = Field(default_factory=list)
    relations: list[LLMRelation] = Field(default_factory=list)


class LLMExtractor:
    """Runs the extraction agent on each chunk; the result has the same shape as spaCy's (entities
    keyed by normalised name, each with its majority label), so it fits the ``Extractor`` protocol."""

    def __init__(self, model: Any) -> None:
        from pydantic_ai import Agent

        self.agent: Agent[None, LLMExtraction] = Agent(model, output_type=LLMExtraction, instructions=INSTRUCTIONS)

    def extract_many(self, documents: Sequence[Sequence[str]]) -> list[Extraction]:
        return [self._document(texts) for texts in documents]

    def _document(self, texts: Sequence[str]) -> Extraction:
        result = Extraction()
        for index, text in enumerate(texts):
            if not text.strip():
                continue  # a chunk the boilerplate gate blanked: nothing to pay a model for
            output = self.agent.run_sync(text).output
            self._merge_chunk(output, index, text, result)
        return unify_labels(result)

    @staticmethod
    def _merge_chunk(output: LLMExtraction, index: int, text: str, result: Extraction) -> None:
        by_name: dict[str, str] = {}
        for ent in output.entities:
            label = ent.label.strip().upper() or "CONCEPT"
            key = entity_key(ent.name, label)
            if key.startswith("|") or reject_name(display_name(ent.name)):
                continue
            result.entities.setdefault(key, Entity(key=key, name=display_name(ent.name), label=label))
            by_name[ent.name.strip().lower()] = key
            count = max(1, text.lower().count(ent.name.strip().lower()))
            result.mentions[(index, key)] = result.mentions.get((index, key), 0) + count
        for rel in output.relations:
            a, b = by_name.get(rel.source.strip().lower()), by_name.get(rel.target.strip().lower())
            if not a or not b or a == b:
                continue
            pair = (a, b) if a < b else (b, a)
            relation = result.relations.setdefault(pair, Relation(source=pair[0], target=pair[1]))
            relation.chunk_weights[index] = relation.chunk_weights.get(index, 0) + 1
            relation.predicates.add((rel.predicate.strip().lower(), index))


def merge_extractions(first: Extraction, second: Extraction) -> Extraction:
    """Union of two extractions of the same chunks (spaCy beside the LLM); a name both found keeps the
    second's (the LLM's) name and label."""
    out = Extraction(entities=dict(first.entities), mentions=dict(first.mentions), phrases=dict(first.phrases),
                     aliases={k: set(v) for k, v in first.aliases.items()})
    for key, names in second.aliases.items():
        out.aliases.setdefault(key, set()).update(names)
    out.relations = {k: Relation(v.source, v.target, dict(v.chunk_weights), set(v.predicates))
                     for k, v in first.relations.items()}
    for key, ent in second.entities.items():
        out.entities[key] = ent  # one entity per name: where both found it, the LLM's label is the better guess
    for mention, count in second.mentions.items():
        out.mentions[mention] = max(out.mentions.get(mention, 0), count)
    for pair, rel in second.relations.items():
        mine = out.relations.setdefault(pair, Relation(rel.source, rel.target))
        for index, weight in rel.chunk_weights.items():
            mine.chunk_weights[index] = max(mine.chunk_weights.get(index, 0), weight)
        mine.predicates |= rel.predicates
    return out


class CombinedExtractor:
    """spaCy and the LLM side by side, or the LLM alone."""

    def __init__(self, spacy_extractor: Any, llm: LLMExtractor, mode: str) -> None:
        self.spacy = spacy_extractor
        self.llm = llm
        self.mode = mode

    def extract_many(self, documents: Sequence[Sequence[str]]) -> list[Extraction]:
        llm = self.llm.extract_many(documents)
        if self.mode == "replace":
            return llm
        return [merge_extractions(a, b) for a, b in zip(self.spacy.extract_many(documents), llm, strict=True)]
