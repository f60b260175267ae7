# One-off study, as run at commit 53dabec (2026-11-23); not maintained: check out that commit to run it.
"""Graph leg statement A/B by replay: capture the real ``$leg`` parameters of searches, then run
variants of ``cypher/graph_leg.cypher`` on them back to back, statement by statement.

Capture (the router builds the parameters as a search does: query analysis, passage feedback):

    python bench/studies/graph_leg_replay.py capture --collection portable_100k --scifact 200 --out /tmp/p100k.json
    python bench/studies/graph_leg_replay.py capture --collection hotpotqa --beir ../shared/eval/hotpotqa --out /tmp/hp.json

Replay (each statement file is one variant; they run interleaved query by query, so the machine's
load touches them alike; db hits come from a second pass under PROFILE, which do not depend on the load):

    python bench/studies/graph_leg_replay.py replay /tmp/p100k.json old.cypher cypher/graph_leg.cypher

For each variant: server-side ms (Neo4j's result_available_after + result_consumed_after) and client
wall ms per statement, database hits, and how many queries' top chunks equal the first variant's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))


def _db_hits(plan: Any) -> int:
    if not plan:
        return 0
    return int(plan.get("dbHits") or 0) + sum(_db_hits(c) for c in plan.get("children", []))


def _rows(plan: Any) -> int:
    if not plan:
        return 0
    return int(plan.get("rows") or 0) + sum(_rows(c) for c in plan.get("children", []))


def _statement(path: str) -> str:
    text = Path(path).read_text(encoding="utf-8")
    body = text.split("// name: graph_leg", 1)[1]
    return body.split("// name:", 1)[0]


async def capture(args: argparse.Namespace) -> None:
    from bench.common import read_queries
    from graphrag.config import Settings
    from graphrag.evaluation import read_beir
    from graphrag.runtime import open_services

    if args.beir:
        _, queries, _ = read_beir(Path(args.beir), "test")
        items = list(queries.items())[: args.limit]
    else:
        items = read_queries(args.scifact)
    captured: list[dict[str, Any]] = []
    async with open_services(Settings()) as rt:
        router = await rt.router()
        neo = rt.neo4j
        original = neo.run
        current: dict[str, Any] = {}

        async def run(file: str, name: str, **params: Any) -> list[dict[str, Any]]:
            if name == "graph_leg" and "leg" in params and current:
                captured.append({**current, "leg": params["leg"]})
            return await original(file, name, **params)

        neo.run = run  # type: ignore[method-assign]
        for qid, text in items:
            for mode in args.modes.split(","):
                current.update(qid=qid, mode=mode, text=text)
                await router.search(text[:2000], mode=mode, limit=10, collections=[args.collection],
                                    collapse=True, leg_timeout_s=60.0)
        current.clear()
    Path(args.out).write_text(json.dumps(captured))
    print(f"{len(captured)} statements captured -> {args.out}")


async def replay(args: argparse.Namespace) -> None:
    from graphrag.config import Settings
    from graphrag.runtime import open_services

    cases = json.loads(Path(args.params).read_text())
    if args.mode:
        cases = [c for c in cases if c["mode"] == args.mode]
    cases = cases[: args.limit or None]
    for kv in args.set or []:
        key, value = kv.split("=", 1)
        for c in cases:
            c["leg"][key] = json.loads(value)
    variants = {Path(p).name if Path(p).name not in () else p: _statement(p) for p in args.variants}
    names = list(variants)
    if len(set(names)) != len(args.variants):
        names = list(args.variants)
        variants = {p: _statement(p) for p in args.variants}
    out: dict[str, dict[str, list[float]]] = {n: {"server_ms": [], "wall_ms": [], "db_hits": [], "rows": []}
                                             for n in names}
    tops: dict[str, list[list[str]]] = {n: [] for n in names}
    async with open_services(Settings()) as rt:
        driver, db = rt.neo4j.driver, rt.neo4j.database
        for n in names:  # plan each variant first
            await driver.execute_query(variants[n], parameters_={"leg": cases[0]["leg"]}, database_=db)
        for rnd in range(args.rounds):
            for case in cases:
                order = names if rnd % 2 == 0 else names[::-1]
                for n in order:
                    t0 = time.perf_counter()
                    res = await driver.execute_query(variants[n], parameters_={"leg": case["leg"]}, database_=db)
                    wall = (time.perf_counter() - t0) * 1000
                    s = res.summary
                    out[n]["server_ms"].append((s.result_available_after or 0) + (s.result_consumed_after or 0))
                    out[n]["wall_ms"].append(wall)
                    if rnd == 0:
                        tops[n].append([c[0] for c in res.records[0]["chunks"]][: args.top])
        if args.profile:
            for case in cases:
                for n in names:
                    res = await driver.execute_query("PROFILE " + variants[n], parameters_={"leg": case["leg"]},
                                                     database_=db)
                    out[n]["db_hits"].append(_db_hits(res.summary.profile))
                    out[n]["rows"].append(_rows(res.summary.profile))
    report: dict[str, Any] = {"cases": len(cases), "rounds": args.rounds, "load": os.getloadavg()}
    base = names[0]
    for n in names:
        r: dict[str, Any] = {}
        for k, v in out[n].items():
            if v:
                r[k] = {"mean": round(statistics.fmean(v), 1), "p50": round(statistics.median(v), 1),
                        "p95": round(sorted(v)[int(0.95 * (len(v) - 1))], 1)}
        r["same_top"] = sum(a == b for a, b in zip(tops[n], tops[base], strict=True))
        r["same_top_set"] = sum(set(a) == set(b) for a, b in zip(tops[n], tops[base], strict=True))
        overlap = [len(set(a) & set(b)) / max(len(b), 1) for a, b in zip(tops[n], tops[base], strict=True)]
        r["top_overlap_mean"] = round(statistics.fmean(overlap), 3) if overlap else None
        report[n] = r
    print(json.dumps(report, indent=1))
    if args.save:
        Path(args.save).write_text(json.dumps({"report": report, "tops": tops}, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    cap = sub.add_parser("capture")
    cap.add_argument("--collection", required=True)
    cap.add_argument("--beir")
    cap.add_argument("--scifact", type=int, default=200)
    cap.add_argument("--limit", type=int, default=200)
    cap.add_argument("--modes", default="auto,graph")
    cap.add_argument("--out", required=True)
    rep = sub.add_parser("replay")
    rep.add_argument("params")
    rep.add_argument("variants", nargs="+")
    rep.add_argument("--mode")
    rep.add_argument("--limit", type=int, default=0)
    rep.add_argument("--rounds", type=int, default=1)
    rep.add_argument("--top", type=int, default=10)
    rep.add_argument("--profile", action="store_true")
    rep.add_argument("--save")
    rep.add_argument("--set", action="append", help="key=JSON: a field of $leg for every case")
    args = parser.parse_args()
    asyncio.run(capture(args) if args.cmd == "capture" else replay(args))


if __name__ == "__main__":
    main()
