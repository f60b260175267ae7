"""Load-robust cost of the graph leg: Neo4j database hits and client CPU time per graph search.

Wall-clock latency on a shared, loaded machine says little; these two measures do not depend on
the load. For every query of a BEIR folder (already ingested into ``--collection``), in mode
``graph``, it records:

- the CPU time this process spent per search (``time.process_time``: query parsing, driver
  decoding, Python-side walk and scoring, fusion; the query embeddings are computed beforehand and
  the servers' CPU is not included), from a first pass;
- the Neo4j database hits of the statements the graph leg ran (each one run under ``PROFILE``),
  the number of Neo4j and PostgreSQL calls it made, from a second pass.

It imports the package of ``--tree`` (default: this checkout), so the same script measures another
commit's graph leg: ``git archive <commit> | tar -x -C /tmp/old`` and pass ``--tree /tmp/old``.

    GRAPHRAG_HOME=... python bench/graph_leg_dbhits.py ../shared/eval/hotpotqa --collection hotpotqa \
        --tree /tmp/old --label old

Writes bench/results/graph_leg_dbhits_<label>.json (into this checkout).
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

IN_GRAPH_LEG: contextvars.ContextVar[bool] = contextvars.ContextVar("in_graph_leg", default=False)


def _db_hits(plan: dict[str, Any] | None) -> int:
    if not plan:
        return 0
    return int(plan.get("dbHits") or 0) + sum(_db_hits(c) for c in plan.get("children", []))


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    from graphrag.config import Settings
    from graphrag.evaluation import read_beir
    from graphrag.runtime import open_services
    from graphrag.stores import queries as named

    _, queries, _ = read_beir(Path(args.folder), args.split)
    items = list(queries.items())[: args.limit_queries or None]
    async with open_services(Settings()) as rt:
        router = await rt.router("graph")
        neo, pg = rt.neo4j, rt.postgres
        calls: dict[str, int] = {"neo4j": 0, "pg": 0}
        hits: list[int] = []
        profile = False
        original_leg, original_run = router._leg, neo.run
        original_fetch, original_filtered = pg.fetch, pg.fetch_filtered

        async def marked_leg(name: str, *a: Any, **k: Any) -> Any:
            token = IN_GRAPH_LEG.set(name == "graph")
            try:
                return await original_leg(name, *a, **k)
            finally:
                IN_GRAPH_LEG.reset(token)

        async def run(file: str, name: str, **params: Any) -> list[dict[str, Any]]:
            if not IN_GRAPH_LEG.get():
                return await original_run(file, name, **params)
            calls["neo4j"] += 1
            if not profile:
                return await original_run(file, name, **params)
            result = await neo.driver.execute_query("PROFILE " + named.cypher(file, name), parameters_=params,
                                                    database_=neo.database)
            hits[-1] += _db_hits(result.summary.profile)
            return [record.data() for record in result.records]

        def counted(fn: Any) -> Any:
            async def call(*a: Any, **k: Any) -> Any:
                if IN_GRAPH_LEG.get():
                    calls["pg"] += 1
                return await fn(*a, **k)
            return call

        router._leg = marked_leg
        neo.run = run
        pg.fetch, pg.fetch_filtered = counted(original_fetch), counted(original_filtered)
        options = {"limit": 10, "collections": [args.collection], "collapse": True, "leg_timeout_s": 60.0}
        await router.search(items[0][1], mode="graph", **options)  # models and plans warm
        space = await router.space((args.collection,))
        for _, text in items:  # the query embeddings are cached: the CPU below is the search's own
            await router.embed_query(text[:2000], space)
        cpu: list[float] = []
        statuses: dict[str, int] = {}
        for _, text in items:  # pass 1: client CPU per search, no PROFILE
            t0 = time.process_time()
            out = await router.search(text[:2000], mode="graph", **options)
            cpu.append((time.process_time() - t0) * 1000)
            status = out["legs"]["graph"]["status"]
            statuses[status] = statuses.get(status, 0) + 1
        calls.update(neo4j=0, pg=0)
        profile = True
        for _, text in items:  # pass 2: database hits of the leg's statements
            hits.append(0)
            await router.search(text[:2000], mode="graph", **options)
    n = len(items)
    return {
        "tree": str(Path(args.tree).resolve()), "collection": args.collection, "queries": n,
        "graph_leg_status": statuses,
        "client_cpu_ms_per_search": {"mean": round(statistics.fmean(cpu), 2), "p50": round(statistics.median(cpu), 2)},
        "neo4j_db_hits_per_search": {"mean": round(statistics.fmean(hits)), "p50": round(statistics.median(hits)),
                                     "max": max(hits)},
        "graph_leg_calls_per_search": {"neo4j": round(calls["neo4j"] / n, 2), "postgres": round(calls["pg"] / n, 2)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("--collection", required=True)
    parser.add_argument("--tree", default=str(HERE), help="the code tree whose graphrag package is measured")
    parser.add_argument("--split", default="test")
    parser.add_argument("--limit-queries", type=int, default=0)
    parser.add_argument("--label", default="run")
    args = parser.parse_args()
    sys.path.insert(0, str(Path(args.tree).resolve()))
    result = asyncio.run(measure(args))
    out = HERE / "bench" / "results" / f"graph_leg_dbhits_{args.label}.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
