"""Community computation time: ``graphrag communities`` on a collection, stage by stage, plus the
global search latency over the stored reports.

    python bench/communities.py --collection scifact          # the real SciFact graph (10.6k chunks)
    python bench/communities.py --collection scale_100k       # a derived corpus (bench/generate.py)

Each run computes the collection's communities ``--runs`` times (a re-run replaces them; the first
run also loads the embedding model, reported apart) and times ``--queries`` global searches.
Writes bench/results/communities_<collection>.json. Run from the repository root (the local
services under ./.graphrag, or GRAPHRAG_HOME, are started on demand).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine, percentiles, write_result  # noqa: E402
from graphrag.communities.build import compute_communities  # noqa: E402
from graphrag.communities.detect import DetectOptions  # noqa: E402
from graphrag.config import Settings  # noqa: E402
from graphrag.runtime import open_services  # noqa: E402

QUESTIONS = [
    "What are the main themes of this collection?",
    "Which diseases and treatments come up across the documents?",
    "What do the documents say about cancer?",
    "Summarize the research on the immune system.",
    "What are the key topics about genes and proteins?",
]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collection", required=True)
    parser.add_argument("--runs", type=int, default=2)
    parser.add_argument("--queries", type=int, default=20, help="global searches timed (questions repeated)")
    parser.add_argument("--levels", type=int, default=2)
    args = parser.parse_args()

    settings = Settings()
    async with open_services(settings) as rt:
        result: dict[str, Any] = {"collection": args.collection, "machine": await machine(rt)}
        totals = await rt.postgres.q.documents.totals(args.collection)
        result["documents"], result["chunks"] = totals.documents, totals.chunks
        t0 = time.perf_counter()
        await asyncio.to_thread(lambda: rt.embedders.default)
        result["model_load_s"] = round(time.perf_counter() - t0, 3)
        runs = []
        for n in range(args.runs):
            summary = await compute_communities(rt.postgres, rt.neo4j, rt.embedders, args.collection,
                                                options=DetectOptions(levels=args.levels))
            print(f"run {n + 1}: {summary['communities']} communities {summary['levels']} over "
                  f"{summary['entities']} entities, {summary['relations']} relations in {summary['seconds']}s "
                  f"{summary['stages']}", flush=True)
            runs.append(summary)
        result["runs"] = runs
        router = await rt.router()
        latencies = []
        for k in range(args.queries):
            t = time.perf_counter()
            response = await router.search(QUESTIONS[k % len(QUESTIONS)], mode="global",
                                           collections=[args.collection], limit=10)
            latencies.append((time.perf_counter() - t) * 1000)
            assert response["results"], "the global search found no report"
        result["global_search_ms"] = percentiles(latencies[len(QUESTIONS):] or latencies)  # first round warms up
        print(f"global search: {result['global_search_ms']}", flush=True)
        result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    path = write_result(f"communities_{args.collection}.json", result)
    print(f"wrote {path}")


if __name__ == "__main__":
    asyncio.run(main())
