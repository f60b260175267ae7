"""The graph leg's pure parts: query spans and n-grams, name matching, the walk and the chunk score."""

from __future__ import annotations

import math
import re

import pytest

from graphrag.ingest.extract import normalise_name
from graphrag.search import walk
from graphrag.search.config import SearchConfig
from graphrag.search.graph import PER_ENTITY, PER_FIRST, PER_NEXT, chunk_limit, graph_parameters
from graphrag.search.linking import lucene_query, name_grams, name_overlap, name_spans, name_tokens, query_spans
from graphrag.stores import queries
from graphrag.stores.repo.graph import ENTITY_CHUNKS, ENTITY_NEIGHBOURS


@pytest.mark.parametrize(("query", "spans"), [
    ("Which American band was formed the earliest, CKY or Violent Femmes?", ["American", "CKY", "Violent Femmes"]),
    ("Who lived longer, Edward Albee or J. M. Barrie?", ["Edward Albee", "J. M. Barrie"]),
    ("Which case came first, Craig v. Boren or United States v. Paramount Pictures, Inc.?",
     ["Craig v. Boren", "United States v. Paramount Pictures", "Inc."]),
    ('Which Canadian rock band released a song called "Counterparts"?', ["Canadian", "Counterparts"]),
    ("What did the Bank of England decide in 1998?", ["Bank of England"]),
    ("Are Karl Shapiro and Elie Wiesel both American writers?", ["Karl Shapiro", "Elie Wiesel", "American"]),
    ("Which composer wrote in the 1800's?", []),
    ("who founded apex logistics", []),
])
def test_name_spans_are_the_capitalised_runs_and_quoted_titles(query: str, spans: list[str]) -> None:
    assert name_spans(query) == spans


def test_spans_carry_what_linking_needs() -> None:
    span = query_spans("Where did Sarah Johnson's company start?")[0]
    assert span.text == "Sarah Johnson" and span.tokens == ("sarah", "johnson")
    assert span.lucene == '"Sarah Johnson"^3 Sarah Johnson' and span.title_key == "sarah johnson"
    # Lucene syntax in a query never reaches the index as syntax.
    assert lucene_query('Apex") OR name:* AND (x') == '"Apex name x"^3 Apex name x'
    assert lucene_query("Jean-Luc Picard") == '"Jean\\-Luc Picard"^3 Jean\\-Luc Picard'


def test_name_grams_are_exact_name_keys_with_their_place() -> None:
    grams = name_grams(["who founded apex logistics in 1998?"])
    norms = [g["norm"] for g in grams]
    assert "apex logistics" in norms and "apex" in norms and "founded apex logistics" in norms
    assert not any(n.startswith(("who ", "in ")) or n.endswith((" in", " who")) for n in norms)
    assert "1998" not in norms and "who" not in norms
    assert norms.index("founded apex logistics") < norms.index("apex logistics") < norms.index("apex")
    assert {"norm": "apex logistics", "span": 0, "start": 2, "end": 4} in grams
    # Each text keeps its own positions; names keep their dots ("j. m. barrie" is an entity's norm).
    two = name_grams(["Danube Vienna Budapest", "J. M. Barrie"])
    assert {"norm": "vienna", "span": 0, "start": 1, "end": 2} in two
    assert {"norm": "j. m. barrie", "span": 1, "start": 0, "end": 3} in two
    assert name_grams(["The Apple Inc."])[0]["norm"] == "apple"  # a name's normal form: suffix gone
    # "C#" and "F#" are names of their own, not "C" and "F"; a "#" before a number is not kept.
    sharp = [g["norm"] for g in name_grams(["Is C# faster than C or F#? See issue #42."])]
    assert {"c#", "f#", "c# faster"} <= set(sharp) and "issue 42" in sharp and not any(n.startswith("#") for n in sharp)


def test_capital_letters_are_looked_up_beside_the_spans() -> None:
    # A one-letter name (only a glossary gives one) is a gram of its own: from the whole query without
    # spans, after the spans' grams with them, and not where it is a word of a longer span.
    config = SearchConfig()

    def grams(query: str) -> list[tuple[object, object]]:
        params = graph_parameters(query, config, total_chunks=1, feedback=[])
        return [(g["norm"], g["span"]) for g in params["grams"]]

    assert ("r", 0) in grams("how do i plot in R") and ("plot", 0) in grams("how do i plot in R")
    assert grams("Can Quarto plot in R?") == [("quarto", 0), ("r", 1)]
    assert grams("Read Appendix C before C code") == [("read appendix c", 0), ("read appendix", 0), ("appendix c", 0),
                                                      ("read", 0), ("appendix", 0), ("c", 1)]
    assert not any(n in ("a", "i") for n, _ in grams("Is A better than I think, Sam?"))
    assert grams("how do i plot in r") == [(g["norm"], 0) for g in name_grams(["how do i plot in r"])]


def test_name_keys_keep_a_sharp_that_ends_a_word() -> None:
    assert [normalise_name(n) for n in ("C#", "F#.", "The C# Language", "C")] == ["c#", "f#", "c# language", "c"]
    assert [normalise_name(n) for n in ("Issue #42", "item#3", "#include")] == ["issue 42", "item3", "include"]
    assert name_tokens("C# generics") == ("c#", "generics")


def test_name_overlap_and_tokens() -> None:
    assert name_tokens("J. M. Barrie") == ("j", "m", "barrie")
    assert name_tokens("The Apple Inc.'s") == ("apple",)
    assert name_overlap("Sarah Johnson", "Sarah Johnson") == 1.0
    assert name_overlap("Sarah", "Sarah Johnson") == 0.5
    # A long mention that contains a whole name of two words or more links to it.
    assert name_overlap("Killing Pablo: The Hunt for the World's Greatest Outlaw", "Killing Pablo") == 0.8
    assert name_overlap("Pablo the Hunter of Outlaws", "Pablo") == pytest.approx(1 / 5)
    assert name_overlap("", "x") == 0.0
    assert lucene_query("AND OR") == "" and lucene_query("Danube") == "Danube"


def test_graph_parameters_follow_the_config() -> None:
    config = SearchConfig(graph_prf=2, graph_prf_weight=0.5, collections=("wiki",), overfetch=20, graph_hops=1)
    params = graph_parameters("Who founded Apex Logistics?", config, total_chunks=0,
                              feedback=[("c1", 0.9), ("c2", 0.8)])
    assert params["spans"] == [{"q": '"Apex Logistics"^3 Apex Logistics', "toks": ["apex", "logistics"]}]
    assert params["titles"] == ["apex logistics"] and params["collections"] == ["wiki"]
    # The spans' n-grams are looked up as exact names, not the rest of the query ("founded").
    assert [g["norm"] for g in params["grams"]] == ["apex logistics", "apex", "logistics"]
    assert params["prf"] == [{"chunk": "c1", "w": pytest.approx(0.45)}, {"chunk": "c2", "w": pytest.approx(0.2)}]
    assert params["total"] == 1 and params["limit"] == 20  # overfetch: no filter drops chunks afterwards
    assert params["max_seeds"] == config.graph_seeds + 4
    assert params["frontier"] == 0 and params["per_next"] == 0  # one hop only
    lower = graph_parameters("who founded apex logistics?", config, total_chunks=10, feedback=[])
    assert lower["spans"] == [] and lower["prf"] == []
    assert {"norm": "apex logistics", "span": 0, "start": 2, "end": 4} in lower["grams"]


def test_the_graph_statement_takes_one_map_parameter() -> None:
    """Neo4j plans a statement once per signature of parameter types (an empty list and a list of maps
    differ, as do null and a list); as fields of one map, every search shares the one plan, and
    every field the statement reads is one that graph_parameters gives."""
    statement = queries.cypher("graph_leg", "graph_leg")
    assert set(re.findall(r"\$(\w+)", statement)) == {"leg"}
    fields = set(re.findall(r"\$leg\.(\w+)", statement))
    assert fields == set(graph_parameters("", SearchConfig(), total_chunks=1, feedback=[]))


GRAPH = {("a", "b"): 4.0, ("a", "c"): 1.0, ("b", "d"): 2.0, ("c", "d"): 1.0, ("d", "hub"): 9.0, ("a", "hub"): 9.0}


def neighbours(node: str, k: int) -> list[tuple[str, float]]:
    found = [(y if x == node else x, w) for (x, y), w in GRAPH.items() if node in (x, y)]
    return sorted(found, key=lambda kv: (-kv[1], kv[0]))[:k]


def test_walk_spreads_from_the_seeds_and_damps_hubs() -> None:
    damp = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "hub": 0.05}.__getitem__
    rank = walk.spread({"a": 2.0}, neighbours, damp, alpha=0.5, per_first=25, per_next=8, frontier=100)
    # Hop 1 from a: b, c and the hub in proportion to ln(1 + w) x damping.
    moves = {"b": math.log1p(4), "c": math.log1p(1), "hub": math.log1p(9) * 0.05}
    total = sum(moves.values())
    hop1 = {n: t / total for n, t in moves.items()}
    assert rank["b"] > rank["c"] > 0 and rank["a"] > rank["b"]
    # d is reached in two hops only, through b, c and the hub.
    assert 0 < rank["d"] < rank["c"]
    assert sum(rank.values()) == pytest.approx(0.5 + 0.25 + 0.125)
    assert rank["hub"] < rank["c"]  # heavily related, but a hub passes on (and takes in) little
    assert rank["b"] == pytest.approx(0.25 * hop1["b"] + 0.125 * _second("b", hop1, damp))
    assert walk.spread({}, neighbours, damp, alpha=0.5, per_first=5, per_next=5, frontier=5) == {}


def _second(target: str, hop1: dict[str, float], damp: object) -> float:
    out = 0.0
    for node, value in hop1.items():
        moves = {n: math.log1p(w) * damp(n) for n, w in neighbours(node, 8)}  # type: ignore[operator]
        out += value * moves.get(target, 0.0) / sum(moves.values())
    return out


def test_one_neighbour_per_node_and_a_frontier_of_one_bound_the_walk() -> None:
    damp = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "hub": 1.0}.__getitem__
    rank = walk.spread({"a": 1.0}, neighbours, damp, alpha=0.5, per_first=1, per_next=1, frontier=1)
    # a's strongest neighbour is the hub (weight 9), whose strongest neighbours are a and d (9 each; a first).
    assert rank == {"a": pytest.approx(0.5 + 0.125), "hub": pytest.approx(0.25)}


def test_idf_damping_and_chunk_part() -> None:
    assert walk.idf(1, 1000) > walk.idf(100, 1000) > walk.idf(1000, 1000)
    assert walk.damping(1000, 1000) == walk.MIN_DAMPING
    assert walk.damping(None, 1000) == walk.damping(1, 1000)
    assert walk.chunk_part(1.0, 1, 1, False, 2.0) == 1.0
    assert walk.chunk_part(1.0, 1, 4, True, 2.0) == pytest.approx(1.0)
    assert walk.chunk_part(0.5, math.e ** 2, 1, False, 2.0) == pytest.approx(1.5)
    assert walk.top_entities({"x": 1.0, "y": 0.5, "z": 0.5}, {"x": 0.1, "y": 1.0, "z": 1.0}.__getitem__, 2) == [
        ("y", 0.5), ("z", 0.5)]


def test_an_entity_chunk_list_is_its_best_chunks_by_focus() -> None:
    mentions = [("c1", 1, 1), ("c2", 3, 9), ("c3", 1, 1), ("c4", 2, 1), ("c5", None, 4)]
    listed = walk.chunk_list(mentions, 3)
    # focus: c4 1.69, then c1 and c3 1.0 (ties by id); c2 (1 + ln 3) / 3 = 0.70 and c5 0.5 fall out.
    assert [c for c, _ in listed] == ["c4", "c1", "c3"]
    assert listed[0][1] == pytest.approx(1 + math.log(2)) and walk.chunk_focus(3, 9) == pytest.approx(0.6995, abs=1e-4)
    assert walk.chunk_list(mentions, 0) == [] and walk.chunk_list([], 5) == []


def test_the_graph_writer_keeps_as_much_as_the_leg_reads() -> None:
    assert PER_ENTITY <= ENTITY_CHUNKS
    assert max(PER_FIRST, PER_NEXT) <= ENTITY_NEIGHBOURS


def test_the_statement_returns_twice_overfetch_only_when_filters_follow() -> None:
    plain = SearchConfig(overfetch=30)
    filtered = SearchConfig(overfetch=30, filters={"year": 2020})
    assert chunk_limit(plain) == 30 and chunk_limit(filtered) == 60
    assert graph_parameters("Apex Logistics", filtered, total_chunks=10, feedback=[])["limit"] == 60
