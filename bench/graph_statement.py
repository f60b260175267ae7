"""Neo4j CPU per graph-leg statement, for the repository's statement and variants of it, interleaved.

For the first ``--queries`` SciFact claims (those with judgements), the graph leg's parameter map is
built as a search builds it (keyword-leg passage feedback included), then each statement text runs on
every claim, ``--rounds`` times, the texts taking turns so that drift hits them alike. Reported per
text: the Neo4j process's CPU milliseconds per statement (the median round) and the wall time, and
whether it returned the same chunks as the first text (a variant meant to change nothing must say
``true``).

    python bench/graph_statement.py --collection scale_100k
    python bench/graph_statement.py --collection scale_100k --variant /tmp/no_title_check.cypher

A variant is a file holding one statement body (with or without a ``// name: graph_leg`` header).
Writes bench/results/graph_statement_<collection>[_<label>].json. Run from the repository root with
the services up.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil  # noqa: E402

from bench.common import machine, read_queries, write_result  # noqa: E402
from graphrag.config import Settings  # noqa: E402
from graphrag.runtime import open_services  # noqa: E402
from graphrag.search.graph import graph_parameters, passages  # noqa: E402
from graphrag.search.legs import keyword_leg  # noqa: E402
from graphrag.stores import queries  # noqa: E402


def neo4j_processes() -> list[psutil.Process]:
    """The local Neo4j server's JVM (the CPU counted is its own)."""
    found = []
    for proc in psutil.process_iter(["name", "cmdline"]):
        if "java" in (proc.info["name"] or "") and "neo4j" in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    if not found:
        raise SystemExit("no local Neo4j process: start the services (graphrag services up)")
    return found


def cpu_seconds(processes: list[psutil.Process]) -> float:
    return sum(p.cpu_times().user + p.cpu_times().system for p in processes)


def statement_body(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    return text.split("// name: graph_leg", 1)[1] if "// name: graph_leg" in text else text


async def run(args: argparse.Namespace) -> dict[str, Any]:
    texts = {"repository": queries.cypher("graph_leg", "graph_leg")}
    for variant in args.variant:
        texts[Path(variant).name] = statement_body(Path(variant))
    claims = read_queries(args.queries)
    processes = neo4j_processes()
    async with open_services(Settings()) as rt:
        router = await rt.router()
        config = router.build_config("auto", collections=[args.collection])
        total = await router.chunk_count(config.collections)
        params = []
        for _, claim in claims:
            keyword = await keyword_leg(rt.postgres, claim, config)
            params.append(graph_parameters(claim, config, total_chunks=total,
                                           feedback=passages(keyword, config.graph_prf)))

        async def one(text: str, leg: dict[str, Any]) -> dict[str, Any]:
            async with rt.neo4j.driver.session(database=rt.neo4j.database) as session:
                result = await session.run(text, {"leg": leg})
                return dict((await result.single(strict=True)).items())

        for text in texts.values():  # planned and warm before anything is timed
            for leg in params[:5]:
                await one(text, leg)
        reference = [[c[0] for c in (await one(texts["repository"], leg))["chunks"]] for leg in params]
        cpu: dict[str, list[float]] = {name: [] for name in texts}
        wall: dict[str, list[float]] = {name: [] for name in texts}
        same = dict.fromkeys(texts, True)
        for round_ in range(args.rounds):
            for name, text in texts.items():
                c0, t0 = cpu_seconds(processes), time.perf_counter()
                for i, leg in enumerate(params):
                    record = await one(text, leg)
                    if round_ == 0 and [c[0] for c in record.get("chunks", [])] != reference[i]:
                        same[name] = False
                cpu[name].append((cpu_seconds(processes) - c0) * 1000 / len(params))
                wall[name].append((time.perf_counter() - t0) * 1000 / len(params))
        out: dict[str, Any] = {"collection": args.collection, "queries": len(params), "rounds": args.rounds,
                               "machine": await machine(rt), "statements": {}}
        for name in texts:
            out["statements"][name] = {"neo4j_cpu_ms": round(statistics.median(cpu[name]), 2),
                                       "wall_ms": round(statistics.median(wall[name]), 2),
                                       "same_chunks": same[name]}
            print(f"{name}: Neo4j CPU {statistics.median(cpu[name]):.2f} ms per statement, "
                  f"wall {statistics.median(wall[name]):.2f} ms, same chunks: {same[name]}", flush=True)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--variant", action="append", default=[], help="a statement file to compare")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    suffix = f"_{args.label}" if args.label else ""
    print(write_result(f"graph_statement_{args.collection}{suffix}.json", result))


if __name__ == "__main__":
    main()
