"""Plots of the search benchmark results (needs matplotlib: ``pip install -e '.[bench]'``).

    python bench/plots.py                       # bench/results/search_scale_*.json -> PNGs
    python bench/plots.py --collections scale_10k,scale_100k,scale_1m --label ""

Writes bench/results/latency_vs_size.png (REST p50/p95 per mode against corpus size, query embedding
included) and bench/results/qps_vs_concurrency.png (REST QPS per mode at each concurrency, one panel
per corpus size).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import RESULTS  # noqa: E402

MODES = ("vector", "keyword", "hybrid", "graph", "auto")


def load(collections: list[str], label: str) -> list[dict]:
    out = []
    for name in collections:
        path = RESULTS / f"search_{name}{'_' + label if label else ''}.json"
        if path.exists():
            out.append(json.loads(path.read_text()))
        else:
            print(f"skipping {path.name}: not found")
    return sorted(out, key=lambda r: r["chunks"])


def main() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collections", default="scale_10k,scale_100k,scale_1m")
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    runs = [r for r in load(args.collections.split(","), args.label) if "rest" in r]
    if not runs:
        raise SystemExit("no search results with a REST section to plot")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, stat in zip(axes, ("p50", "p95"), strict=True):
        for mode in MODES:
            points = [(r["chunks"], r["rest"][mode]["latency_ms"][stat]) for r in runs if mode in r["rest"]]
            if points:
                ax.plot(*zip(*points, strict=True), marker="o", label=mode)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("chunks in the collection")
        ax.set_title(f"REST latency {stat} (query embedding included)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ms")
    axes[1].legend()
    fig.tight_layout()
    path = RESULTS / "latency_vs_size.png"
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")

    fig, axes = plt.subplots(1, len(runs), figsize=(4.2 * len(runs), 4), sharey=True, squeeze=False)
    for ax, run in zip(axes[0], runs, strict=True):
        for mode in MODES:
            if mode not in run["rest"]:
                continue
            points = [(t["concurrency"], t["qps"]) for t in run["rest"][mode]["throughput"]]
            ax.plot(*zip(*points, strict=True), marker="o", label=mode)
        ax.set_xscale("log", base=2)
        ax.set_xticks([t["concurrency"] for t in run["rest"]["auto"]["throughput"]] if "auto" in run["rest"] else [1])
        ax.get_xaxis().set_major_formatter(matplotlib.ticker.ScalarFormatter())
        ax.set_xlabel("concurrent requests")
        ax.set_title(f"{run['collection']} ({run['chunks']:,} chunks)")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("queries per second (REST)")
    axes[0][-1].legend()
    fig.tight_layout()
    path = RESULTS / "qps_vs_concurrency.png"
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
