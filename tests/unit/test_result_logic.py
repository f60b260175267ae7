"""Pure logic of suggestions, highlights, full documents and the text/voice formats (no stores)."""

from __future__ import annotations

import re

import pytest

from graphrag.errors import InvalidInput
from graphrag.ingest.terms import document_terms, extraction_terms, fold
from graphrag.models import Entity, Extraction, SearchResult
from graphrag.search import extras, formats
from graphrag.search import highlight as hl
from graphrag.search import suggest as sg
from graphrag.search.wholedoc import Piece, stitch, window


# --- suggestions ---------------------------------------------------------------------------------
def test_fold_and_prefix_range_bound_exactly_the_strings_with_the_prefix() -> None:
    assert fold("  Marie\t\nCURIE ") == "marie curie"
    assert fold("ﬁbre") == "fibre"  # NFKC: the ligature is two letters
    for prefix in ("mar", "z", "é", "a b", "\ud7ff"[:0] + "x\u00ff"):
        low, high = sg.prefix_range(prefix)
        inside = [prefix, prefix + "a", prefix + " tail", prefix + "\U0001f600"]
        outside = [prefix[:-1], prefix[:-1] + chr(ord(prefix[-1]) + 1), "" if prefix == "a" else "a"]
        for s in inside:
            assert low.encode() <= s.encode() < high.encode(), (prefix, s)
        for s in outside:
            if not s.startswith(prefix):
                assert not (low.encode() <= s.encode() < high.encode()), (prefix, s)
    assert sg.prefix_range("\ud7ff")[1] == "\ue000"  # never a surrogate


def test_rank_merges_kinds_and_collections_and_prefers_used_and_exact_terms() -> None:
    rows = [
        {"collection": "a", "norm": "paris", "kind": "entity", "display": "Paris", "documents": 40, "mentions": 90},
        {"collection": "b", "norm": "paris", "kind": "title", "display": "Paris", "documents": 1, "mentions": 1},
        {"collection": "a", "norm": "parisian cafe", "kind": "phrase", "display": "Parisian cafe",
         "documents": 3, "mentions": 4},
        {"collection": "a", "norm": "pa", "kind": "entity", "display": "PA", "documents": 1, "mentions": 1},
    ]
    ranked = sg.rank(rows, "pa", 10)
    assert [s["text"] for s in ranked] == ["Paris", "PA", "Parisian cafe"]
    assert ranked[0]["kind"] == "entity" and ranked[0]["collections"] == ["a", "b"] and ranked[0]["documents"] == 40
    assert ranked[1]["score"] > sg.score(1, 1, "entity", False), "an exact match gets its bonus"
    assert [s["text"] for s in sg.rank(rows, "pa", 1)] == ["Paris"]


def test_suggest_input_checks() -> None:
    assert sg.check("  Mar ", 5) == ("mar", 5)
    for bad, words in [("", "empty"), ("   ", "empty"), ("a\x00", "NUL"), ("x" * 201, "limit")]:
        with pytest.raises(InvalidInput, match=words):
            sg.check(bad, 5)
    for limit in (0, 51, True, "5"):
        with pytest.raises(InvalidInput, match="limit"):
            sg.check("a", limit)


def test_document_terms_fold_merge_and_classify() -> None:
    terms = document_terms("The  Radium Story", [("Marie Curie", "PERSON", 3), ("marie curie", "PERSON", 2),
                                                 ("radioactive decay", "CONCEPT", 4), ("", "ORG", 1),
                                                 ("x" * 300, "ORG", 1)])
    by = {(kind, norm): (display, n) for kind, norm, display, n in terms}
    assert by == {("title", "the radium story"): ("The Radium Story", 1),
                  ("entity", "marie curie"): ("Marie Curie", 5),
                  ("phrase", "radioactive decay"): ("radioactive decay", 4)}
    ex = Extraction(entities={"paris": Entity("paris", "Paris", "GPE")}, mentions={(0, "paris"): 2, (3, "paris"): 1},
                    phrases={"heap memory": ("heap memory", 2)})
    assert sorted(extraction_terms("", ex)) == [("entity", "paris", "Paris", 3),
                                                ("phrase", "heap memory", "heap memory", 2)]


# --- highlights ----------------------------------------------------------------------------------
LEXEMES = {"running": ["run"], "runs": ["run"], "run": ["run"], "experiments": ["experi"], "experiment": ["experi"],
           "the": [], "paris": ["pari"], "e": ["e"], "mail": ["mail"]}


def _slices(text: str, spans: list[dict[str, object]]) -> list[str]:
    return [text[int(s["start"]):int(s["end"])] for s in spans]  # type: ignore[call-overload]


def test_keyword_spans_slice_the_text_at_stemmed_matches() -> None:
    text = "Running the experiment: she runs; RUN-time experiments in Paris."
    query = {"run": "run", "experi": "experiments"}
    spans = hl.keyword_spans(text, LEXEMES, query)
    assert [text[s.start:s.end] for s in spans] == ["Running", "experiment", "runs", "RUN", "experiments"]
    assert all(s.kind == "keyword" for s in spans)
    assert [s.term for s in spans] == ["run", "experiments", "run", "run", "experiments"]


def test_entity_spans_are_case_insensitive_whole_words_and_win_over_keywords() -> None:
    text = "Marie  Curie met marie curie's rival; Curiel is another name."
    ents = hl.entity_spans(text, ["Marie Curie"])
    assert [text[s.start:s.end] for s in ents] == ["Marie  Curie", "marie curie"]
    inner = hl.Span(6, 12, "curie", "keyword")
    merged = hl.merge([inner, *ents, hl.Span(0, 5, "marie", "keyword")])
    assert [(s.start, s.end, s.kind) for s in merged] == [(0, 12, "entity"), (17, 28, "entity")]
    assert hl.merge([hl.Span(3, 3, "x", "keyword")]) == []


def test_query_words_keep_case_and_skip_single_letters() -> None:
    assert hl.query_words("Who founded Apex? apex, a e-mail") == ["Who", "founded", "Apex", "mail"]
    assert hl.query_words("C") == ["C"]
    assert hl.initial("Élan") == "e" and hl.initial("running") == "r"


def test_highlight_snippet_covers_the_best_terms_and_slices_exactly() -> None:
    filler = "lorem ipsum dolor sit amet " * 30
    text = filler + "the running experiments near Paris ran long " + filler + "a run"
    result = hl.highlight(text, LEXEMES, {"run": "run", "experi": "experiments"}, ["Paris"], width=120)
    spans = result["highlights"]
    assert _slices(text, spans) == ["running", "experiments", "Paris", "run"]  # type: ignore[arg-type]
    assert [s["kind"] for s in spans] == ["keyword", "keyword", "entity", "keyword"]  # type: ignore[index]
    start, end = result["snippet_start"], result["snippet_end"]
    assert text[start:end] == result["snippet"]  # type: ignore[misc]
    assert "running experiments near Paris" in result["snippet"]  # type: ignore[operator]
    assert end - start <= 120 and (start == 0 or text[start - 1] == " ")  # type: ignore[operator]
    short = hl.highlight("just a run", LEXEMES, {"run": "run"})
    assert short["snippet"] == "just a run"
    assert _slices("just a run", short["highlights"]) == ["run"]  # type: ignore[arg-type]


def test_render_marks_the_highlights() -> None:
    text = "Paris is running"
    spans = [{"start": 0, "end": 5}, {"start": 9, "end": 16}]
    assert hl.render(text, spans) == "[[Paris]] is [[running]]"
    assert hl.render(text, spans, 6, 16, "<b>", "</b>") == "is <b>running</b>"


# --- full documents ------------------------------------------------------------------------------
DOC = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota. Kappa lambda mu."


def _pieces(overlap: int = 6) -> list[Piece]:
    """Chunks of DOC of about 18 characters, each repeating the last ``overlap`` characters of the one before."""
    bounds = [(0, 18), (18 - overlap, 37), (37 - overlap, 54), (54 - overlap, len(DOC))]
    return [Piece(i, DOC[a:b], a, b, tokens=(b - a) // 3) for i, (a, b) in enumerate(bounds)]


def test_stitch_removes_overlap_and_rebuilds_the_document() -> None:
    text, tokens = stitch(_pieces())
    assert text == DOC
    assert tokens <= sum(p.tokens for p in _pieces())
    gap = [Piece(0, "One.", 0, 4, 1), Piece(1, "Two.", 6, 10, 1)]
    assert stitch(gap)[0] == "One.\n\nTwo."


def test_window_whole_when_it_fits_else_around_the_hit_within_budget() -> None:
    pieces = _pieces()
    whole = window(pieces, 2, 1000)
    assert whole is not None and whole.whole and whole.text == DOC and (whole.lo, whole.hi) == (0, 3)
    budget = pieces[2].tokens + pieces[3].tokens
    part = window(pieces, 2, budget)
    assert part is not None and not part.whole and part.tokens <= budget
    assert part.lo <= 2 <= part.hi and part.text in DOC and pieces[2].content in part.text
    assert window(pieces, 1, pieces[1].tokens - 1) is None
    assert not window(pieces, 0, 1000, complete=False).whole  # type: ignore[union-attr]
    with pytest.raises(ValueError):
        window(pieces, 7, 10)


def test_result_options_are_checked() -> None:
    assert extras.options() == {"highlight": False, "full_document_threshold": None, "token_limit": 5000}
    assert extras.options(True, 0.5, None)["token_limit"] == 5000
    for bad in [{"highlight": 1}, {"full_document_threshold": float("nan")}, {"full_document_threshold": "1"},
                {"token_limit": 0}, {"token_limit": 2.5}, {"token_limit": True}]:
        with pytest.raises(InvalidInput):
            extras.options(**bad)


# --- formats -------------------------------------------------------------------------------------
RESPONSE = {
    "query": "Who built the `ENIAC` (computer)?", "mode": "graph",
    "legs": {"vector": {"status": "ok"}, "graph": {"status": "timeout", "error": "no answer within 5s"}},
    "graph_context": {"entities": [], "relations": [{"source": "ENIAC", "type": "built_by", "target": "Mauchly"}]},
    "results": [
        {"chunk_id": "c1", "document_id": "d1", "collection": "docs",
         "source": "https://example.org/eniac.pdf", "title": "ENIAC [draft]",
         "heading_path": ["ENIAC [draft]", "History"],
         "score": 0.91, "metadata": {"page": 2},
         "content": "# ENIAC\n\nThe **ENIAC** was built by [Mauchly](https://en.wikipedia.org/wiki/Mauchly) and "
                    "Eckert (at Penn) in 1945. See <b>www.example.org</b>.\n\n```python\nprint('x')\n```\n"
                    "It weighed 27 tonnes. It used 18,000 vacuum tubes | and `relays`."},
        {"chunk_id": "c2", "document_id": "d2", "collection": "docs", "source": "/data/notes/univac_1.md", "title": "", "heading_path": [], "score": 0.5, "metadata": {},
         "content": "UNIVAC I followed {see below} in 1951."},
    ],
}


def test_text_format_is_a_numbered_citation_list() -> None:
    text = formats.as_text(SearchResult.from_dict(RESPONSE))
    assert text.startswith('2 results for "Who built the `ENIAC` (computer)?" (graph search)')
    assert "[1] https://example.org/eniac.pdf p. 2 — ENIAC [draft] > History (score 0.910)" in text
    assert "[2] /data/notes/univac_1.md (score 0.500)" in text
    assert "- ENIAC built_by Mauchly" in text and "graph retrieval timeout" in text
    assert "Graph facts" not in formats.as_text(SearchResult.from_dict({**RESPONSE, "mode": "auto"}))


def test_voice_format_has_no_urls_markup_brackets_or_code() -> None:
    voice = formats.as_voice(SearchResult.from_dict(RESPONSE))
    assert voice.startswith("I found 2 results about Who built the ENIAC. First, from ENIAC: The ENIAC was built "
                            "by Mauchly and Eckert in 1945. It weighed 27 tonnes.")
    assert "Second, from univac 1: UNIVAC I followed in 1951." in voice
    assert not re.search(r"https?:|www\.|[\[\](){}<>`*#|_]|\n|print", voice), voice
    assert formats.as_voice(SearchResult.from_dict({"query": "x", "results": []})) == "I found nothing about x."
    with pytest.raises(ValueError):
        formats.render(SearchResult.from_dict(RESPONSE), "json")


def test_graph_feedback_passages_are_keyword_scores_relative_to_the_best() -> None:
    from graphrag.search.legs import LegResult
    from graphrag.search.graph import passages

    hits = LegResult([("a", 12.0, {}), ("b", 6.0, {}), ("c", 3.0, {}), ("d", 1.0, {})])
    assert passages(hits, 3) == [("a", 1.0), ("b", 0.5), ("c", 0.25)]
    assert passages(LegResult(), 3) == [] and passages(hits, 0) == []
