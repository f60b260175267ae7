"""Fusion study: dump each query's per-leg rankings once, then try fusion variants offline in seconds.

``dump`` runs every query of a BEIR folder in ``auto`` mode (limit 100, no collapse) against its
ingested collection (run ``graphrag eval DIR`` first) and writes one JSON line per query: the qrels,
the legs' status and confidence, and every candidate chunk with its document and per-leg rank and
score. ``study`` re-fuses those candidates with weighted RRF, min-max score fusion (CombSUM) or a
mix of both, over a grid of weights, and prints document-level nDCG@10 and Recall@2/5/10 (a
document's rank is that of its best chunk, as in ``graphrag eval``), best first.

    python bench/fusion_study.py dump ../shared/eval/hotpotqa /tmp/legs_hotpotqa.jsonl
    python bench/fusion_study.py study /tmp/legs_hotpotqa.jsonl --sort recall@5

The candidates are those of the current fusion's top 100, so variants are compared on the pool the
legs really return. Tune for the method, not for one set's queries: held-out sets decide.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

LEGS = ("vector", "keyword", "graph")


async def dump(folder: Path, out: Path, limit_queries: int | None) -> None:
    from tqdm import tqdm

    from graphrag.config import Settings
    from graphrag.evaluation import read_beir, splits
    from graphrag.runtime import open_services

    (split,) = splits(folder)  # the shared sets judge one split each
    _, queries, qrels = read_beir(folder, split)
    items = list(queries.items())[:limit_queries] if limit_queries else list(queries.items())
    async with open_services(Settings()) as rt:
        router = await rt.router()
        with out.open("w", encoding="utf-8") as fh:
            for qid, text in tqdm(items, desc="dump", unit="q", file=sys.stderr):
                r = await router.search(text[:2000], mode="auto", limit=100, collections=[folder.name])
                fh.write(json.dumps({
                    "qid": qid, "qrels": qrels[qid], "legs": r["legs"],
                    "hits": [{"c": h["chunk_id"], "d": h["source"],
                              "legs": {k: {"rank": v["rank"], "score": v["score"]} for k, v in h["legs"].items()
                                       if k in LEGS}} for h in r["results"]],
                }) + "\n")


def evaluate(records: list[dict[str, Any]], weights: dict[str, float], *, beta: float, k: int,
             use_confidence: bool = True) -> dict[str, float]:
    """Mean document-level metrics of one fusion: per leg ``weight * (beta * minmax + (1 - beta) * rrf)``,
    where rrf is ``(k + 1) / (k + rank)`` (1 at rank 1) and minmax the leg's score scaled to [0, 1].
    With ``use_confidence`` the graph weight is scaled as the router scales it (confidence x prior)."""
    from graphrag.evaluation import score as score_run

    rankings: dict[str, list[str]] = {}
    for q in records:
        w = dict(weights)
        if use_confidence:
            graph = q["legs"].get("graph", {})
            w["graph"] = w.get("graph", 0.0) * float(graph.get("confidence", 1.0)) * float(graph.get("prior", 1.0))
        bounds = {}
        for leg in LEGS:
            values = [h["legs"][leg]["score"] for h in q["hits"] if leg in h["legs"]]
            if values:
                bounds[leg] = (min(values), max(values))
        best: dict[str, float] = {}
        for h in q["hits"]:
            score = 0.0
            for leg, info in h["legs"].items():
                if leg not in bounds or not w.get(leg):
                    continue
                lo, hi = bounds[leg]
                minmax = (info["score"] - lo) / (hi - lo) if hi > lo else 1.0
                score += w[leg] * (beta * minmax + (1 - beta) * (k + 1) / (k + info["rank"]))
            if score and score > best.get(h["d"], 0.0):
                best[h["d"]] = score
        rankings[q["qid"]] = sorted(best, key=lambda d: -best[d])
    values = score_run(rankings, {q["qid"]: q["qrels"] for q in records})
    return {name: round(values[name], 4) for name in ("ndcg@10", "recall@2", "recall@5", "recall@10")}


def study(path: Path, sort: str, top: int) -> None:
    records = [json.loads(line) for line in path.open(encoding="utf-8")]
    rows = []
    for beta, k, wk, wg in itertools.product((0.0, 0.5, 1.0), (10, 30, 60), (0.8, 1.0, 1.2),
                                             (0.0, 0.3, 0.8, 1.0, 1.3)):
        if beta == 1.0 and k != 60:
            continue  # k plays no part in pure score fusion
        metrics = evaluate(records, {"vector": 1.0, "keyword": wk, "graph": wg}, beta=beta, k=k)
        rows.append(({"beta": beta, "k": k, "keyword": wk, "graph": wg}, metrics))
    current = evaluate(records, {"vector": 1.0, "keyword": 1.0, "graph": 0.8}, beta=0.0, k=60)
    print(f"{len(records)} queries; current auto (RRF k=60, graph 0.8 x confidence): {current}")
    for params, metrics in sorted(rows, key=lambda r: -r[1][sort])[:top]:
        print(params, metrics)


def main() -> None:
    from bench.common import dump_study_parser

    parser, d, s = dump_study_parser(__doc__)
    d.add_argument("--limit-queries", type=int)
    s.add_argument("--sort", default="ndcg@10", choices=["ndcg@10", "recall@2", "recall@5", "recall@10"])
    s.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    if args.command == "dump":
        asyncio.run(dump(args.folder.resolve(), args.out, args.limit_queries))
    else:
        study(args.dump, args.sort, args.top)


if __name__ == "__main__":
    main()
