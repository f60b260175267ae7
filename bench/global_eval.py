"""Global questions: community reports (mode ``global``) against chunk-only retrieval, judged pairwise.

For each question of ``bench/global_questions.json`` (corpus-level questions, each with the topics a
good answer covers, written before any system output was seen):

- (a) **global**: the ``global`` search's ranked community reports (title + report text);
- (b) **chunks**: the top chunks of a chunk-only search (``--chunk-mode``, hybrid by default);

both cut to the same token budget (``--budgets``; tokens counted the same way on both sides: words and
punctuation marks, see :func:`count_tokens`). The two contexts are then judged pairwise for
**comprehensiveness** and **diversity**:

- the **heuristic judge** (always): comprehensiveness is the share of the question's topics the text
  covers (a topic is covered when one of its terms occurs, see :func:`term_pattern`); diversity is the mean
  of three shares: distinct documents of the evidence (of all documents in the collection), distinct
  source folders (of all), and distinct level-0 communities touched (of all). A side wins a criterion
  when its score is higher by more than ``--tie-margin``; otherwise it is a tie.
- the **LLM judge** (when ``GRAPHRAG_JUDGE_MODEL`` or ``GRAPHRAG_ANSWER_MODEL`` names a pydantic-ai model):
  the model compares the two texts on both criteria (the GraphRAG paper's definitions) twice, in both
  orders; a side wins only when both orders agree, otherwise it is a tie. With ``GRAPHRAG_ANSWER_MODEL``
  the texts compared are answers: the global side's map-reduce answer
  (:func:`graphrag.communities.answer.global_answer`) and an answer written from the chunks; without it,
  the retrieved contexts themselves.

It also measures the reports as retrieval: the recall of each question's topics in the top-N reports
(and, for comparison, in the top-N chunks).

    python bench/global_corpus.py --out /work/globalcorpus ...            # the corpus (outside the repo)
    python bench/global_eval.py --corpus /work/globalcorpus               # ingest, communities, judge

Writes ``bench/results/global_eval.json``. Needs the local services (started on demand, under
GRAPHRAG_HOME).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import re
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

BENCH = Path(__file__).resolve().parent
QUESTIONS = BENCH / "global_questions.json"
CRITERIA = ("comprehensiveness", "diversity")
RECALL_AT = (1, 3, 5, 10)

# --- questions and topic matching (pure) ---------------------------------------------------------


@dataclass(frozen=True)
class Topic:
    name: str
    terms: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    id: str
    question: str
    topics: tuple[Topic, ...]
    sources: tuple[str, ...] = ()


def load_questions(path: Path = QUESTIONS) -> list[Question]:
    """The questions of ``path`` (the format of bench/global_questions.json)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for q in data["questions"]:
        topics = tuple(Topic(t["name"], tuple(t["terms"])) for t in q["topics"])
        if not topics or any(not t.terms for t in topics):
            raise ValueError(f"{q['id']}: every question needs topics, every topic terms")
        out.append(Question(q["id"], q["question"], topics, tuple(q.get("sources", ()))))
    if len({q.id for q in out}) != len(out):
        raise ValueError("question ids must be unique")
    return out


def term_pattern(term: str) -> re.Pattern[str]:
    """How a topic term is found in a text: case-insensitively, starting at a word start when the term
    starts with a letter or digit (it may end inside a word: 'retri' finds 'retries'); a term written
    '=word' must also end at a word end ('=exa' does not find 'example')."""
    whole = term.startswith("=")
    body = term[1:] if whole else term
    if not body:
        raise ValueError("empty topic term")
    pattern = re.escape(body.lower())
    if body[0].isalnum() or body[0] == "_":
        pattern = r"(?<![\w])" + pattern
    if whole and (body[-1].isalnum() or body[-1] == "_"):
        pattern += r"(?![\w])"
    return re.compile(pattern, re.IGNORECASE)


def covered_topics(topics: Sequence[Topic], text: str) -> list[str]:
    """Names of the ``topics`` that ``text`` covers (one of their terms occurs in it)."""
    return [t.name for t in topics if any(term_pattern(term).search(text) for term in t.terms)]


def topic_recall(topics: Sequence[Topic], text: str) -> float:
    """Share of ``topics`` covered by ``text``."""
    return len(covered_topics(topics, text)) / len(topics) if topics else 0.0


# --- equal token budgets (pure) ------------------------------------------------------------------

_TOKEN = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """Tokens as both sides are budgeted: runs of word characters and single punctuation marks."""
    return len(_TOKEN.findall(text))


def fill_budget(texts: Sequence[str], budget: int) -> list[str]:
    """The leading ``texts`` that fit in ``budget`` tokens, in order; the first that does not fit is cut
    to the tokens left, so both sides get the same budget exactly (or less when they run out of text)."""
    out: list[str] = []
    left = budget
    for text in texts:
        if left <= 0:
            break
        tokens = list(_TOKEN.finditer(text))
        if len(tokens) <= left:
            out.append(text)
            left -= len(tokens)
        else:
            out.append(text[:tokens[left - 1].end()])
            left = 0
    return out


# --- evidence and the heuristic judge (pure) -----------------------------------------------------

_CHUNK_MARK = re.compile(r"\[chunk ([0-9a-fA-F-]{36})\]")


def cited_chunks(text: str) -> list[str]:
    """Chunk ids a report text cites as ``[chunk <id>]``, in order, once each."""
    return list(dict.fromkeys(m.group(1) for m in _CHUNK_MARK.finditer(text)))


@dataclass
class Evidence:
    """What one side put in front of the judge: the text, and where it comes from."""

    text: str
    items: int = 0
    tokens: int = 0
    documents: set[str] = field(default_factory=set)
    groups: set[str] = field(default_factory=set)
    communities: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class Totals:
    """The collection's sizes the diversity shares are normalised by."""

    documents: int
    groups: int
    communities: int


def diversity(e: Evidence, totals: Totals) -> float:
    """Mean of the shares of the collection's documents, source folders and level-0 communities the
    evidence covers (each share capped at 1)."""
    shares = [min(1.0, len(e.documents) / totals.documents) if totals.documents else 0.0,
              min(1.0, len(e.groups) / totals.groups) if totals.groups else 0.0,
              min(1.0, len(e.communities) / totals.communities) if totals.communities else 0.0]
    return sum(shares) / len(shares)


Winner = Literal["a", "b", "tie"]


def verdict(score_a: float, score_b: float, margin: float) -> Winner:
    """``a`` or ``b`` when its score is higher by more than ``margin``, else ``tie``."""
    if score_a - score_b > margin:
        return "a"
    if score_b - score_a > margin:
        return "b"
    return "tie"


def heuristic_judge(question: Question, a: Evidence, b: Evidence, totals: Totals,
                    margin: float = 0.05) -> dict[str, dict[str, Any]]:
    """The transparent judge: per criterion, both scores and the winner (``a``, ``b`` or ``tie``)."""
    out: dict[str, dict[str, Any]] = {}
    comp_a, comp_b = topic_recall(question.topics, a.text), topic_recall(question.topics, b.text)
    out["comprehensiveness"] = {"a": round(comp_a, 4), "b": round(comp_b, 4),
                                "winner": verdict(comp_a, comp_b, margin)}
    div_a, div_b = diversity(a, totals), diversity(b, totals)
    out["diversity"] = {"a": round(div_a, 4), "b": round(div_b, 4), "winner": verdict(div_a, div_b, margin)}
    return out


def tally(winners: Sequence[Winner]) -> dict[str, int]:
    """Wins, ties and losses of side ``a`` (the global side)."""
    return {"wins": sum(w == "a" for w in winners), "ties": sum(w == "tie" for w in winners),
            "losses": sum(w == "b" for w in winners)}


# --- the LLM judge (pydantic-ai) -----------------------------------------------------------------

JUDGE_INSTRUCTIONS = (
    "You compare two answers to a question about a whole collection of documents, on two criteria. "
    "Comprehensiveness: how much detail the answer provides to cover all aspects and details of the question. "
    "Diversity: how varied and rich the answer is in providing different perspectives and insights on the "
    "question. For each criterion say which answer is better: '1', '2', or 'tie' when neither is clearly "
    "better. Judge the content only, not the order in which the answers are shown."
)


class JudgeVerdict(BaseModel):
    """The judge model's verdict on one ordering of the two answers."""

    comprehensiveness: Literal["1", "2", "tie"]
    diversity: Literal["1", "2", "tie"]
    reason: str = Field("", description="one or two sentences on why")


def judge_prompt(question: str, first: str, second: str) -> str:
    return f"Question: {question}\n\n--- Answer 1 ---\n{first}\n\n--- Answer 2 ---\n{second}"


def combine_orders(first: JudgeVerdict, second: JudgeVerdict) -> dict[str, dict[str, Any]]:
    """Both orderings' verdicts as one: ``first`` saw (a, b), ``second`` saw (b, a). A side wins a
    criterion only when both orderings prefer it; any disagreement is a tie."""
    out: dict[str, dict[str, Any]] = {}
    for criterion in CRITERIA:
        v1 = {"1": "a", "2": "b", "tie": "tie"}[getattr(first, criterion)]
        v2 = {"1": "b", "2": "a", "tie": "tie"}[getattr(second, criterion)]
        out[criterion] = {"winner": v1 if v1 == v2 else "tie", "orders": [v1, v2]}
    out["reasons"] = {"a_first": first.reason, "b_first": second.reason}  # type: ignore[assignment]
    return out


async def llm_judge(model: Any, question: str, a: str, b: str) -> dict[str, dict[str, Any]]:
    """Judge ``a`` (global) against ``b`` (chunks) with ``model`` (a pydantic-ai model or model string),
    once in each order."""
    from pydantic_ai import Agent

    judge: Agent[None, JudgeVerdict] = Agent(model, output_type=JudgeVerdict, instructions=JUDGE_INSTRUCTIONS)
    first = (await judge.run(judge_prompt(question, a, b))).output
    second = (await judge.run(judge_prompt(question, b, a))).output
    return combine_orders(first, second)


CHUNK_ANSWER_INSTRUCTIONS = (
    "You answer a question about a whole collection of documents from the numbered passages given. Answer "
    "as fully as the passages allow, most important points first, citing the passages as [n]. Use only what "
    "the passages say."
)


async def chunk_answer(model: Any, question: str, passages: Sequence[str]) -> str:
    """The chunk side's answer: ``model`` answers from the budgeted passages."""
    from pydantic_ai import Agent

    agent: Agent[None, str] = Agent(model, output_type=str, instructions=CHUNK_ANSWER_INSTRUCTIONS)
    material = "\n\n".join(f"[{n}] {p}" for n, p in enumerate(passages, 1))
    return (await agent.run(f"Question: {question}\n\nPassages:\n{material}")).output.strip()


# --- the run against the stores --------------------------------------------------------------------


def _group(source: str) -> str:
    """The source folder of a corpus file (pydantic-ai, rust-book, think-js)."""
    return Path(source).parent.name


def _report_text(hit: dict[str, Any]) -> str:
    return f"{hit['title']}\n{hit.get('content', '')}"


def _level0(hit: dict[str, Any]) -> str:
    c = hit["community"]
    return c["id"] if c["level"] == 0 or not c.get("parent") else c["parent"]


async def _cypher(rt: Any, name: str, **params: Any) -> list[dict[str, Any]]:
    from bench.common import bench_cypher

    records, _, _ = await rt.neo4j.driver.execute_query(bench_cypher("global_eval", name), parameters_=params,
                                                        database_=rt.neo4j.database)
    return [dict(r) for r in records]


class Lookup:
    """Chunk -> document source and chunk -> level-0 communities, fetched once per chunk."""

    def __init__(self, rt: Any, collection: str) -> None:
        self.rt, self.collection = rt, collection
        self.source: dict[str, str] = {}
        self.communities: dict[str, set[str]] = {}

    async def load(self, chunk_ids: Sequence[str], known_sources: dict[str, str] | None = None) -> None:
        self.source.update(known_sources or {})
        missing = sorted({c for c in chunk_ids if c not in self.source})
        if missing:
            rows = await self.rt.postgres.q.documents.chunks_by_id([uuid.UUID(c) for c in missing],
                                                [self.collection])
            self.source.update({str(r["id"]): r["source"] for r in rows})
        todo = sorted({c for c in chunk_ids if c not in self.communities})
        if todo:
            for row in await _cypher(self.rt, "chunk_communities", chunk_ids=todo):
                self.communities[row["chunk_id"]] = set(row["communities"])
            for c in todo:
                self.communities.setdefault(c, set())

    def evidence(self, text: str, items: int, chunk_ids: Sequence[str], own: Sequence[str] = ()) -> Evidence:
        sources = {self.source[c] for c in chunk_ids if c in self.source}
        communities = set(own).union(*(self.communities.get(c, set()) for c in chunk_ids))
        return Evidence(text=text, items=items, tokens=count_tokens(text), documents=sources,
                        groups={_group(s) for s in sources}, communities=communities)


def global_side(reports: Sequence[dict[str, Any]], budget: int, lookup: Lookup) -> tuple[Evidence, list[str]]:
    """The reports that fit the budget as evidence: their text, the documents of the chunks cited in the
    text that fits, and their own level-0 communities plus those the cited chunks touch."""
    texts = fill_budget([_report_text(r) for r in reports], budget)
    cited = [c for t in texts for c in cited_chunks(t)]
    return lookup.evidence("\n\n".join(texts), len(texts), cited, [_level0(r) for r in reports[:len(texts)]]), texts


def chunk_side(chunks: Sequence[dict[str, Any]], budget: int, lookup: Lookup) -> tuple[Evidence, list[str]]:
    """The chunks that fit the budget as evidence: their text, documents and the level-0 communities of
    the entities they mention."""
    texts = fill_budget([c["content"] for c in chunks], budget)
    ids = [c["chunk_id"] for c in chunks[:len(texts)]]
    return lookup.evidence("\n\n".join(texts), len(texts), ids), texts


def budgeted_reports(reports: Sequence[dict[str, Any]], texts: Sequence[str]) -> list[dict[str, Any]]:
    """The report hits behind budgeted ``texts`` (title + report, the last maybe cut), with the report
    text as budgeted: what the map-reduce answer may read."""
    out = []
    for hit, text in zip(reports, texts, strict=False):
        title, _, content = text.partition("\n")
        out.append({**hit, "title": title, "content": content})
    return out


async def ensure_corpus(rt: Any, corpus: Path, collection: str) -> dict[str, Any]:
    ingestor = await rt.ingestor()
    t = time.perf_counter()
    report = await ingestor.ingest_paths([corpus], collection=collection)
    return {"files": report.files, "ingested": report.ingested, "updated": report.updated,
            "unchanged": report.unchanged, "failed": report.failed, "seconds": round(time.perf_counter() - t, 2)}


async def ensure_communities(rt: Any, collection: str, force: bool) -> dict[str, Any]:
    from graphrag.cli_communities import recompute
    from graphrag.communities.build import list_communities

    stored = await list_communities(rt.postgres, rt.neo4j, [collection], limit=100_000)
    if stored and not force and not any(c["stale"] for c in stored):
        levels: dict[str, int] = {}
        for c in stored:
            levels[str(c["level"])] = levels.get(str(c["level"]), 0) + 1
        return {"reused": True, "communities": len(stored), "levels": levels,
                "computed_at": max(str(c["computed_at"]) for c in stored)}
    summary = await recompute(rt, collection)
    return {"reused": False, **{k: summary[k] for k in ("communities", "levels", "entities", "graph_entities",
                                                         "relations", "generated_reports", "seconds", "stages")
                                if k in summary}}


def summarise(rows: list[dict[str, Any]], budget: int, judge: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for criterion in CRITERIA:
        verdicts = [r["budgets"][str(budget)][judge][criterion] for r in rows
                    if judge in r["budgets"][str(budget)]]
        if not verdicts:
            continue
        out[criterion] = tally([v["winner"] for v in verdicts])
        if "a" in verdicts[0]:
            out[criterion]["mean_global"] = round(sum(v["a"] for v in verdicts) / len(verdicts), 4)
            out[criterion]["mean_chunks"] = round(sum(v["b"] for v in verdicts) / len(verdicts), 4)
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from bench.common import bench_sql, machine
    from graphrag.communities.answer import global_answer
    from graphrag.config import Settings
    from graphrag.runtime import open_services

    questions = load_questions(args.questions)[:args.limit or None]
    answer_model = os.environ.get("GRAPHRAG_ANSWER_MODEL") or None
    judge_model = os.environ.get("GRAPHRAG_JUDGE_MODEL") or answer_model
    corpus_docs = args.corpus / "docs" if (args.corpus / "docs").is_dir() else args.corpus
    manifest_path = args.corpus / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else None
    budgets = sorted(args.budgets)
    async with open_services(Settings()) as rt:
        result: dict[str, Any] = {
            "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "machine": await machine(rt),
            "collection": args.collection,
            "corpus": {"path": str(args.corpus), "sources": manifest["sources"] if manifest else None},
        }
        print("ingesting", corpus_docs, flush=True)
        result["ingest"] = await ensure_corpus(rt, corpus_docs, args.collection)
        totals_row = await rt.postgres.q.documents.totals(args.collection)
        result["corpus"].update(documents=totals_row.documents, chunks=totals_row.chunks)
        print("communities", flush=True)
        result["communities"] = await ensure_communities(rt, args.collection, args.recompute)
        level0 = (await _cypher(rt, "level0_communities", collection=args.collection))[0]["communities"]
        router = await rt.router()
        lookup = Lookup(rt, args.collection)
        sources_rows = await rt.postgres.pool.fetch(bench_sql("global_eval", "collection_sources"), args.collection)
        groups = {_group(r["source"]) for r in sources_rows}
        totals = Totals(documents=len(sources_rows), groups=len(groups), communities=level0)
        result["totals"] = {"documents": totals.documents, "groups": sorted(groups), "level0_communities": level0}
        rows = []
        for q in questions:
            t = time.perf_counter()
            g = await router.search(q.question, mode="global", collections=[args.collection], limit=args.reports)
            c = await router.search(q.question, mode=args.chunk_mode, collections=[args.collection],
                                    limit=args.chunks)
            reports, chunks = g.to_dict()["results"], c.to_dict()["results"]
            await lookup.load([x for r in reports for x in cited_chunks(_report_text(r))] +
                              [h["chunk_id"] for h in chunks], {h["chunk_id"]: h["source"] for h in chunks})
            row: dict[str, Any] = {
                "id": q.id, "question": q.question, "topics": len(q.topics),
                "global_top": [r["title"] for r in reports[:5]],
                "chunks_top": [f"{_group(h['source'])}/{Path(h['source']).name}" for h in chunks[:5]],
                "recall": {
                    "reports": {f"@{n}": round(topic_recall(q.topics, "\n".join(_report_text(r) for r in reports[:n])), 4)
                                for n in RECALL_AT},
                    "chunks": {f"@{n}": round(topic_recall(q.topics, "\n".join(h["content"] for h in chunks[:n])), 4)
                               for n in RECALL_AT},
                },
                "budgets": {},
            }
            for budget in budgets:
                a, a_texts = global_side(reports, budget, lookup)
                b, b_texts = chunk_side(chunks, budget, lookup)
                entry: dict[str, Any] = {
                    "global": {"items": a.items, "tokens": a.tokens, "documents": len(a.documents),
                               "groups": sorted(a.groups), "communities": len(a.communities),
                               "covered": covered_topics(q.topics, a.text)},
                    "chunks": {"items": b.items, "tokens": b.tokens, "documents": len(b.documents),
                               "groups": sorted(b.groups), "communities": len(b.communities),
                               "covered": covered_topics(q.topics, b.text)},
                    "heuristic": heuristic_judge(q, a, b, totals, args.tie_margin),
                }
                if judge_model and budget == args.headline:
                    if answer_model:
                        ga = await global_answer(answer_model, q.question, budgeted_reports(reports, a_texts))
                        text_a, text_b = ga.answer, await chunk_answer(answer_model, q.question, b_texts)
                        entry["answers"] = {"global": text_a, "chunks": text_b,
                                            "global_topics": covered_topics(q.topics, text_a),
                                            "chunks_topics": covered_topics(q.topics, text_b)}
                    else:
                        text_a, text_b = "\n\n".join(a_texts), "\n\n".join(b_texts)
                    entry["llm"] = await llm_judge(judge_model, q.question, text_a, text_b)
                row["budgets"][str(budget)] = entry
            row["seconds"] = round(time.perf_counter() - t, 2)
            h = row["budgets"][str(args.headline)]["heuristic"]
            print(f"{q.id} comp {h['comprehensiveness']['a']:.2f}/{h['comprehensiveness']['b']:.2f} "
                  f"div {h['diversity']['a']:.3f}/{h['diversity']['b']:.3f} "
                  f"recall@5 {row['recall']['reports']['@5']:.2f}/{row['recall']['chunks']['@5']:.2f}", flush=True)
            rows.append(row)
        result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    n = len(rows)
    result["method"] = {
        "questions": str(args.questions.relative_to(BENCH.parent)) if args.questions.is_relative_to(BENCH.parent)
        else str(args.questions),
        "global": f"mode global, top {args.reports} community reports (title + report text)",
        "chunks": f"mode {args.chunk_mode}, top {args.chunks} chunks",
        "budgets": budgets, "headline_budget": args.headline,
        "token_count": "runs of word characters and single punctuation marks, the same on both sides",
        "heuristic_judge": "comprehensiveness = share of the question's topics covered (a term occurs); diversity = "
                           "mean of the shares of documents, source folders and level-0 communities covered; a "
                           f"side wins when ahead by more than {args.tie_margin}",
        "llm_judge": {"judge_model": judge_model, "answer_model": answer_model,
                      "compared": ("answers" if answer_model else "contexts") if judge_model else None,
                      "note": None if judge_model else "no model configured: the LLM judge did not run"},
    }
    result["summary"] = {
        "questions": n,
        "heuristic": {str(b): summarise(rows, b, "heuristic") for b in budgets},
        "llm": summarise(rows, args.headline, "llm") if judge_model else None,
        "topic_recall": {side: {k: round(sum(r["recall"][side][k] for r in rows) / n, 4) for k in
                                (f"@{m}" for m in RECALL_AT)} for side in ("reports", "chunks")} if n else {},
    }
    result["per_question"] = rows
    return result


def main() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(BENCH.parent))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("/work/globalcorpus"))
    parser.add_argument("--collection", default="globaleval")
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--budgets", type=lambda s: [int(x) for x in s.split(",")], default=[1000, 2000, 4000],
                        help="token budgets, comma-separated")
    parser.add_argument("--headline", type=int, default=2000, help="the budget the LLM judge runs at")
    parser.add_argument("--chunk-mode", default="hybrid", choices=["hybrid", "vector", "keyword", "graph"],
                        help="the chunk-only search (auto would route these questions to global)")
    parser.add_argument("--chunks", type=int, default=50, help="chunks retrieved before budgeting")
    parser.add_argument("--reports", type=int, default=20, help="reports retrieved before budgeting")
    parser.add_argument("--tie-margin", type=float, default=0.05)
    parser.add_argument("--recompute", action="store_true", help="recompute communities even when fresh")
    parser.add_argument("--limit", type=int, default=0, help="only the first N questions")
    parser.add_argument("--out", default="global_eval.json")
    args = parser.parse_args()
    if args.headline not in args.budgets:
        parser.error("--headline must be one of --budgets")
    from bench.common import write_result

    result = asyncio.run(run(args))
    path = write_result(args.out, result)
    print(json.dumps(result["summary"], indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
