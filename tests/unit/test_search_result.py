"""The typed search result (graphrag/models.py): its REST shape, read back, and the one mode enum."""

from __future__ import annotations

import typing

from graphrag.models import Hit, Leg, LegReport, Mode, ModeName, SearchResult
from graphrag.search.config import LEGS


def _result() -> SearchResult:
    hit = Hit(chunk_id="c1", document_id="d1", collection="docs", source="eniac.pdf", title="ENIAC",
              content="ENIAC was built at Penn.", score=0.91, heading_path=["History"],
              legs={Leg.VECTOR: {"rank": 1, "score": 0.8}}, entities=[{"id": "e1", "name": "ENIAC", "label": "ORG"}],
              metadata={"page": 2}, chunk_index=0, char_start=0, char_end=24,
              extra={"snippet": "ENIAC was built", "snippet_start": 0, "snippet_end": 15})
    return SearchResult(query="who built ENIAC", mode=Mode.AUTO, took_ms=12.5,
                        legs={Leg.VECTOR: LegReport("ok", 3.0, 1),
                              Leg.KEYWORD: LegReport("timeout", 5000.0, error="no answer within 5.0s"),
                              Leg.GRAPH: LegReport("skipped", reason="graph prior 0.050 is below 0.1", prior=0.05)},
                        hits=[hit], timings={"embed_ms": 2.0})


def test_rest_shape_names_plain_strings_and_leaves_absent_keys_out() -> None:
    out = _result().to_dict()
    assert out["mode"] == "auto" and type(out["mode"]) is str
    assert all(type(k) is str for k in out["legs"]) and list(out["legs"]) == ["vector", "keyword", "graph"]
    assert out["legs"]["vector"] == {"status": "ok", "took_ms": 3.0, "hits": 1}  # no null optional keys
    assert out["legs"]["graph"] == {"status": "skipped", "took_ms": 0.0, "hits": 0,
                                    "reason": "graph prior 0.050 is below 0.1", "prior": 0.05}
    hit = out["results"][0]
    assert hit["snippet"] == "ENIAC was built" and "full_document" not in hit and "routed_from" not in out
    assert list(hit["legs"]) == ["vector"] and type(next(iter(hit["legs"]))) is str
    assert out["timings"] == {"embed_ms": 2.0} and "timings" not in _result().to_dict(timings=False)


def test_a_rest_response_reads_back_into_the_same_result() -> None:
    original = _result()
    back = SearchResult.from_dict(original.to_dict())
    assert back.to_dict() == original.to_dict()
    assert back.hits[0].page == 2 and back.hits[0].citation == "eniac.pdf p. 2" and back.hits[0].kind == "chunk"
    assert back.failed_legs == ["keyword"] and back.legs["keyword"].error == "no answer within 5.0s"


def test_a_community_report_hit_keeps_its_kind_and_has_no_chunk_offsets() -> None:
    report = Hit(chunk_id="c9", document_id="d9", collection="docs", source="community:k1", title="Themes",
                 content="A report.", score=1.0, extra={"kind": "community", "community": {"id": "k1", "level": 0}})
    out = report.to_dict()
    assert out["kind"] == "community" and not {"chunk_index", "char_start", "char_end"} & set(out)
    assert Hit.from_dict(out).kind == "community" and Hit.from_dict(out).chunk_index is None


def test_expansion_details_of_a_leg_round_trip() -> None:
    report = LegReport("ok", 4.0, 7, details={"expanded": ["car"], "expansions": [{"term": "car", "for": ["auto"]}]})
    assert LegReport.from_dict(report.to_dict()) == report


def test_one_mode_and_leg_vocabulary() -> None:
    assert set(typing.get_args(ModeName)) == {m.value for m in Mode}
    assert set(LEGS) | {Leg.EXTENDED.value} == {leg.value for leg in Leg}
