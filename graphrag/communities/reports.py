"""Community reports: what a community is about, in a few lines, with the chunks that say it.

The extractive report (the default, no model) names the community after its most central entities
and lists its key relations and representative sentences, each with the id of the chunk it comes
from. With a pydantic-ai model, the model writes the title and summary from the same material; the
evidence sentences stay below its summary, so every report keeps its provenance.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from graphrag.errors import one_line

log = logging.getLogger(__name__)

TITLE_ENTITIES = 3  # names in an extractive title
LIST_ENTITIES = 10  # entities listed in a report
LIST_RELATIONS = 8
SENTENCES = 5
SENTENCE_CHARS = 320
_HEADING = re.compile(r"(?m)^\s{0,3}#{1,6}\s.*$")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[A-Z0-9])|\n{2,}")


@dataclass
class EntityInfo:
    id: str
    name: str
    label: str
    mentions: int = 0


@dataclass
class Material:
    """What a report is written from: entities by centrality, relations by weight, sentences by score."""

    entities: list[EntityInfo]
    size: int
    relations: list[tuple[str, str, float, list[str]]] = field(default_factory=list)  # (a, b, weight, predicates)
    sentences: list[tuple[str, str]] = field(default_factory=list)  # (sentence, chunk id)


@dataclass
class Report:
    title: str
    text: str
    generated: bool = False  # written by a model

    @property
    def embedding_text(self) -> str:
        return f"{self.title}\n{self.text}"


def split_sentences(text: str) -> list[str]:
    """Sentences of a chunk (a light rule: end punctuation followed by a capital, or a blank line)."""
    text = _HEADING.sub("", text)  # Markdown headings are no sentences
    return [s for s in (" ".join(p.split()) for p in _SENTENCE_SPLIT.split(text)) if s]


def _contains(sentence_lower: str, name_lower: str) -> bool:
    # Whole-word containment: "Mars" must not match "Marshall".
    return re.search(rf"(?<!\w){re.escape(name_lower)}(?!\w)", sentence_lower) is not None


def pick_sentences(chunks: Sequence[tuple[str, str]], weights: dict[str, float], limit: int = SENTENCES,
                   per_chunk: int = 2) -> list[tuple[str, str]]:
    """The sentences of ``chunks`` (``(chunk id, text)``, best chunk first) that name the most central
    entities (``weights``: lower-cased name -> centrality), at most ``per_chunk`` from one chunk."""
    scored: list[tuple[float, int, int, str, str]] = []
    names = [n for n in weights if len(n) > 1]
    for order, (chunk_id, text) in enumerate(chunks):
        for position, sentence in enumerate(split_sentences(text)):
            lower = sentence.lower()
            score = sum(weights[n] for n in names if _contains(lower, n))
            if score > 0:
                scored.append((-score, order, position, sentence, chunk_id))
    scored.sort()
    picked: list[tuple[str, str]] = []
    taken: dict[str, int] = {}
    seen: set[str] = set()
    for _, _, _, sentence, chunk_id in scored:
        if taken.get(chunk_id, 0) >= per_chunk or sentence in seen:
            continue
        seen.add(sentence)
        taken[chunk_id] = taken.get(chunk_id, 0) + 1
        picked.append((_clip(sentence, SENTENCE_CHARS), chunk_id))
        if len(picked) >= limit:
            break
    return picked


def _clip(text: str, chars: int) -> str:
    if len(text) <= chars:
        return text
    cut = text[:chars]
    space = cut.rfind(" ")
    return (cut[:space] if space > chars * 0.7 else cut).rstrip(" ,;:") + " …"


def extractive_title(material: Material) -> str:
    """The community named after its most central entities: "A, B and C" (+ how many more)."""
    names = [e.name for e in material.entities[:TITLE_ENTITIES]]
    if not names:
        return "Community"
    title = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    more = material.size - len(names)
    return f"{title} (+{more} more)" if more > 0 else title


def evidence_lines(material: Material) -> list[str]:
    return [f"- {sentence} [chunk {chunk_id}]" for sentence, chunk_id in material.sentences]


def extractive_report(material: Material) -> Report:
    """The report without a model: central entities, key relations, representative sentences."""
    listed = ", ".join(f"{e.name} ({e.label})" for e in material.entities[:LIST_ENTITIES])
    more = material.size - min(len(material.entities), LIST_ENTITIES)
    lines = [f"{material.size} entities, most central first: {listed}" + (f" and {more} more." if more > 0 else ".")]
    if material.relations:
        lines.append("Key relations:")
        for a, b, weight, predicates in material.relations[:LIST_RELATIONS]:
            verbs = f" ({', '.join(predicates[:3])})" if predicates else ""
            lines.append(f"- {a} — {b}{verbs}, {weight:g} co-occurrences")
    if material.sentences:
        lines.append("Representative sentences:")
        lines.extend(evidence_lines(material))
    return Report(extractive_title(material), "\n".join(lines))


# --- written by a model --------------------------------------------------------------------------

INSTRUCTIONS = (
    "You write a short report about one community of a knowledge graph: a group of entities that the "
    "documents mention together. From the entities, relations and sentences given, write a specific title "
    "(at most 12 words) and a summary of 2-5 sentences saying what the community is about. Use only the "
    "material given; do not add facts."
)


class WrittenReport(BaseModel):
    """A model's report of one community."""

    title: str = Field(description="specific title of at most 12 words")
    summary: str = Field(description="2-5 sentences on what the community is about")


def report_prompt(material: Material) -> str:
    """The material of one community as the model reads it."""
    parts = ["Entities (most central first):"]
    parts += [f"- {e.name} ({e.label}), mentioned in {e.mentions} chunks" for e in material.entities[:LIST_ENTITIES]]
    if material.relations:
        parts.append("Relations:")
        parts += [f"- {a} — {b}" + (f" ({', '.join(p[:3])})" if p else "") for a, b, _, p in
                  material.relations[:LIST_RELATIONS]]
    if material.sentences:
        parts.append("Sentences:")
        parts += [f"- {s}" for s, _ in material.sentences]
    return "\n".join(parts)


async def written_reports(model: Any, materials: Sequence[Material], *, concurrency: int = 4) -> list[Report | None]:
    """Reports written by ``model`` (a pydantic-ai model or model string), ``None`` where it failed
    (that community keeps its extractive report; the failure is logged)."""
    from pydantic_ai import Agent

    agent: Agent[None, WrittenReport] = Agent(model, output_type=WrittenReport, instructions=INSTRUCTIONS)
    gate = asyncio.Semaphore(concurrency)

    async def one(material: Material) -> Report | None:
        async with gate:
            try:
                out = (await agent.run(report_prompt(material))).output
            except Exception as exc:  # noqa: BLE001 - one community's failure must not stop the others
                log.warning("community report by the model failed; keeping the extractive one: %s", one_line(exc))
                return None
        title = " ".join(out.title.split())[:200] or extractive_title(material)
        text = out.summary.strip()
        if material.sentences:
            text += "\nRepresentative sentences:\n" + "\n".join(evidence_lines(material))
        return Report(title, text, generated=True)

    return list(await asyncio.gather(*(one(m) for m in materials)))
