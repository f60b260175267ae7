"""Pure logic: the filter compiler, RRF, MMR, rules, budgets, recipes."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from graphrag.errors import InvalidInput
from graphrag.search import fusion
from graphrag.search.config import Rule
from graphrag.search.filters import parse_filter
from graphrag.stores.filters import compile_filter
from graphrag.search.recipes import RECIPES, derive
from graphrag.stores import queries


def test_filter_values_and_field_names_are_parameters() -> None:
    compiled = compile_filter({"year": {"$gte": 2020}, "$or": [{"lang": "en"}, {"source": {"$in": ["a", "b"]}}]})
    assert "2020" not in compiled.sql and "year" not in compiled.sql and "lang" not in compiled.sql
    assert compiled.params["filter_1"] == "year" and 2020.0 in compiled.params.values()
    import re

    used = set(re.findall(r":(filter_\d+)", compiled.sql))
    assert used == set(compiled.params)


def test_filter_parameters_compile_into_a_statement_after_its_own() -> None:
    # The condition's names join the statement's: one $n each, the statement's own first.
    compiled = compile_filter({"a": 1, "source": {"$in": ["x"]}})
    st = queries.variant("search", "chunk_rows", compiled.sql)
    assert st.params[:3] == ("vectors", "ids", "collections")
    assert set(st.params[3:]) == set(compiled.params)
    assert st.bind({"vectors": False, "ids": [], "collections": None, **compiled.params})[3:] == [
        compiled.params[p] for p in st.params[3:]]
    assert "/*FILTER*/" not in st.text and ":filter" not in st.text
    assert compile_filter(None).sql == "TRUE" and not compile_filter({}).params


@pytest.mark.parametrize("spec,message", [
    ({"a": {"$foo": 1}}, "unknown operator '$foo'"),
    ({"$xor": [{"a": 1}]}, "unknown operator '$xor'"),
    ({"a; DROP TABLE chunks": 1}, "invalid field name"),
    ({"a": {"$in": "notalist"}}, "$in"),
    ({"a": {"$gt": [1]}}, "$gt"),
    ({"$and": []}, "non-empty list"),
    ({"a": {}}, "empty operator"),
    ({"a": {"$contains": 3}}, "$contains"),
    ({"tags": {"$gt": "x"}}, "tags"),
])
def test_malformed_filters_name_the_problem(spec: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message.replace("$", r"\$").replace("(", r"\(")):
        compile_filter(spec)


def test_filter_json_parsing() -> None:
    assert parse_filter('{"a": 1}') == {"a": 1}
    assert parse_filter(None) is None and parse_filter("{}") is None
    with pytest.raises(InvalidInput, match="not valid JSON"):
        parse_filter("{a:")
    with pytest.raises(InvalidInput, match="JSON object"):
        parse_filter("[1]")
    deep: dict = {"a": 1}
    for _ in range(12):
        deep = {"$and": [deep]}
    with pytest.raises(InvalidInput, match="deeper"):
        compile_filter(deep)


def test_rrf_weights_and_provenance() -> None:
    fused = fusion.rrf({"vector": [("a", 0.9, {}), ("b", 0.8, {})], "keyword": [("b", 5.0, {}), ("c", 1.0, {})]},
                       {"vector": 1.0, "keyword": 1.0}, k=60)
    assert [c.chunk_id for c in fused] == ["b", "a", "c"]
    b = fused[0]
    assert b.legs == {"vector": {"rank": 2, "score": 0.8}, "keyword": {"rank": 1, "score": 5.0}}
    assert b.score == pytest.approx(1 / 62 + 1 / 61)
    heavy = fusion.rrf({"vector": [("a", 1, {})], "keyword": [("c", 1, {})]}, {"vector": 1.0, "keyword": 3.0})
    assert heavy[0].chunk_id == "c"


def test_convex_fusion_normalises_scores_and_counts_completed_evidence() -> None:
    rankings = {"vector": [("a", 0.8, {}), ("b", 0.4, {})], "keyword": [("c", 10.0, {}), ("b", 9.0, {})]}
    fused = fusion.convex(rankings, {"vector": 1.0, "keyword": 1.0})
    # Each leg is scaled by its best score: b = 0.4/0.8 + 9/10, a = 1 + 0, c = 0 + 1.
    assert [c.chunk_id for c in fused] == ["b", "a", "c"]
    assert fused[0].score == pytest.approx(0.5 + 0.9)
    assert fused[0].legs == {"vector": {"rank": 2, "score": 0.4}, "keyword": {"rank": 2, "score": 9.0}}
    # What a leg would have said about a candidate it did not return counts (clamped to [0, 1]).
    completed = fusion.convex(rankings, {"vector": 1.0, "keyword": 1.0},
                              {"vector": {"c": 0.7}, "keyword": {"a": 20.0}})
    scores = {c.chunk_id: c.score for c in completed}
    assert scores["c"] == pytest.approx(1 + 0.7 / 0.8) and scores["a"] == pytest.approx(2.0)
    assert "vector" not in next(c for c in completed if c.chunk_id == "c").legs  # provenance: found by keyword only
    weighted = fusion.convex(rankings, {"vector": 0.0, "keyword": 1.0})
    assert weighted[0].chunk_id == "c" and weighted[0].score == pytest.approx(1.0)
    assert fusion.convex({"vector": [], "keyword": [("x", 0.0, {})]}, {})[0].score == 0.0


def test_mmr_prefers_diverse_results() -> None:
    e1, e2 = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    cands = [fusion.Candidate("a", score=1.0, embedding=e1), fusion.Candidate("a2", score=0.99, embedding=e1),
             fusion.Candidate("b", score=0.5, embedding=e2)]
    assert [c.chunk_id for c in fusion.mmr(cands, e1, lam=1.0, limit=2)] == ["a", "a2"]
    assert [c.chunk_id for c in fusion.mmr(cands, e1, lam=0.5, limit=2)] == ["a", "b"]


def test_rules_boost_collapse_and_budget() -> None:
    def cand(cid: str, score: float, **row: object) -> fusion.Candidate:
        return fusion.Candidate(cid, score=score, row={"document_id": row.pop("doc", cid), **row})

    cands = [cand("a", 1.0, metadata={"kind": "blog"}, token_count=50),
             cand("b", 0.9, metadata={"kind": "manual"}, token_count=50, doc="a"),
             cand("c", 0.8, metadata={"kind": "faq"}, token_count=500)]
    ranked = fusion.apply_rules(cands, [Rule(kind="priority", field="kind", values=("manual", "faq"), weight=2.0)])
    assert [c.chunk_id for c in ranked] == ["b", "c", "a"]
    contains = fusion.apply_rules([cand("x", 1.0, title="Intro"), cand("y", 0.9, title="API reference")],
                                  [Rule(kind="contains", field="title", value="api", weight=2.0)])
    assert contains[0].chunk_id == "y"
    assert [c.chunk_id for c in fusion.collapse_documents(ranked)] == ["b", "c"]
    assert [c.chunk_id for c in fusion.within_budget(ranked, 120)] == ["b"]
    boosted = fusion.boost([fusion.Candidate("v", legs={"vector": {"score": 0.9}}, row={}),
                            fusion.Candidate("k", legs={"vector": {"score": 0.7}, "keyword": {"score": 2}}, row={})],
                           1.5)
    assert [c.chunk_id for c in boosted] == ["k", "v"]


def test_recipes_are_frozen_and_derived_not_mutated() -> None:
    base = RECIPES["auto"]
    derived = derive("auto", limit=3, mmr_lambda=0.5)
    assert derived.limit == 3 and base.limit == 10 and base.mmr_lambda is None
    with pytest.raises(ValidationError):
        base.limit = 5  # type: ignore[misc]
    with pytest.raises(InvalidInput, match="unknown mode"):
        derive("fuzzy")
    with pytest.raises(InvalidInput, match="limit"):
        derive("auto", limit=0)
