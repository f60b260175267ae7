"""``graphrag eval``: the metrics as pure functions, and the command end to end on a BEIR folder the
test writes (real stores, real models)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from graphrag.evaluation import document_ranking, mrr_at, ndcg_at, recall_at

CORPUS = [
    ("lighthouse", "Tower of Hercules", "The Tower of Hercules is a Roman lighthouse on a peninsula near A Coruna."),
    ("volcano", "Mount Etna", "Mount Etna is an active stratovolcano on the east coast of Sicily."),
    ("glacier", "Perito Moreno Glacier", "The Perito Moreno Glacier is a glacier in Santa Cruz, Argentina."),
    ("canal", "Panama Canal", "The Panama Canal is an artificial waterway connecting the Atlantic and Pacific."),
    ("desert", "Atacama Desert", "The Atacama Desert is a plateau in South America, among the driest places."),
    ("reef", "Great Barrier Reef", "The Great Barrier Reef is the largest coral reef system, off Queensland."),
]
QUERIES = {
    "q1": ("Which Roman lighthouse stands near A Coruna?", {"lighthouse": 1}),
    "q2": ("active volcano on Sicily", {"volcano": 1}),
    "q3": ("waterway between the Atlantic and the Pacific", {"canal": 1}),
    "q4": ("coral reef off Queensland, or the driest desert plateau", {"reef": 1, "desert": 1}),
}


def test_metrics_by_hand() -> None:
    relevant = {"a": 1, "c": 1}
    ranked = ["b", "a", "d", "c"]
    assert ndcg_at(ranked, relevant) == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))
    assert recall_at(ranked, relevant, 2) == 0.5 and recall_at(ranked, relevant, 5) == 1.0
    assert mrr_at(ranked, relevant) == 0.5 and mrr_at(["x"], relevant) == 0.0
    assert ndcg_at(["a", "c"], relevant) == pytest.approx(1.0)
    # A document's rank is that of its best chunk.
    hits = [{"source": "d1"}, {"source": "d2"}, {"source": "d1"}, {"source": "d3"}]
    assert document_ranking(hits) == ["d1", "d2", "d3"]


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    folder = tmp_path / "tinybeir"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": i, "title": t, "text": x}) + "\n" for i, t, x in CORPUS))
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": q, "text": text}) + "\n" for q, (text, _) in QUERIES.items()))
    rows = ["query-id\tcorpus-id\tscore"] + [f"{q}\t{d}\t{g}" for q, (_, rel) in QUERIES.items() for d, g in rel.items()]
    (folder / "qrels" / "test.tsv").write_text("\n".join(rows) + "\n")
    return folder


def test_eval_prints_the_contract_json(settings: Any, services: Any, beir: Path, collection: str) -> None:
    env = {**os.environ, "GRAPHRAG_HOME": str(settings.home_dir)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "graphrag.cli", *args], capture_output=True, text=True,
                              env=env, timeout=600)

    result = run("eval", str(beir), "--collection", collection, "--mode", "keyword", "--mode", "auto", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"dataset", "documents", "queries", "modes"}
    assert (data["dataset"], data["documents"], data["queries"]) == ("tinybeir", len(CORPUS), len(QUERIES))
    assert set(data["modes"]) == {"keyword", "auto"}
    for scores in data["modes"].values():
        assert set(scores) == {"ndcg@10", "recall@2", "recall@5", "recall@10", "mrr@10", "latency_ms"}
        assert set(scores["latency_ms"]) == {"p50", "p95"} and 0 < scores["latency_ms"]["p50"] <= scores["latency_ms"]["p95"]
        assert all(0.0 <= scores[m] <= 1.0 for m in scores if m != "latency_ms")
    # Every query shares rare words with its documents only, so both modes find all of them in the
    # top 5 (q4 has two relevant documents, so recall@2 needs both in the first two places).
    assert data["modes"]["keyword"]["recall@5"] == 1.0 and data["modes"]["auto"]["recall@5"] == 1.0
    assert data["modes"]["auto"]["mrr@10"] == 1.0

    # A second run does not ingest again, and the fusion can be compared on the same set.
    again = run("eval", str(beir), "--collection", collection, "--mode", "hybrid", "--fusion", "rrf", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["modes"]["hybrid"]["recall@10"] == 1.0
    status = json.loads(run("status", "--json").stdout)
    assert status["collections"][collection]["documents"] == len(CORPUS)

    # Bad input: one clear line on stderr, a non-zero exit, nothing written.
    (beir / "queries.jsonl").unlink()
    broken = run("eval", str(beir), "--collection", f"{collection}_b", "--json")
    assert broken.returncode != 0 and "queries.jsonl is missing" in broken.stderr
    assert "Traceback" not in broken.stderr and len(broken.stderr.strip().splitlines()) == 1
    missing = run("eval", str(beir / "nope"), "--json")
    assert missing.returncode != 0 and "Traceback" not in missing.stderr
    assert f"{collection}_b" not in json.loads(run("status", "--json").stdout)["collections"]
