# One-off study, as run at commit e259858 (2026-11-23); not maintained: check out that commit to run it.
"""Graph leg study: quality, the leg's own latency and its store round trips, per variant of search options.

Runs every judged query of a BEIR folder (already ingested into ``--collection``) through
``SearchRouter.search`` in each mode and each variant (search options as JSON), and reports nDCG@10,
R@2, R@5 (as ``graphrag eval`` computes them), the search's latency and the graph leg's ``took_ms``
(both from the search's start; percentiles), and the
store calls the graph leg made: how many, and how many of them ran one after another (the longest
chain of calls each starting after the previous one ended: the round trips on its critical path).
The graph leg is timed and traced in graph mode only (alone, so other legs' calls do not mix in).

    python bench/graph_leg_study.py ../shared/eval/hotpotqa --collection hotpotqa --modes auto,graph \
        --variant base='{}' --variant noprf='{"graph_prf": 0}' \
        --variant novec='{"_patch": {"graphrag.search.graph.VECTOR_K": 0}}'

A variant's ``_patch`` sets module constants for its searches (settings that are no request option).

Variants run interleaved query by query, so a change in the machine's load affects them alike.
The CPU time the process and the local servers used per search is reported too (all variants and
modes together: run one variant and one mode to attribute it).
Writes bench/results/graph_leg_study_<label>.json. Run from the repository root.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine, percentiles, write_result  # noqa: E402
from graphrag.config import Settings  # noqa: E402
from graphrag.evaluation import document_ranking, read_beir, score  # noqa: E402
from graphrag.runtime import open_services  # noqa: E402


IN_GRAPH_LEG: contextvars.ContextVar[bool] = contextvars.ContextVar("in_graph_leg", default=False)


class StoreTrace:
    """Records the start and end of every store call (PostgreSQL fetches, Neo4j statements) that the
    graph leg makes (tasks it starts inherit the mark; the router's own calls are not counted)."""

    def __init__(self, rt: Any, router: Any) -> None:
        self.rt = rt
        self.router = router
        self.calls: list[tuple[str, float, float]] = []

    def __enter__(self) -> StoreTrace:
        pg, neo = self.rt.postgres, self.rt.neo4j
        self._saved = (pg.fetch_filtered, pg.fetch, neo.run, self.router._leg)
        ff, f, run, leg = self._saved

        def wrap(kind: str, fn: Any) -> Any:
            async def call(file: str, name: str, *args: Any, **kwargs: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    return await fn(file, name, *args, **kwargs)
                finally:
                    if IN_GRAPH_LEG.get():
                        self.calls.append((f"{kind}:{name}", t0, time.perf_counter()))
            return call

        async def marked_leg(name: str, *args: Any, **kwargs: Any) -> Any:
            token = IN_GRAPH_LEG.set(name == "graph")
            try:
                return await leg(name, *args, **kwargs)
            finally:
                IN_GRAPH_LEG.reset(token)

        pg.fetch_filtered, pg.fetch, neo.run = wrap("pg", ff), wrap("pg", f), wrap("neo4j", run)
        self.router._leg = marked_leg
        return self

    def __exit__(self, *exc: Any) -> None:
        pg, neo = self.rt.postgres, self.rt.neo4j
        pg.fetch_filtered, pg.fetch, neo.run, self.router._leg = self._saved
        del self.router._leg  # back to the class's method

    def chain(self) -> int:
        """The longest sequence of calls in which each starts after the previous one ended."""
        calls = sorted(self.calls, key=lambda c: c[1])
        best: list[int] = []
        for i, (_, start, _) in enumerate(calls):
            best.append(1 + max((best[j] for j in range(i) if calls[j][2] <= start), default=0))
        return max(best, default=0)


def _ticks(pid: int) -> int:
    """CPU clock ticks a process used (user + system, its waited-for children included)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return sum(int(x) for x in fields[11:15])


def server_cpu_s(home: Path) -> float:
    """CPU seconds used so far by the local Neo4j and PostgreSQL (the postmaster and its backends)."""
    try:
        state = json.loads((home / "services.json").read_text())
    except (OSError, ValueError):
        return 0.0
    pids = [int(state["neo4j"]["pid"]), int(state["postgres"]["pid"])]
    children = Path(f"/proc/{pids[1]}/task/{pids[1]}/children")
    if children.exists():
        pids += [int(p) for p in children.read_text().split()]
    return sum(_ticks(pid) for pid in pids) / os.sysconf("SC_CLK_TCK")


def _patch(values: dict[str, Any]) -> dict[str, Any]:
    """Set module constants ("graphrag.search.graph.VECTOR_K": 0) for one search; returns the old values."""
    import importlib

    saved = {}
    for dotted, value in values.items():
        module, name = dotted.rsplit(".", 1)
        target = importlib.import_module(module)
        saved[dotted] = getattr(target, name)
        setattr(target, name, value)
    return saved


async def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = Settings()
    docs, queries, qrels = read_beir(Path(args.folder), args.split)
    items = list(queries.items())[: args.limit_queries or None]
    judged = {qid: qrels[qid] for qid, _ in items}
    variants = dict(v.split("=", 1) for v in args.variant) if args.variant else {"base": "{}"}
    variants = {name: json.loads(options) for name, options in variants.items()}
    modes = args.modes.split(",")
    async with open_services(settings) as rt:
        router = await rt.router()
        router.query_cache_size = 0
        out: dict[str, Any] = {"machine": await machine(rt), "collection": args.collection,
                               "queries": len(items), "variants": variants, "results": {}}
        rankings: dict[tuple[str, str], dict[str, list[str]]] = {}
        took: dict[tuple[str, str], list[float]] = {}
        latency: dict[tuple[str, str], list[float]] = {}
        trips: dict[tuple[str, str], list[int]] = {}
        calls: dict[tuple[str, str], list[int]] = {}
        statuses: dict[tuple[str, str], dict[str, int]] = {}
        for text in [t for _, t in items[:3]]:  # warm-up: models, caches, the graph prior
            for mode in modes:
                await router.search(text, mode=mode, limit=10, collections=[args.collection])
        cpu_start = (time.process_time(), server_cpu_s(settings.home_dir))
        for n, (qid, text) in enumerate(items):
            for mode in modes:
                for name, options in variants.items():
                    key = (name, mode)
                    options = dict(options)
                    saved = _patch(options.pop("_patch", {}))
                    t0 = time.perf_counter()
                    try:
                        with StoreTrace(rt, router) as trace:
                            response = await router.search(text[:2000], mode=mode, limit=args.k,
                                                           collections=[args.collection], collapse=True, **options)
                    finally:
                        _patch(saved)
                    latency.setdefault(key, []).append((time.perf_counter() - t0) * 1000)
                    rankings.setdefault(key, {})[qid] = document_ranking(response.hits)
                    leg = response.legs["graph"].to_dict()
                    statuses.setdefault(key, {}).setdefault(leg["status"], 0)
                    statuses[key][leg["status"]] += 1
                    if leg["status"] == "ok":
                        took.setdefault(key, []).append(leg["took_ms"])
                    trips.setdefault(key, []).append(trace.chain())
                    calls.setdefault(key, []).append(len(trace.calls))
            if args.progress and n % 20 == 0:
                print(f"{n}/{len(items)}", file=sys.stderr, flush=True)
        searches = sum(len(v) for v in latency.values())
        own, servers = time.process_time() - cpu_start[0], server_cpu_s(settings.home_dir) - cpu_start[1]
        # CPU per search, every variant and mode together: on a shared machine a steadier measure of
        # cost than latency (it does not count waiting for the CPU). Meaningful with one variant and mode.
        out["cpu_ms_per_search"] = {"client": round(own * 1000 / searches, 2),
                                    "servers": round(servers * 1000 / searches, 2),
                                    "total": round((own + servers) * 1000 / searches, 2)}
        for (name, mode), ranking in rankings.items():
            key = (name, mode)
            out["results"][f"{name}/{mode}"] = {
                **{m: round(v, 4) for m, v in score(ranking, judged).items()},
                "graph_leg_ms": percentiles(took.get(key, [])),
                "search_ms": percentiles(latency.get(key, [])),
                "graph_leg_status": statuses.get(key, {}),
                "rankings": ranking,
                **({"store_calls_mean": round(sum(calls[key]) / len(calls[key]), 2),
                    "store_round_trips_in_sequence_max": max(trips[key]),
                    "store_round_trips_in_sequence_median": sorted(trips[key])[len(trips[key]) // 2]}
                   if key in trips else {}),
            }
        out["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("--collection", required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--modes", default="auto,graph")
    parser.add_argument("--variant", action="append", help="name=JSON search options")
    parser.add_argument("--limit-queries", type=int, default=0)
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--label", default="run")
    parser.add_argument("--progress", action="store_true")
    args = parser.parse_args()
    data = asyncio.run(run(args))
    path = write_result(f"graph_leg_study_{args.label}.json", data)
    for key, res in data["results"].items():
        print(key, json.dumps({k: v for k, v in res.items() if k not in ("graph_leg_ms", "search_ms", "rankings")}),
              "graph leg p50", res["graph_leg_ms"].get("p50"), "search p50", res["search_ms"].get("p50"))
    print(path)


if __name__ == "__main__":
    main()
