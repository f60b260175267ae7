"""Back-to-back A/B of the graph leg: this checkout against another (the old design), same collection.

Runs ``bench/graph_leg_study.py`` alternately from each code tree (``--old`` is a plain copy of the
other commit, e.g. ``git archive <commit> | tar -x -C DIR``), one mode at a time, ``--rounds`` times
each, and reports per side and mode the median over rounds of: the search's p50/p95, the graph leg's
p50/p95 (from the search's start, as ``legs.graph.took_ms``), the CPU time per search (the process
and the local servers: what bounds throughput on a shared machine), the graph leg's store calls and
round trips in sequence, and the quality figures (identical across rounds when nothing changes).

    python bench/graph_leg_ab.py ../shared/eval/hotpotqa --collection hotpotqa --old /tmp/old --new /tmp/new

Writes bench/results/graph_leg_ab_<label>.json. Run from the repository root.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import REPO, write_result  # noqa: E402

STUDY = Path("bench") / "graph_leg_study.py"


def run_side(tree: Path, args: argparse.Namespace, mode: str, label: str) -> dict[str, Any]:
    """One study run of one mode with the package of ``tree``."""
    env = {**os.environ, "PYTHONPATH": str(tree), "GRAPHRAG_LEG_TIMEOUT_S": str(args.leg_timeout)}
    options = json.dumps({"leg_timeout_s": args.leg_timeout})
    if tree != REPO:  # the same study script on both sides; it imports the package of its own tree
        shutil.copyfile(REPO / STUDY, tree / STUDY)
    command = [sys.executable, str(tree / STUDY), args.folder, "--collection", args.collection,
               "--modes", mode, "--variant", f"{label}={options}", "--label", label]
    if args.limit_queries:
        command += ["--limit-queries", str(args.limit_queries)]
    subprocess.run(command, check=True, env=env, cwd=tree)
    return json.loads((tree / "bench" / "results" / f"graph_leg_study_{label}.json").read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder")
    parser.add_argument("--collection", required=True)
    parser.add_argument("--old", required=True, type=Path, help="a copy of the other commit's tree")
    parser.add_argument("--new", type=Path, default=REPO,
                        help="a copy of this commit's tree (default: this checkout; a copy keeps edits made "
                             "while the A/B runs out of it)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--modes", default="auto,graph")
    parser.add_argument("--limit-queries", type=int, default=0)
    parser.add_argument("--leg-timeout", type=float, default=60.0)
    parser.add_argument("--label", default="run")
    args = parser.parse_args()
    for tree in (args.old, args.new):
        (tree / "bench" / "results").mkdir(parents=True, exist_ok=True)
    modes = args.modes.split(",")
    runs: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for n in range(args.rounds):
        for mode in modes:
            for side, tree in (("old", args.old.resolve()), ("new", args.new.resolve())):
                result = run_side(tree, args, mode, f"ab_{args.label}_{side}_{mode}_{n}")
                runs.setdefault((side, mode), []).append(result)
                print(side, mode, n, "done", file=sys.stderr, flush=True)
    summary: dict[str, Any] = {}
    for (side, mode), results in runs.items():
        per_round = [{**next(iter(r["results"].values())), "cpu": r["cpu_ms_per_search"]} for r in results]

        def median(path: tuple[str, ...], rows: list[dict[str, Any]] = per_round) -> float:
            values = []
            for row in rows:
                value: Any = row
                for key in path:
                    value = value[key]
                values.append(float(value))
            return round(statistics.median(values), 2)

        summary[f"{side}/{mode}"] = {
            "search_p50_ms": median(("search_ms", "p50")), "search_p95_ms": median(("search_ms", "p95")),
            "graph_leg_p50_ms": median(("graph_leg_ms", "p50")), "graph_leg_p95_ms": median(("graph_leg_ms", "p95")),
            "cpu_ms_per_search": median(("cpu", "total")), "cpu_ms_per_search_servers": median(("cpu", "servers")),
            "store_calls_mean": median(("store_calls_mean",)),
            "store_round_trips_in_sequence_median": median(("store_round_trips_in_sequence_median",)),
            "store_round_trips_in_sequence_max": max(r["store_round_trips_in_sequence_max"] for r in per_round),
            **{m: per_round[-1][m] for m in ("ndcg@10", "recall@2", "recall@5", "recall@10")},
            "rounds": [{"search_p50_ms": r["search_ms"]["p50"], "graph_leg_p50_ms": r["graph_leg_ms"]["p50"],
                        "cpu_ms_per_search": r["cpu"]["total"]} for r in per_round],
        }
    data = {"collection": args.collection, "rounds": args.rounds, "old_tree": str(args.old), "new_tree": str(args.new),
            "machine": next(iter(runs.values()))[0]["machine"], "summary": summary,
            "load_average_at_end": [r.get("load_average_at_end") for side in runs.values() for r in side]}
    path = write_result(f"graph_leg_ab_{args.label}.json", data)
    for key, row in summary.items():
        print(key, json.dumps({k: v for k, v in row.items() if k != "rounds"}))
    print(path)


if __name__ == "__main__":
    main()
