"""``graphrag eval``: reading one BEIR split, the metrics against hand-worked values, TREC run files,
and the command end to end on a BEIR folder the test writes (real stores, real models), whose figures
must equal those ir-measures computes on the exported run files."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import ir_measures
import pytest

from graphrag.errors import InvalidInput
from graphrag.models import Hit
from graphrag.evaluation import (
    MEASURES,
    document_ranking,
    read_beir,
    run_file_path,
    score,
    write_run,
)

CORPUS = [
    ("lighthouse", "Tower of Hercules", "The Tower of Hercules is a Roman lighthouse on a peninsula near A Coruna."),
    ("volcano", "Mount Etna", "Mount Etna is an active stratovolcano on the east coast of Sicily."),
    ("glacier", "Perito Moreno Glacier", "The Perito Moreno Glacier is a glacier in Santa Cruz, Argentina."),
    ("canal", "Panama Canal", "The Panama Canal is an artificial waterway connecting the Atlantic and Pacific."),
    ("desert", "Atacama Desert", "The Atacama Desert is a plateau in South America, among the driest places."),
    ("reef", "Great Barrier Reef", "The Great Barrier Reef is the largest coral reef system, off Queensland."),
    ("suez", "Suez Canal", "The Suez Canal is a waterway in Egypt joining the Mediterranean and the Red Sea."),
    ("vesuvius", "Mount Vesuvius", "Mount Vesuvius is a volcano near Naples that buried Pompeii."),
    ("fjord", "Geirangerfjord", "The Geirangerfjord is a fjord in western Norway, carved by glaciers."),
    ("sahara", "Sahara", "The Sahara is the largest hot desert, across North Africa."),
    ("pharos", "Lighthouse of Alexandria", "The Lighthouse of Alexandria was an ancient tower on Pharos island."),
    ("atoll", "Aldabra Atoll", "Aldabra is a coral atoll in the Seychelles, home to giant tortoises."),
]
# test split: graded judgements, a grade-0 line (q1, canal) and a query judged only non-relevant (q5).
# Some grades run against the order the words give (pharos, suez above the documents the query
# names) and q2 judges a document it shares no word with (fjord), so the figures are not all perfect
# and nDCG with linear gain differs from nDCG with 2^g - 1.
TEST = {
    "q1": ("Which Roman lighthouse stands near A Coruna?", {"lighthouse": 1, "pharos": 2, "canal": 0}),
    "q2": ("active volcano on Sicily", {"volcano": 1, "vesuvius": 1, "fjord": 1}),
    "q3": ("waterway between the Atlantic and the Pacific", {"canal": 1, "suez": 2}),
    "q4": ("coral reef off Queensland, or the driest desert plateau", {"reef": 2, "desert": 1}),
    "q5": ("glacier in Santa Cruz, Argentina", {"glacier": 0}),
}
# train split: another query, and other grades for q1 and q5, all of which --split test must ignore.
TRAIN = {"q1": {"glacier": 1}, "q5": {"glacier": 2}, "q6": {"fjord": 1}}
QUERY_TEXT = {**{q: text for q, (text, _) in TEST.items()}, "q6": "fjord in Norway"}


def write_qrels(path: Path, judged: dict[str, dict[str, int]]) -> None:
    rows = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{g}" for q, rel in judged.items() for d, g in rel.items()]
    path.write_text("\n".join(rows) + "\n")


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    folder = tmp_path / "tinybeir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in CORPUS))
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": t}) + "\n" for q, t in QUERY_TEXT.items()))
    write_qrels(folder / "qrels" / "test.tsv", {q: rel for q, (_, rel) in TEST.items()})
    write_qrels(folder / "qrels" / "train.tsv", TRAIN)
    return folder


def test_read_beir_reads_one_split(beir: Path) -> None:
    docs, queries, qrels = read_beir(beir)
    assert [d.source for d in docs] == [i for i, _, _ in CORPUS]
    # Every judgement of the test split, grade 0 included; nothing from train.
    assert qrels == {q: rel for q, (_, rel) in TEST.items()}
    assert list(queries) == list(TEST) and queries["q5"] == TEST["q5"][0]
    _, train_queries, train_qrels = read_beir(beir, "train")
    assert train_qrels == TRAIN and list(train_queries) == ["q1", "q5", "q6"]

    for split in ("dev", "../qrels/test"):
        with pytest.raises(InvalidInput) as missing:
            read_beir(beir, split)
        assert f"no qrels/{split}.tsv" in str(missing.value) and "splits available: test, train" in str(missing.value)


def test_read_beir_bad_input(beir: Path) -> None:
    (beir / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tlighthouse\tyes\n")
    with pytest.raises(InvalidInput, match=r"qrels/dev.tsv line 2: expected query-id, corpus-id, integer score"):
        read_beir(beir, "dev")
    write_qrels(beir / "qrels" / "dev.tsv", {"q1": {"lighthouse": 1}, "q404": {"reef": 1}})
    with pytest.raises(InvalidInput, match="judges 1 queries missing from queries.jsonl .first: 'q404'"):
        read_beir(beir, "dev")
    (beir / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n{not json\n')
    with pytest.raises(InvalidInput, match="queries.jsonl line 2: not JSON"):
        read_beir(beir)


def test_metrics_by_hand() -> None:
    qrels = {"q1": {"a": 2, "b": 1, "z": 0}, "q2": {"c": 1}, "q3": {"x": 0}, "q4": {"d": 1}}
    rankings = {
        "q1": ["z", "b", "a"],  # z is judged, but grade 0 is not relevant
        "q2": [f"e{i}" for i in range(10)] + ["c"],  # the relevant document at rank 11, past every cutoff
        "q3": ["x"],  # no relevant document at all: every metric is 0, and the query still counts
        "q9": ["a"],  # not judged: left out
    }  # q4 has no ranking: it counts as 0
    # Linear gain (trec_eval, BEIR): DCG = 0 + 1/log2(3) + 2/log2(4); the ideal order is a, b.
    ndcg_q1 = (1 / math.log2(3) + 2 / 2) / (2 + 1 / math.log2(3))
    assert ndcg_q1 != pytest.approx((1 / math.log2(3) + 3 / 2) / (3 + 1 / math.log2(3)))  # not 2^g - 1
    assert score(rankings, qrels) == pytest.approx(
        {"ndcg@10": ndcg_q1 / 4, "recall@2": 0.5 / 4, "recall@5": 1 / 4, "recall@10": 1 / 4, "mrr@10": 0.5 / 4})
    assert score({"q1": ["z", "b", "a"]}, {"q1": qrels["q1"]}) == pytest.approx(
        {"ndcg@10": ndcg_q1, "recall@2": 0.5, "recall@5": 1.0, "recall@10": 1.0, "mrr@10": 0.5})
    assert score({"q1": ["a", "b"]}, {"q1": qrels["q1"]})["ndcg@10"] == pytest.approx(1.0)
    # A document's rank is that of its best chunk.
    hits = [Hit(chunk_id=f"c{i}", document_id=s, collection="c", source=s, title="", content="", score=0.0)
            for i, s in enumerate(["d1", "d2", "d1", "d3"])]
    assert document_ranking(hits) == ["d1", "d2", "d3"]


def test_run_file_round_trips_through_ir_measures(tmp_path: Path) -> None:
    qrels = {"q1": {"a": 2, "b": 1, "z": 0}, "q2": {"c": 1}}
    # Rankings whose own order ir-measures must keep: document ids that sort against the rank order.
    rankings = {"q1": ["z", "b", "a"], "q2": ["y", "c", "b"]}
    assert run_file_path(tmp_path / "runs.trec", "hybrid") == tmp_path / "runs.hybrid.trec"
    path = tmp_path / "run.trec"
    write_run(path, rankings, "graphrag-hybrid")
    lines = [line.split() for line in path.read_text().splitlines()]
    assert [(q, it, d, int(r), tag) for q, it, d, r, _, tag in lines] == [
        ("q1", "Q0", "z", 1, "graphrag-hybrid"), ("q1", "Q0", "b", 2, "graphrag-hybrid"),
        ("q1", "Q0", "a", 3, "graphrag-hybrid"), ("q2", "Q0", "y", 1, "graphrag-hybrid"),
        ("q2", "Q0", "c", 2, "graphrag-hybrid"), ("q2", "Q0", "b", 3, "graphrag-hybrid")]
    assert [float(s) for *_, s, _ in lines[:3]] == [3.0, 2.0, 1.0]  # trec_eval orders by score
    direct = ir_measures.calc_aggregate(list(MEASURES.values()), qrels, ir_measures.read_trec_run(str(path)))
    assert {name: direct[m] for name, m in MEASURES.items()} == pytest.approx(score(rankings, qrels))
    with pytest.raises(InvalidInput, match="white space"):
        write_run(tmp_path / "bad.trec", {"q1": ["a doc"]}, "t")
    assert not (tmp_path / "bad.trec").exists()


def ir_measures_on(run_file: Path, qrels_tsv: Path) -> dict[str, float]:
    """The contract's metrics as ir-measures computes them from the files alone."""
    with qrels_tsv.open(newline="") as handle:
        rows = list(csv.reader(handle, delimiter="\t"))[1:]
    qrels = [ir_measures.Qrel(q, d, int(g)) for q, d, g in rows]
    values = ir_measures.calc_aggregate(list(MEASURES.values()), qrels, ir_measures.read_trec_run(str(run_file)))
    return {name: round(values[m], 4) for name, m in MEASURES.items()}


def test_eval_matches_ir_measures_on_its_run_files(settings: Any, services: Any, beir: Path, collection: str,
                                                   tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from graphrag.cli import main

    monkeypatch.setenv("GRAPHRAG_HOME", str(settings.home_dir))

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    runs = tmp_path / "runs" / "tiny.trec"
    runs.parent.mkdir()
    code, out, err = run("eval", str(beir), "--collection", collection, "--mode", "keyword", "--mode", "vector",
                         "--mode", "auto", "-k", "20", "--run-file", str(runs), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert set(data) == {"dataset", "documents", "queries", "modes"}
    # Only the test split's queries, q5 (judged only non-relevant) among them; q6 (train only) is not.
    assert (data["dataset"], data["documents"], data["queries"]) == ("tinybeir", len(CORPUS), len(TEST))
    assert set(data["modes"]) == {"keyword", "vector", "auto"}
    for mode, scores in data["modes"].items():
        assert set(scores) == {"ndcg@10", "recall@2", "recall@5", "recall@10", "mrr@10", "latency_ms"}
        latency = scores["latency_ms"]
        assert set(latency) == {"p50", "p95"} and 0 < latency["p50"] <= latency["p95"]
        run_file = run_file_path(runs, mode)
        lines = [line.split() for line in run_file.read_text().splitlines()]
        assert {line[0] for line in lines} <= set(TEST) and {line[5] for line in lines} == {f"graphrag-{mode}"}
        assert all(1 <= int(line[3]) <= 20 for line in lines)
        # The reported figures are ir-measures' on the run file and the test split's qrels, to 4 decimals.
        assert {m: scores[m] for m in MEASURES} == ir_measures_on(run_file, beir / "qrels" / "test.tsv")
        assert 0 < scores["ndcg@10"] < scores["mrr@10"]  # the graded order is not perfect
    # -k is the depth, not a cutoff: the vector leg ranks the whole 12-document corpus past rank 10.
    vector_lines = run_file_path(runs, "vector").read_text().splitlines()
    assert max(int(line.split()[3]) for line in vector_lines) > 10
    # Every query shares rare words with a relevant document, which comes first; q5, with no relevant
    # document, scores 0 and still counts (as in trec_eval and BEIR): MRR@10 is 4/5.
    assert data["modes"]["keyword"]["mrr@10"] == 0.8 and data["modes"]["auto"]["mrr@10"] == 0.8

    # A second run does not ingest again; the other split and the other fusion evaluate on the same data.
    code, out, err = run("eval", str(beir), "--collection", collection, "--mode", "hybrid", "--fusion", "rrf",
                         "--split", "train", "--run-file", str(runs), "--json")
    assert code == 0, err
    train = json.loads(out)
    assert train["queries"] == len(TRAIN)
    hybrid = run_file_path(runs, "hybrid")
    assert {line.split()[5] for line in hybrid.read_text().splitlines()} == {"graphrag-hybrid-rrf"}
    assert {m: train["modes"]["hybrid"][m] for m in MEASURES} == ir_measures_on(hybrid, beir / "qrels" / "train.tsv")
    code, out, _ = run("status", "--json")
    assert json.loads(out)["collections"][collection]["documents"] == len(CORPUS)

    # Bad input: one clear line on stderr, a non-zero exit, nothing ingested.
    fresh = f"{collection}_b"
    for args, message in [
        (["--split", "dev"], "tinybeir has no qrels/dev.tsv; splits available: test, train"),
        (["-k", "5"], "-k is the depth retrieved per query: from 10"),
        (["--run-file", str(tmp_path / "nowhere" / "run.trec")], "--run-file: folder"),
    ]:
        code, out, err = run("eval", str(beir), "--collection", fresh, *args, "--json")
        assert code != 0 and message in err and len(err.strip().splitlines()) == 1 and not out
    (beir / "queries.jsonl").unlink()
    code, _, err = run("eval", str(beir), "--collection", fresh, "--json")
    assert code != 0 and "queries.jsonl is missing" in err and len(err.strip().splitlines()) == 1
    code, _, err = run("eval", str(beir / "nope"), "--json")
    assert code != 0 and "is not a folder" in err
    code, out, _ = run("status", "--json")
    assert fresh not in json.loads(out)["collections"]
