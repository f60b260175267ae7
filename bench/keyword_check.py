"""Keyword leg before/after: the previous keyword_leg statement (unbounded BM25 over every chunk sharing a
term with the query) against the current one (candidate budget), on the same claims and collection.

Reports SQL latency of each and document-level nDCG@10 / recall@10 / MRR@10 on the SciFact qrels (a
scale document counts as the SciFact document it derives from), and the overlap of their top 10 / 50.

    python bench/keyword_check.py --collection scifact --queries 300
    python bench/keyword_check.py --collection scale_100k --queries 40 --old-rev 8e35d40

Writes bench/results/keyword_check_<collection>.json. Run from the repository root.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO, SCIFACT, bench_sql, machine, percentiles, write_result  # noqa: E402
from graphrag.config import Settings  # noqa: E402
from graphrag.evaluation import read_beir, score  # noqa: E402
from graphrag.runtime import open_services  # noqa: E402
from graphrag.search.legs import BM25_B, BM25_K1  # noqa: E402
from graphrag.stores import queries  # noqa: E402
from graphrag.stores.queries import _parse_named  # noqa: E402


async def run(args: argparse.Namespace) -> dict[str, Any]:
    old_text = subprocess.run(["git", "show", f"{args.old_rev}:sql/search.sql"], cwd=REPO, capture_output=True,
                              text=True, check=True).stdout
    statements = {"before": _parse_named(old_text)["keyword_leg"], "after": queries.sql("search", "keyword_leg")}
    statements = {k: v.replace("/*FILTER*/", "TRUE") for k, v in statements.items()}
    _, claims, qrels = read_beir(SCIFACT, "train")  # the shared SciFact judges its train split
    items = list(claims.items())[: args.queries]
    async with open_services(Settings()) as rt:
        pool = rt.postgres.pool
        src = {str(r["id"]): r["src"] for r in await pool.fetch(bench_sql("scale", "document_sources"), args.collection)}
        metrics: dict[str, dict[str, list[float]]] = {k: {"ms": []} for k in statements}
        rankings: dict[str, dict[str, list[str]]] = {k: {} for k in statements}
        top10, top50 = [], []
        for qid, text in items:
            got = {}
            for name, sql in statements.items():
                t0 = time.perf_counter()
                rows = await pool.fetch(sql, text, [args.collection], 50, BM25_K1, BM25_B)
                metrics[name]["ms"].append((time.perf_counter() - t0) * 1000)
                ids = [r["id"] for r in rows]
                got[name] = ids
                docs = {r["id"]: str(r["document_id"]) for r in
                        await pool.fetch("SELECT id, document_id FROM chunks WHERE id = ANY($1::uuid[])", ids)}
                ranked: list[str] = []
                for cid in ids:
                    if src[docs[cid]] not in ranked:
                        ranked.append(src[docs[cid]])
                rankings[name][qid] = ranked
            before = got["before"]
            top10.append(len(set(before[:10]) & set(got["after"][:10])) / max(1, min(10, len(before))))
            top50.append(len(set(before) & set(got["after"])) / max(1, len(before)))
        result = {"collection": args.collection, "queries": len(items), "old_rev": args.old_rev,
                  "machine": await machine(rt)}
    judged = {qid: qrels[qid] for qid, _ in items}
    for name, m in metrics.items():
        values = score(rankings[name], judged)
        result[name] = {"sql_latency_ms": percentiles(m["ms"]),
                        **{k: round(values[k], 4) for k in ("ndcg@10", "recall@10", "mrr@10")}}
    result["overlap_top10"] = round(sum(top10) / len(top10), 4)
    result["overlap_top50"] = round(sum(top50) / len(top50), 4)
    result["speedup_p50"] = round(result["before"]["sql_latency_ms"]["p50"] / result["after"]["sql_latency_ms"]["p50"], 1)
    path = write_result(f"keyword_check_{args.collection}.json", result)
    print({k: v for k, v in result.items() if k != "machine"})
    print(f"wrote {path}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collection", default="scifact")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--old-rev", default="8e35d40", help="commit whose sql/search.sql is 'before'")
    asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    main()
