"""Where the graph statement spends its database hits: ``PROFILE`` of ``cypher/graph_leg.cypher`` for
the first N SciFact claims, with the keyword leg's real passage feedback, summed per operator; and the
statement with a chunk's MENTIONS degree as a constant beside it (the most a stored degree could
save). Ran on main after the typed search core (docs/benchmarks.md, "Query path A/B, fourth round"), and
after the entity lists ("fifth round"), where only the statement as is is profiled.

    python bench/studies/graph_statement_profile.py --collection scale_100k --queries 30
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from graphrag.config import Settings  # noqa: E402
from graphrag.runtime import open_services  # noqa: E402
from graphrag.search.graph import graph_parameters, passages  # noqa: E402
from graphrag.search.legs import keyword_leg  # noqa: E402
from graphrag.stores import queries  # noqa: E402

DEGREE = "COUNT { (c)-[:MENTIONS]->() } AS degree"


def operators(plan: dict[str, Any], hits: collections.Counter[str], rows: collections.Counter[str]) -> int:
    """Add each operator's db hits and rows of a profile to the counters; the plan's total hits."""
    key = f"{plan['operatorType']} {str(plan.get('args', {}).get('Details', ''))[:90]}"
    hits[key] += plan.get("dbHits", 0)
    rows[key] += plan.get("rows", 0)
    return plan.get("dbHits", 0) + sum(operators(child, hits, rows) for child in plan.get("children", []))


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--collection", required=True)
    parser.add_argument("--queries", type=int, default=30)
    args = parser.parse_args()
    claims = [json.loads(line)["text"] for line in (REPO.parent / "shared" / "eval" / "scifact" / "queries.jsonl").open()]
    async with open_services(Settings()) as rt:
        router = await rt.router()
        statement = queries.cypher("graph_leg", "graph_leg")
        # The fourth round's statement counted each chunk's mentions; with entity lists (fifth round) it reads
        # no chunk at all, and only the statement as is is profiled.
        variants = [("as is", statement)]
        if DEGREE in statement:
            variants.append(("degree constant", statement.replace(DEGREE, "1 AS degree")))
        config = router.build_config("auto", collections=[args.collection])
        total = await router.chunk_count((args.collection,))
        legs = []
        for claim in claims[: args.queries]:
            keyword = await keyword_leg(rt.postgres, claim, config)
            legs.append(graph_parameters(claim, config, total_chunks=total, feedback=passages(keyword, config.graph_prf)))
        driver = rt.neo4j.driver
        for label, text in variants * 2:
            hits: collections.Counter[str] = collections.Counter()
            rows: collections.Counter[str] = collections.Counter()
            total_hits = 0
            for leg in legs:
                result = await driver.execute_query("PROFILE " + text, leg=leg, routing_="r")
                total_hits += operators(result.summary.profile, hits, rows)
            start = time.perf_counter()
            for leg in legs:
                await driver.execute_query(text, leg=leg, routing_="r")
            ms = 1000 * (time.perf_counter() - start) / len(legs)
            print(f"{label}: {total_hits / len(legs):.0f} db hits, {ms:.1f} ms per search")
        for key, value in hits.most_common(12):
            print(f"{value / len(legs):8.0f} {100 * value / max(sum(hits.values()), 1):5.1f}%"
                  f"  rows {rows[key] / len(legs):7.0f}  {key}")


if __name__ == "__main__":
    asyncio.run(main())
