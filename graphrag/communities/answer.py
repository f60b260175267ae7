"""``global_answer(model, query, reports)``: one answer to a corpus-level question from community reports.

Map: each report (a ``global`` search hit) goes to the model with the question; the model answers from
that report alone and rates how much the report helps (0-100). Reduce: the helpful partial answers,
most relevant first and within a character budget, go to the model once more, which merges them into
one answer citing the reports as [C1], [C2], ... Without a model the answer is extractive: the best
reports' titles with their first representative sentence.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from graphrag.errors import one_line

log = logging.getLogger(__name__)

MAP_INSTRUCTIONS = (
    "You help answer a question about a whole collection of documents. You are given ONE report about a group "
    "of related entities in the collection. Answer the question using only this report, in at most five "
    "sentences, and rate from 0 to 100 how much the report helps answer it (0: not at all). Do not add facts."
)
REDUCE_INSTRUCTIONS = (
    "You answer a question about a whole collection of documents from partial answers, each drawn from one "
    "report and labelled [C<n>]. Merge them into one coherent answer, most important points first; cite the "
    "labels of the partial answers each point comes from, e.g. [C1][C3]. Use only what the partial answers say."
)
MAX_REPORTS = 20
REPORT_CHARS = 4000
REDUCE_CHARS = 16000
EXTRACTIVE_REPORTS = 5


class PartialAnswer(BaseModel):
    """What one report says about the question."""

    answer: str = Field(description="the answer from this report alone (empty when it does not help)")
    relevance: int = Field(ge=0, le=100, description="how much this report helps answer the question, 0-100")


class Partial(BaseModel):
    label: str = Field(description="how the answer cites it, e.g. C1")
    community_id: str
    title: str
    relevance: int
    answer: str


class GlobalAnswer(BaseModel):
    """The answer, the partial answers it was reduced from, and the reports and chunks behind it."""

    query: str
    answer: str
    generated: bool = Field(description="written by the model (false: extractive)")
    partials: list[Partial] = Field(default_factory=list)
    communities: list[str] = Field(default_factory=list, description="ids of the reports the answer used")
    chunk_ids: list[str] = Field(default_factory=list, description="evidence chunks of those reports")


def _community(report: dict[str, Any]) -> dict[str, Any]:
    return report.get("community") or {"id": report.get("chunk_id", ""), "chunk_ids": []}


def _first_sentence(report: dict[str, Any]) -> str:
    for line in str(report.get("content", "")).splitlines():
        if line.startswith("- ") and "[chunk " in line:
            return line[2:line.rfind(" [chunk ")].strip()
    return ""


def _extractive(query: str, reports: Sequence[dict[str, Any]]) -> GlobalAnswer:
    used = list(reports[:EXTRACTIVE_REPORTS])
    lines = []
    for n, report in enumerate(used, 1):
        sentence = _first_sentence(report)
        lines.append(f"{n}. {report['title']}" + (f": {sentence}" if sentence else "") + f" [C{n}]")
    answer = ("The collection's communities that best fit the question:\n" + "\n".join(lines)) if lines else (
        "No community reports are available: run `graphrag communities --collection C` first.")
    return GlobalAnswer(query=query, answer=answer, generated=False,
                        communities=[_community(r)["id"] for r in used],
                        chunk_ids=list(dict.fromkeys(c for r in used for c in _community(r).get("chunk_ids", []))))


async def global_answer(model: Any, query: str, reports: Sequence[dict[str, Any]], *, concurrency: int = 4,
                        max_reports: int = MAX_REPORTS) -> GlobalAnswer:
    """Answer ``query`` from community ``reports`` (hits of the ``global`` search, best first).

    Args:
        model: A pydantic-ai model or model string; ``None`` gives the extractive answer.
        query: The question.
        reports: Community report hits (``kind == "community"``), best first; at most ``max_reports`` are read.
        concurrency: Map calls in flight at once.

    A report whose map call fails is left out (logged); if every call fails, the error propagates.
    """
    reports = [r for r in reports if r.get("kind", "community") == "community"][:max_reports]
    if model is None or not reports:
        return _extractive(query, reports)
    from pydantic_ai import Agent

    mapper: Agent[None, PartialAnswer] = Agent(model, output_type=PartialAnswer, instructions=MAP_INSTRUCTIONS)
    reducer: Agent[None, str] = Agent(model, output_type=str, instructions=REDUCE_INSTRUCTIONS)
    gate = asyncio.Semaphore(concurrency)

    async def one(report: dict[str, Any]) -> PartialAnswer | BaseException:
        prompt = f"Question: {query}\n\nReport: {report['title']}\n{str(report.get('content', ''))[:REPORT_CHARS]}"
        async with gate:
            try:
                return (await mapper.run(prompt)).output
            except Exception as exc:  # noqa: BLE001 - one report's failure leaves the others
                log.warning("global answer: map call failed for a report: %s", one_line(exc))
                return exc

    outcomes = await asyncio.gather(*(one(r) for r in reports))
    if all(isinstance(o, BaseException) for o in outcomes):
        raise next(o for o in outcomes if isinstance(o, BaseException))
    ranked = sorted(((o, r) for o, r in zip(outcomes, reports, strict=True)
                     if isinstance(o, PartialAnswer) and o.relevance > 0 and o.answer.strip()),
                    key=lambda pair: -pair[0].relevance)
    partials: list[Partial] = []
    budget = REDUCE_CHARS
    for n, (out, report) in enumerate(ranked, 1):
        if budget - len(out.answer) < 0 and partials:
            break
        budget -= len(out.answer)
        partials.append(Partial(label=f"C{n}", community_id=_community(report)["id"], title=report["title"],
                                relevance=out.relevance, answer=out.answer.strip()))
    if not partials:
        return GlobalAnswer(query=query, answer="None of the community reports helps answer this question.",
                            generated=True)
    material = "\n\n".join(f"[{p.label}] (relevance {p.relevance}) {p.title}\n{p.answer}" for p in partials)
    answer = (await reducer.run(f"Question: {query}\n\nPartial answers:\n{material}")).output
    used = {p.community_id for p in partials}
    chunk_ids = [c for r in reports if _community(r)["id"] in used for c in _community(r).get("chunk_ids", [])]
    return GlobalAnswer(query=query, answer=answer.strip(), generated=True, partials=partials,
                        communities=[p.community_id for p in partials], chunk_ids=list(dict.fromkeys(chunk_ids)))
