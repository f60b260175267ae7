"""Markdown tables from bench/results/*.json (for the README's performance section).

    python bench/report.py > /tmp/perf_tables.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import RESULTS  # noqa: E402

MODES = ("vector", "keyword", "hybrid", "graph", "auto")
SIZES = ("scale_10k", "scale_100k", "scale_1m")


def load(name: str) -> dict | None:
    path = RESULTS / name
    return json.loads(path.read_text()) if path.exists() else None


def mb(n: float) -> str:
    return f"{n / 2**20:,.0f} MB" if n < 2**30 else f"{n / 2**30:,.2f} GB"


def fmt(x: float | None, digits: int = 1) -> str:
    return "–" if x is None else f"{x:,.{digits}f}"


def generation() -> None:
    print("| corpus | docs | chunks | mentions | PG COPY s | PG stats s | GIN build s | HNSW build s (rows) | Neo4j load s "
          "| PG size + | Neo4j store + |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for size in SIZES:
        g = load(f"generate_{size}.json")
        if not g or "pg_copy_s" not in g.get("times_s", {}):
            continue  # scale_1m's record is assembled from its logs (see its "assembled_from")
        t = g["times_s"]
        print(f"| {size} | {g['documents']:,} | {g['chunks']:,} | {g['mentions']:,} | {t['pg_copy_s']} | {t['pg_stats_s']} "
              f"| {t.get('pg_gin_build_s', '–')} | {t.get('pg_hnsw_build_s', '–')} ({g['postgres']['index_build_rows'] or 0:,}) "
              f"| {g['neo4j']['load_s']} | {mb(g['size_delta_bytes']['postgres_database'])} "
              f"| {mb(g['size_delta_bytes']['neo4j_store'])} |")


def latency(kind: str, label: str = "") -> None:
    print("| mode | " + " | ".join(f"{s} p50 / p95 / p99" for s in SIZES) + " |")
    print("| --- |" + " --- |" * len(SIZES))
    runs = {s: load(f"search_{s}{'_' + label if label else ''}.json") for s in SIZES}
    for mode in MODES:
        cells = []
        for s in SIZES:
            r = runs[s]
            sec = (r or {}).get(kind, {}).get(mode)
            if not sec:
                cells.append("–")
                continue
            lat = sec["latency_ms"]
            cells.append(f"{fmt(lat['p50'])} / {fmt(lat['p95'])} / {fmt(lat['p99'])}")
        print(f"| {mode} | " + " | ".join(cells) + " |")


def before_after(size: str) -> None:
    before, after = load(f"search_{size}_baseline.json"), load(f"search_{size}.json")
    if not (before and after):
        return
    print(f"| {size} mode | REST p50 before | REST p50 after | × | REST p95 before | REST p95 after | QPS c=8 before | QPS c=8 after |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for mode in MODES:
        b, a = before["rest"][mode], after["rest"][mode]
        q = lambda r: next((t["qps"] for t in r["throughput"] if t["concurrency"] == 8), None)  # noqa: E731
        print(f"| {mode} | {fmt(b['latency_ms']['p50'])} | {fmt(a['latency_ms']['p50'])} | "
              f"{b['latency_ms']['p50'] / a['latency_ms']['p50']:.1f} | {fmt(b['latency_ms']['p95'])} | "
              f"{fmt(a['latency_ms']['p95'])} | {fmt(q(b))} | {fmt(q(a))} |")


def ab(size: str, before_label: str = "ab_before", after_label: str = "ab_after") -> None:
    """Same-machine A/B of one change (the modes both runs measured), REST."""
    before, after = load(f"search_{size}_{before_label}.json"), load(f"search_{size}_{after_label}.json")
    if not (before and after):
        return
    b_rev, a_rev = before["machine"]["versions"]["graphrag_commit"], after["machine"]["versions"]["graphrag_commit"]
    print(f"| {size} mode | p50 {b_rev} | p50 {a_rev} | p95 {b_rev} | p95 {a_rev} | QPS c=8 {b_rev} | QPS c=8 {a_rev} |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    q = lambda r: next((t["qps"] for t in r["throughput"] if t["concurrency"] == 8), None)  # noqa: E731
    for mode in MODES:
        if mode in before["rest"] and mode in after["rest"]:
            b, a = before["rest"][mode], after["rest"][mode]
            print(f"| {mode} | {fmt(b['latency_ms']['p50'])} | {fmt(a['latency_ms']['p50'])} | {fmt(b['latency_ms']['p95'])} "
                  f"| {fmt(a['latency_ms']['p95'])} | {fmt(q(b))} | {fmt(q(a))} |")


def throughput(size: str, label: str = "") -> None:
    r = load(f"search_{size}{'_' + label if label else ''}.json")
    if not r or "rest" not in r:
        return
    levels = [t["concurrency"] for t in next(iter(r["rest"].values()))["throughput"]]
    print(f"| {size} mode | " + " | ".join(f"QPS c={c} (errors, leg timeouts)" for c in levels) + " |")
    print("| --- |" + " --- |" * len(levels))
    for mode, sec in r["rest"].items():
        cells = [f"{t['qps']:.1f} ({t['errors']}, {t['leg_timeouts_or_errors']})" for t in sec["throughput"]]
        print(f"| {mode} | " + " | ".join(cells) + " |")
    print(f"\nAPI process peak RSS: {r['api_memory_mb']['peak_rss_mb']:,.0f} MB")


def stages(size: str) -> None:
    r = load(f"search_{size}.json")
    if not r or "rest" not in r:
        return
    keys = ["embed_ms", "legs_wall_ms", "rows_ms", "fusion_ms", "entities_ms", "http_and_serialisation_ms"]
    print(f"| {size} mode | client ms | " + " | ".join(k.replace("_ms", "") for k in keys) + " | legs (own ms) |")
    print("| --- | --- |" + " --- |" * len(keys) + " --- |")
    for mode, sec in r["rest"].items():
        st = sec["stages"]
        share = st["share_of_client_latency"]
        cells = [f"{st.get(k, 0):.1f} ({100 * share.get(k, 0):.0f}%)" for k in keys]
        legs = ", ".join(f"{k[4:-3]} {v:.1f}" for k, v in st.items() if k.startswith("leg_"))
        print(f"| {mode} | {st['client_ms']:.1f} | " + " | ".join(cells) + f" | {legs} |")


def naive() -> None:
    print("| corpus | claims | naive p50 ms | our hybrid p50 ms | hybrid speed-up | our auto p50 ms | auto speed-up "
          "| naive R@10 | hybrid R@10 | auto R@10 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for size in ("scifact", *SIZES):
        r = load(f"search_{size}.json")
        if not r or "naive_side_by_side" not in r:
            continue
        n = r["naive_side_by_side"]
        h, a = n.get("hybrid", {}), n.get("auto", {})
        print(f"| {size} ({r['chunks']:,} chunks) | {n['queries']} | {fmt(n['naive']['latency_ms']['p50'])} "
              f"| {fmt(h.get('latency_ms', {}).get('p50'))} | {fmt(h.get('speedup_p50'))}× "
              f"| {fmt(a.get('latency_ms', {}).get('p50'))} | {fmt(a.get('speedup_p50'))}× "
              f"| {n['naive']['recall@10']:.3f} | {h.get('recall@10', 0):.3f} | {a.get('recall@10', 0):.3f} |")


# Reference figures from ../shared/eval/README.md, and the targets, per dataset and mode.
EVAL_NOTES = {
    "scifact": {"keyword": "BM25 0.695; target >= 0.675", "vector": "MiniLM 0.660", "hybrid": "RRF 0.720",
                "auto": "target >= 0.73"},
    "hotpotqa": {"keyword": "BM25 0.578 / 0.785", "vector": "MiniLM 0.610 / 0.795", "hybrid": "RRF 0.620 / 0.813",
                 "auto": "target >= 0.66 / 0.86, and hybrid + 0.03 R@5"},
}


def eval_tables() -> None:
    """The README's retrieval-quality tables, from bench/results/eval_<dataset>.json."""
    for dataset, ref in (("scifact", "nDCG@10"), ("hotpotqa", "R@2 / R@5")):
        r = load(f"eval_{dataset}.json")
        if not r:
            continue
        print(f"\n{dataset} ({r['documents']:,} documents, {r['queries']} queries)\n")
        print(f"| mode | nDCG@10 | R@2 | R@5 | R@10 | MRR@10 | latency p50 / p95 ms | reference / target ({ref}) |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for mode, m in r["modes"].items():
            print(f"| {mode} | {m['ndcg@10']:.3f} | {m['recall@2']:.3f} | {m['recall@5']:.3f} | {m['recall@10']:.3f} "
                  f"| {m['mrr@10']:.3f} | {m['latency_ms']['p50']:.0f} / {m['latency_ms']['p95']:.0f} "
                  f"| {EVAL_NOTES[dataset].get(mode, '')} |")
        rrf = load(f"eval_{dataset}_rrf.json")
        if rrf:
            print(f"\n{dataset}: fusion convex (default) against rrf (`graphrag eval ... --fusion rrf`)\n")
            print("| mode | fusion | nDCG@10 | R@2 | R@5 | R@10 |")
            print("| --- | --- | --- | --- | --- | --- |")
            for mode in rrf["modes"]:
                for fusion, run in (("convex", r), ("rrf", rrf)):
                    m = run["modes"].get(mode)
                    if m:
                        print(f"| {mode} | {fusion} | {m['ndcg@10']:.3f} | {m['recall@2']:.3f} | {m['recall@5']:.3f} "
                              f"| {m['recall@10']:.3f} |")


def main() -> None:
    print("\n### Retrieval quality")
    eval_tables()
    for title, fn in (("Bulk load", generation), ("REST latency (ms)", lambda: latency("rest")),
                      ("Python API latency (ms)", lambda: latency("python_api")), ("Naive side by side", naive)):
        print(f"\n### {title}\n")
        fn()
    for size in ("scifact", *SIZES):
        print(f"\n### {size}\n")
        before_after(size)
        print()
        ab(size)
        print()
        ab(size, "ab2_before", "ab2_after")
        print()
        throughput(size)
        print()
        stages(size)


if __name__ == "__main__":
    main()
