"""The global-question evaluation's judges (bench/global_eval.py): topic matching, equal token budgets, the
heuristic judge, and the LLM judge's plumbing with pydantic-ai's FunctionModel standing in for a model
(pure, no servers); and the evidence the judges read, taken from the real stores (one test)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from bench.common import bench_cypher, bench_sql
from bench.global_eval import (
    Evidence,
    JudgeVerdict,
    Lookup,
    Question,
    Topic,
    Totals,
    budgeted_reports,
    chunk_answer,
    chunk_side,
    cited_chunks,
    combine_orders,
    count_tokens,
    covered_topics,
    diversity,
    fill_budget,
    global_side,
    heuristic_judge,
    llm_judge,
    load_questions,
    tally,
    term_pattern,
    topic_recall,
    verdict,
)
from graphrag.communities.build import compute_communities, list_communities
from graphrag.communities.search import global_cue
from graphrag.runtime import Runtime
from tests.helpers import rest_search

QUESTION = Question("q", "Which concurrency approaches are described across the collection?", (
    Topic("threads", ("thread",)),
    Topic("channels", ("channel", "mpsc")),
    Topic("mutex", ("mutex",)),
    Topic("async", ("async", "await")),
))
TOTALS = Totals(documents=10, groups=3, communities=4)



def test_terms_match_at_word_starts_and_whole_words_when_asked() -> None:
    assert term_pattern("retri").search("Tool RETRIES are counted")
    assert not term_pattern("rc<").search("Arc<T> is atomic"), "a term starts at a word start"
    assert term_pattern("rc<").search("Rc<T> counts references")
    assert term_pattern("exa").search("an example"), "a term may end inside a word"
    assert not term_pattern("=exa").search("Exact examples") and term_pattern("=exa").search("the Exa tool")
    assert not term_pattern("=list").search("Listing 4-1") and term_pattern("=list").search("a list of values")
    # Terms that start with punctuation have no word-start condition.
    assert term_pattern("&str").search("a string slice is written &str")
    assert term_pattern("#[test]").search("annotate it with #[test] first")
    assert term_pattern("++").search("i++ adds one")
    with pytest.raises(ValueError):
        term_pattern("=")


def test_topic_coverage_counts_each_topic_once() -> None:
    text = "Spawn a thread, send over an mpsc channel and a channel again; lock a Mutex."
    assert covered_topics(QUESTION.topics, text) == ["threads", "channels", "mutex"]
    assert topic_recall(QUESTION.topics, text) == pytest.approx(0.75)
    assert topic_recall(QUESTION.topics, "") == 0.0


def test_budget_is_filled_exactly_in_order_and_the_last_text_cut() -> None:
    texts = ["one two three.", "four five six seven", "eight nine"]
    assert [count_tokens(t) for t in texts] == [4, 4, 2]
    out = fill_budget(texts, 6)
    assert out == ["one two three.", "four five"]
    assert sum(count_tokens(t) for t in out) == 6
    assert fill_budget(texts, 100) == texts, "running out of text gives less than the budget"
    assert fill_budget(texts, 2) == ["one two"], "even the first text is cut to the budget"
    assert fill_budget([], 10) == [] and fill_budget(texts, 0) == []


def test_report_citations_and_budgeted_reports() -> None:
    a, b = "0b4e4c8e-7b8e-4c53-9d0a-1f0c3d2e5a61", "5e3f1c2a-9d4b-4e7a-8c6f-2a1b0c9d8e7f"
    text = f"Title\n- first [chunk {a}]\n- second [chunk {b}]\n- again [chunk {a}]\n- broken [chunk 12]"
    assert cited_chunks(text) == [a, b]
    hits = [{"title": "T1", "content": "body one", "kind": "community"},
            {"title": "T2", "content": "body two is longer", "kind": "community"}]
    texts = fill_budget([f"{h['title']}\n{h['content']}" for h in hits], 5)
    assert budgeted_reports(hits, texts) == [
        {"title": "T1", "content": "body one", "kind": "community"},
        {"title": "T2", "content": "body", "kind": "community"}]


def test_diversity_is_the_mean_of_capped_shares() -> None:
    e = Evidence("x", documents={f"d{i}" for i in range(5)}, groups={"rust-book", "think-js"},
                 communities={"c1", "c2", "c3", "c4", "c5"})
    assert diversity(e, TOTALS) == pytest.approx((0.5 + 2 / 3 + 1.0) / 3)
    assert diversity(Evidence("x"), TOTALS) == 0.0
    assert diversity(e, Totals(0, 0, 0)) == 0.0


def test_verdicts_need_more_than_the_margin() -> None:
    assert verdict(0.5, 0.4, 0.05) == "a"
    assert verdict(0.4, 0.5, 0.05) == "b"
    assert verdict(0.5, 0.47, 0.05) == "tie"
    assert tally(["a", "a", "tie", "b"]) == {"wins": 2, "ties": 1, "losses": 1}


def test_heuristic_judge_scores_both_sides() -> None:
    reports = Evidence("Threads and channels; a Mutex guards shared state.", documents={"d1", "d2", "d3"},
                       groups={"rust-book"}, communities={"c1", "c2"})
    chunks = Evidence("Spawn a thread with thread::spawn.", documents={"d1"}, groups={"rust-book"},
                      communities={"c1"})
    out = heuristic_judge(QUESTION, reports, chunks, TOTALS)
    assert out["comprehensiveness"] == {"a": 0.75, "b": 0.25, "winner": "a"}
    assert out["diversity"]["a"] > out["diversity"]["b"] and out["diversity"]["winner"] == "a"
    same = heuristic_judge(QUESTION, chunks, chunks, TOTALS)
    assert same["comprehensiveness"]["winner"] == same["diversity"]["winner"] == "tie"


def test_the_question_set() -> None:
    questions = load_questions()
    assert len(questions) >= 20
    assert len({q.id for q in questions}) == len(questions)
    for q in questions:
        assert len(q.topics) >= 5, q.id
        assert set(q.sources) <= {"pydantic-ai", "rust-book", "think-js"}, q.id
        for t in q.topics:
            for term in t.terms:
                assert isinstance(term_pattern(term), re.Pattern)
    # Most are phrased as corpus-level questions that mode auto would route to global.
    assert sum(global_cue(q.question) is not None for q in questions) >= len(questions) // 2


def test_bench_statements_load_by_name() -> None:
    assert "IN_COMMUNITY" in bench_cypher("global_eval", "chunk_communities")
    assert "Community" in bench_cypher("global_eval", "level0_communities")
    assert "$1" in bench_sql("global_eval", "collection_sources")


def test_orders_must_agree_for_a_win() -> None:
    a_both = combine_orders(JudgeVerdict(comprehensiveness="1", diversity="1"),
                            JudgeVerdict(comprehensiveness="2", diversity="1"))
    assert a_both["comprehensiveness"] == {"winner": "a", "orders": ["a", "a"]}
    assert a_both["diversity"] == {"winner": "tie", "orders": ["a", "b"]}, "a position-biased verdict is a tie"
    b_both = combine_orders(JudgeVerdict(comprehensiveness="2", diversity="tie"),
                            JudgeVerdict(comprehensiveness="1", diversity="tie"))
    assert b_both["comprehensiveness"]["winner"] == "b" and b_both["diversity"]["winner"] == "tie"


def _prompt(messages: list[ModelMessage]) -> str:
    return next(p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart))


def _content_judge(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A stand-in judge that reads the answers: the one naming more concurrency tools is better."""
    prompt = _prompt(messages)
    first, second = prompt.split("--- Answer 1 ---")[1].split("--- Answer 2 ---")
    score = [sum(w in part.lower() for w in ("thread", "channel", "mutex", "async")) for part in (first, second)]
    better = "1" if score[0] > score[1] else "2" if score[1] > score[0] else "tie"
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {
        "comprehensiveness": better, "diversity": "tie", "reason": f"scores {score}"})])


def _first_position_judge(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name,
                                             {"comprehensiveness": "1", "diversity": "1"})])


async def test_llm_judge_plumbing_with_function_model() -> None:
    good = "Threads, channels, a Mutex and async tasks."
    thin = "Threads."
    out = await llm_judge(FunctionModel(_content_judge), QUESTION.question, good, thin)
    assert out["comprehensiveness"] == {"winner": "a", "orders": ["a", "a"]}
    assert out["diversity"]["winner"] == "tie"
    assert out["reasons"] == {"a_first": "scores [4, 1]", "b_first": "scores [1, 4]"}
    swapped = await llm_judge(FunctionModel(_content_judge), QUESTION.question, thin, good)
    assert swapped["comprehensiveness"]["winner"] == "b"
    biased = await llm_judge(FunctionModel(_first_position_judge), QUESTION.question, good, thin)
    assert biased["comprehensiveness"]["winner"] == biased["diversity"]["winner"] == "tie"


async def test_chunk_answer_reads_numbered_passages() -> None:
    seen: list[str] = []

    def answerer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(_prompt(messages))
        return ModelResponse(parts=[TextPart(" Threads [1] and channels [2]. ")])

    answer = await chunk_answer(FunctionModel(answerer), QUESTION.question, ["Spawn threads.", "Use channels."])
    assert answer == "Threads [1] and channels [2]."
    assert "[1] Spawn threads.\n\n[2] Use channels." in seen[0] and QUESTION.question in seen[0]


async def test_evidence_comes_from_the_real_stores(rt: Runtime, collection: str, tmp_path: Path) -> None:
    from tests.helpers import ingest_docs
    from tests.integration.test_communities import SPACE

    await ingest_docs(await rt.ingestor(), tmp_path / "docs", collection, SPACE)
    await compute_communities(rt.postgres, rt.neo4j, rt.embedders, collection)
    level0 = {c["id"] for c in await list_communities(rt.postgres, rt.neo4j, [collection], level=0)}
    sources = {str(tmp_path / "docs" / name) for name in SPACE}
    router = await rt.router()
    question = "What are the main themes of this collection?"
    reports = (await rest_search(router, question, mode="global", collections=[collection]))["results"]
    chunks = (await rest_search(router, question, mode="hybrid", collections=[collection], limit=20))["results"]
    assert reports and chunks
    lookup = Lookup(rt, collection)
    cited = [c for r in reports for c in cited_chunks(f"{r['title']}\n{r['content']}")]
    await lookup.load(cited + [h["chunk_id"] for h in chunks])
    assert cited and {lookup.source[c] for c in cited} <= sources, "cited chunks map to their documents"
    a, a_texts = global_side(reports, 120, lookup)
    b, b_texts = chunk_side(chunks, 120, lookup)
    assert a.tokens <= 120 and b.tokens <= 120 and a_texts and b_texts
    assert a.documents <= sources and b.documents and b.documents <= sources
    assert a.groups <= {"docs"} and b.groups == {"docs"}
    assert a.communities and a.communities <= level0, "a report covers at least its own level-0 community"
    assert b.communities and b.communities <= level0, "chunks touch the communities of the entities they mention"
