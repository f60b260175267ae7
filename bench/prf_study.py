"""Dense pseudo-relevance feedback study: would moving the query vector towards its top passages help?

``dump`` runs the keyword and graph legs (as ``auto`` runs them) for every query of a BEIR folder
against its ingested collection (``graphrag eval DIR`` first), and stores them with the query
embedding and the collection's chunk embeddings. ``study`` then searches the chunk embeddings
exactly (numpy) with the plain query vector and with two feedback variants, fuses each with the
stored legs by weighted RRF as the router does (graph weight x confidence x graph prior; collapse
to documents in the top 40) and prints document-level nDCG@10 and Recall@2/5/10 per mode:

- ``rocchio M B``: q' = q + B x mean(top M vector passages), normalised;
- ``fused M B``: the same with the top M passages of the fused hybrid/auto ranking.

    python bench/prf_study.py dump ../shared/eval/scifact /tmp/prf_scifact.pkl
    python bench/prf_study.py study /tmp/prf_scifact.pkl
"""

from __future__ import annotations

import asyncio
import itertools
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


async def dump(folder: Path, out: Path) -> None:
    from tqdm import tqdm

    from graphrag.config import Settings
    from graphrag.evaluation import read_beir, splits
    from graphrag.runtime import open_services

    (split,) = splits(folder)  # the shared sets judge one split each
    _, queries, qrels = read_beir(folder, split)
    name = folder.name
    async with open_services(Settings()) as rt:
        router = await rt.router()
        rows = await rt.postgres.pool.fetch(
            "SELECT c.id::text AS id, d.source, c.embedding FROM chunks c JOIN documents d ON d.id = c.document_id "
            "WHERE d.collection = $1", name)
        emb = np.stack([np.asarray(r["embedding"].to_numpy(), dtype=np.float32) for r in rows])
        config = router.build_config("auto", collections=[name], limit=10)
        prior = await router.graph_prior((name,))
        items = []
        for qid, text in tqdm(list(queries.items()), desc="dump", unit="q", file=sys.stderr):
            text = text[:2000]
            q = await router.embed_query(text)
            done = asyncio.get_running_loop().create_future()
            done.set_result(q)
            keyword = await router._leg("keyword", text, done, config)
            graph = await router._leg("graph", text, done, config)
            items.append({"q": q, "qrels": qrels[qid], "keyword": [h[0] for h in keyword.hits],
                          "graph": [h[0] for h in graph.hits], "confidence": graph.confidence})
    with out.open("wb") as fh:
        pickle.dump({"ids": [r["id"] for r in rows], "docs": [r["source"] for r in rows], "emb": emb,
                     "prior": prior, "queries": items}, fh)


def study(path: Path) -> None:
    from graphrag.evaluation import score as score_run

    with path.open("rb") as fh:
        data = pickle.load(fh)  # noqa: S301 - our own dump
    ids, emb, prior = data["ids"], data["emb"], data["prior"]
    doc_of, row = dict(zip(ids, data["docs"], strict=True)), {c: i for i, c in enumerate(ids)}

    def top(vector: np.ndarray, n: int = 50) -> list[str]:
        sims = emb @ vector
        best = np.argpartition(-sims, n)[:n]
        return [ids[i] for i in best[np.argsort(-sims[best])]]

    def rrf(legs: dict[str, list[str]], weights: dict[str, float], k: int = 60) -> list[str]:
        score: dict[str, float] = {}
        for leg, hits in legs.items():
            for rank, chunk in enumerate(hits, 1):
                score[chunk] = score.get(chunk, 0.0) + weights[leg] / (k + rank)
        return sorted(score, key=lambda c: -score[c])

    def fuse(q: dict[str, Any], vector_hits: list[str], mode: str) -> list[str]:
        if mode == "vector":
            return vector_hits
        legs = {"vector": vector_hits, "keyword": q["keyword"]}
        weights = {"vector": 1.0, "keyword": 1.0}
        if mode == "auto":
            legs["graph"], weights["graph"] = q["graph"], 0.8 * q["confidence"] * prior
        return rrf(legs, weights)

    def shifted(q: dict[str, Any], chunks: list[str], beta: float) -> np.ndarray:
        centroid = np.mean([emb[row[c]] for c in chunks], axis=0)
        v = q["q"] + beta * centroid / np.linalg.norm(centroid)
        return v / np.linalg.norm(v)

    def evaluate(vector_of: Any, mode: str) -> str:
        rankings, qrels = {}, {}
        for n, q in enumerate(data["queries"]):
            rankings[str(n)] = list(dict.fromkeys(doc_of[c] for c in fuse(q, vector_of(q, mode), mode)[:40]))
            qrels[str(n)] = q["qrels"]
        values = score_run(rankings, qrels)
        names = {"nDCG@10": "ndcg@10", "R@2": "recall@2", "R@5": "recall@5", "R@10": "recall@10"}
        return " ".join(f"{label} {values[name]:.4f}" for label, name in names.items())

    variants: list[tuple[str, Any]] = [("plain", lambda q, mode: top(q["q"]))]
    for m, beta in itertools.product((3, 5, 10), (0.3, 0.6, 1.0)):
        variants.append((f"rocchio {m} {beta}", lambda q, mode, m=m, b=beta: top(shifted(q, top(q["q"], m), b))))
        variants.append((f"fused {m} {beta}",
                         lambda q, mode, m=m, b=beta: top(shifted(q, fuse(q, top(q["q"]), mode)[:m], b))))
    for name, vector_of in variants:
        for mode in ("vector", "hybrid", "auto"):
            print(f"{name:16} {mode:7} {evaluate(vector_of, mode)}", flush=True)


def main() -> None:
    from bench.common import dump_study_parser

    args = dump_study_parser(__doc__)[0].parse_args()
    if args.command == "dump":
        asyncio.run(dump(args.folder, args.out))
    else:
        study(args.dump)


if __name__ == "__main__":
    main()
