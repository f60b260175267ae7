"""Search benchmark: latency, throughput, stage split, index use and the naive side by side, on one collection.

For the collection given (``scifact``, ``scale_10k``, ``scale_100k``, ``scale_1m``), with a fixed set of
SciFact claims (the first ``--queries`` of ``queries.jsonl`` that have relevance judgements):

1. Python API: ``SearchRouter.search`` in-process, per mode, p50/p95/p99 (query embedding included:
   the query-embedding cache is off).
2. REST: a ``graphrag serve`` process (``bench/serve.py --no-query-cache``), ``POST /search`` with
   ``"explain": true``; per mode p50/p95/p99 at concurrency 1, then QPS at each ``--concurrency``
   (every query once), errors, the API process's peak RSS (VmHWM), and the split of the time per
   stage from the router's own ``timings`` and ``legs[*].took_ms``.
3. The naive hybrid (``bench/naive_hybrid.sql``, created here) on the first ``--naive-queries``
   claims, embedding included, next to our hybrid and auto on the same claims: latency ratios and
   recall@10. Recall@10 is the share of a claim's relevant SciFact documents among the *sources* of
   the top 10 chunks (a scale document maps to the SciFact document it derives from, metadata.src).
4. Plans: EXPLAIN (ANALYZE, BUFFERS) of the statements every PostgreSQL leg ran for one claim
   (captured from a real search, so they are the exact texts and settings), Neo4j PROFILE of the
   graph leg's statements, and whether each shows its index; also as text in plans_<collection>.txt
   (``--plans-only`` writes just that file).
5. The vector leg's recall against exact (sequential-scan) cosine top-10 on ``--exact-queries`` claims,
   and with ``--ef-sweep`` the same recall and the latency at several ``hnsw.ef_search`` values.

    python bench/search.py --collection scale_100k
    python bench/search.py --collection scifact --naive-queries 200 --label baseline
    python bench/search.py --collection scale_1m --modes vector,hybrid --concurrency 1,8
    python bench/search.py --collection scale_100k --ef-sweep 40,64,100,200 --skip-rest --skip-python

Writes bench/results/search_<collection>[_<label>].json. Run from the repository root.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402
import numpy as np  # noqa: E402

from bench.common import (REPO, RESULTS, bench_sql, cpu_seconds, machine, percentiles, read_qrels, read_queries,  # noqa: E402
                          store_pids, write_result)
from graphrag.config import Settings  # noqa: E402
from graphrag.runtime import open_services  # noqa: E402
from graphrag.search.linking import name_spans  # noqa: E402
from graphrag.search.router import SearchRouter  # noqa: E402
from graphrag.stores import queries as named  # noqa: E402
from graphrag.stores.repo.base import Sql  # noqa: E402
from graphrag.stores.repo.graph import Cypher  # noqa: E402

MODES = ("vector", "keyword", "hybrid", "graph", "auto")
# The index each statement should read (any of them; the vector leg: the dimension's shared index, or
# the collection's own, named chunks_hnsw_<dim>_<hash>).
LEG_INDEX = {"vector_leg": ("chunks_embedding_hnsw", "chunks_hnsw_"), "keyword_leg": ("chunk_postings_by_impact",),
             "chunk_rows": ("chunks_pkey",)}


# -- helpers ---------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def source_recall(results: list[str], doc_src: dict[str, str], relevant: frozenset[str], k: int = 10) -> float:
    """Share of the relevant SciFact ids among the sources of the top-k chunks (given as document ids)."""
    if not relevant:
        return 0.0
    found = {doc_src.get(d) for d in results[:k]}
    return len(found & relevant) / len(relevant)


def stage_split(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean ms per stage over REST responses (router timings + legs) and the share of client latency."""
    if not records:
        return {}
    n = len(records)
    client = sum(r["client_ms"] for r in records) / n
    router = sum(r["took_ms"] for r in records) / n
    out: dict[str, Any] = {"client_ms": round(client, 2), "router_ms": round(router, 2)}
    keys = sorted({k for r in records for k in r["timings"]})
    for key in keys:
        out[key] = round(sum(r["timings"].get(key, 0.0) for r in records) / n, 2)
    legs = sorted({leg for r in records for leg in r["legs"]})
    for leg in legs:
        out[f"leg_{leg}_ms"] = round(sum(r["legs"].get(leg, 0.0) for r in records) / n, 2)
    staged = sum(out.get(k, 0.0) for k in keys)
    out["legs_wall_ms"] = round(router - staged, 2)  # legs run concurrently: the router's time not in a stage
    out["http_and_serialisation_ms"] = round(client - router, 2)
    parts = {k: out[k] for k in keys} | {"legs_wall_ms": out["legs_wall_ms"],
                                          "http_and_serialisation_ms": out["http_and_serialisation_ms"]}
    out["share_of_client_latency"] = {k: round(v / client, 3) for k, v in parts.items()}
    return out


class Recorder:
    """Wraps the store layer's statement runners to capture the exact statements one search runs (for
    EXPLAIN): the compiled text, its values and its session settings."""

    def __init__(self, rt: Any) -> None:
        self.rt = rt
        self.pg: list[tuple[str, str, tuple[Any, ...], dict[str, str] | None]] = []
        self.neo: list[tuple[str, str, dict[str, Any]]] = []

    def __enter__(self) -> Recorder:
        self._saved = (Sql.fetch, Sql.fetch_where, Cypher.run, Cypher.read)
        fetch, fetch_where, run, read = self._saved
        rec = self

        async def recorded_fetch(sql: Sql, file: str, name: str, /, **params: Any) -> Any:
            st = named.statement(file, name)
            rec.pg.append((name, st.text, tuple(st.bind(params)), None))
            return await fetch(sql, file, name, **params)

        async def recorded_fetch_where(sql: Sql, file: str, name: str, /, *, where: Any, dim: Any = None,
                                       settings: Any = None, **params: Any) -> Any:
            st = named.variant(file, name, where.sql, dim)
            values = st.bind({**params, **where.params})
            rec.pg.append((name, st.text, tuple(values), dict(settings) if settings else None))
            return await fetch_where(sql, file, name, where=where, dim=dim, settings=settings, **params)

        async def recorded_run(cypher: Cypher, file: str, name: str, /, **params: Any) -> Any:
            rec.neo.append((file, name, params))
            return await run(cypher, file, name, **params)

        async def recorded_read(cypher: Cypher, file: str, name: str, /, **params: Any) -> Any:
            rec.neo.append((file, name, params))
            return await read(cypher, file, name, **params)

        Sql.fetch, Sql.fetch_where = recorded_fetch, recorded_fetch_where  # type: ignore[method-assign]
        Cypher.run, Cypher.read = recorded_run, recorded_read  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: Any) -> None:
        Sql.fetch, Sql.fetch_where, Cypher.run, Cypher.read = self._saved  # type: ignore[method-assign]


async def plans(rt: Any, router: SearchRouter, collection: str, query: str) -> dict[str, Any]:
    """EXPLAIN ANALYZE / PROFILE of every statement an auto search runs for ``query``."""
    with Recorder(rt) as rec:
        await router.search(query, mode="auto", limit=10, collections=[collection])
    out: dict[str, Any] = {"query": query, "postgres": {}, "neo4j": {}}
    for name, text, args, settings in rec.pg:
        if name in out["postgres"]:
            continue
        async with rt.postgres.pool.acquire() as conn, conn.transaction():
            for key, value in (settings or {}).items():
                await conn.execute(bench_sql("scale", "set_local"), key, value)
            rows = await conn.fetch("EXPLAIN (ANALYZE, BUFFERS) " + text, *args)
        plan = "\n".join(r[0] for r in rows)
        entry: dict[str, Any] = {"settings": settings or {}, "plan": plan}
        if name in LEG_INDEX:
            entry["index"] = " or ".join(LEG_INDEX[name])
            entry["uses_index"] = any(index in plan for index in LEG_INDEX[name])
        out["postgres"][name] = entry
    for file, name, params in rec.neo:
        if name in out["neo4j"]:
            continue
        result = await rt.neo4j.driver.execute_query("PROFILE " + named.cypher(file, name), parameters_=params,
                                                     database_=rt.neo4j.database)
        profile = result.summary.profile or {}
        operators: list[str] = []
        db_hits = 0

        def walk(node: dict[str, Any], depth: int = 0, operators: list[str] = operators) -> None:
            nonlocal db_hits
            args_ = node.get("args", {})
            detail = args_.get("Details", "")
            operators.append(f"{'  ' * depth}{node.get('operatorType', '')} rows={node.get('rows')} "
                             f"dbHits={node.get('dbHits')} {detail}"[:300])
            db_hits += int(node.get("dbHits") or 0)
            for child in node.get("children", []):
                walk(child, depth + 1)

        walk(profile)
        text = "\n".join(operators)
        index_ops = ("NodeIndexSeek", "NodeUniqueIndexSeek", "ProcedureCall", "NodeIndexScan", "DirectedRelationshipIndex")
        out["neo4j"][name] = {"operators": text, "db_hits": db_hits,
                              "uses_index": any(op in text for op in index_ops),
                              "all_nodes_or_label_scan": ("AllNodesScan" in text) or ("NodeByLabelScan" in text)}
    return out


async def exact_recall(rt: Any, router: SearchRouter, collection: str, claims: list[tuple[str, str]]) -> dict[str, Any]:
    """Overlap of the vector leg's top 10 with the exact cosine top 10 (sequential scan)."""
    overlaps = []
    model = router.embedder.model_name
    for _, text in claims:
        emb = await router.embed_query(text)
        got = await router.search(text, mode="vector", limit=10, collections=[collection])
        async with rt.postgres.pool.acquire() as conn, conn.transaction():
            await conn.execute("SET LOCAL enable_indexscan = off")
            await conn.execute("SET LOCAL enable_bitmapscan = off")
            rows = await conn.fetch(bench_sql("scale", "exact_neighbours"), emb, collection, model, 10)
        truth = {str(r["id"]) for r in rows}
        overlaps.append(len(truth & {r.chunk_id for r in got.hits}) / max(len(truth), 1))
    return {"queries": len(claims), "recall@10_vs_exact": round(float(np.mean(overlaps)), 4)}


async def ef_sweep(rt: Any, router: SearchRouter, collection: str, claims: list[tuple[str, str]],
                   values: list[int]) -> list[dict[str, Any]]:
    """Vector mode (Python API) at several hnsw.ef_search values: latency without the embedding, and
    recall@10 against the exact cosine top 10."""
    model = router.embedder.model_name
    truth: dict[str, set[str]] = {}
    embeddings = {}
    for qid, text in claims:
        embeddings[qid] = await router.embedder.aencode([text])
        async with rt.postgres.pool.acquire() as conn, conn.transaction():
            await conn.execute("SET LOCAL enable_indexscan = off")
            await conn.execute("SET LOCAL enable_bitmapscan = off")
            rows = await conn.fetch(bench_sql("scale", "exact_neighbours"), embeddings[qid][0], collection, model, 10)
        truth[qid] = {str(r["id"]) for r in rows}
    saved = router.query_cache_size
    router.query_cache_size = len(claims) + 1  # embeddings cached: this measures the search alone
    for qid, text in claims:
        router._cache[text] = embeddings[qid][0]
    out = []
    try:
        for ef in values:
            latencies, overlaps = [], []
            for qid, text in claims:
                t0 = time.perf_counter()
                res = await router.search(text, mode="vector", limit=10, collections=[collection], ef_search=ef)
                latencies.append((time.perf_counter() - t0) * 1000)
                overlaps.append(len(truth[qid] & {r.chunk_id for r in res.hits}) / max(len(truth[qid]), 1))
            out.append({"ef_search": ef, "latency_ms": percentiles(latencies),
                        "recall@10_vs_exact": round(float(np.mean(overlaps)), 4)})
            print(f"ef_search {ef:4}: {out[-1]['latency_ms']} recall vs exact {out[-1]['recall@10_vs_exact']}", flush=True)
    finally:
        router.query_cache_size = saved
        router._cache.clear()
    return out


# -- Python API ------------------------------------------------------------------------------------

async def python_api(router: SearchRouter, collection: str, claims: list[tuple[str, str]], mode: str,
                     limit: int) -> dict[str, Any]:
    latencies, embed = [], []
    results: dict[str, list[str]] = {}
    for qid, text in claims:
        t0 = time.perf_counter()
        response = await router.search(text, mode=mode, limit=limit, collections=[collection])
        latencies.append((time.perf_counter() - t0) * 1000)
        embed.append(response.timings.get("embed_ms", 0.0))
        results[qid] = [r.document_id for r in response.hits]
    return {"latency_ms": percentiles(latencies), "embed_ms": percentiles(embed),
            "latency_minus_embed_ms": percentiles([a - b for a, b in zip(latencies, embed, strict=True)]),
            "_per_query": latencies, "_results": results}


# -- REST ------------------------------------------------------------------------------------------

class Server:
    """``bench/serve.py`` in a child process; its peak RSS comes from /proc (VmHWM)."""

    def __init__(self, port: int, log_path: Path, extra_args: list[str] | None = None) -> None:
        self.port = port
        self.log_path = log_path
        self.extra_args = extra_args or []
        self.proc: subprocess.Popen[bytes] | None = None

    async def __aenter__(self) -> Server:
        log = self.log_path.open("wb")
        env = {**os.environ, "HF_HUB_OFFLINE": "1"}
        self.proc = subprocess.Popen([sys.executable, str(REPO / "bench" / "serve.py"), "--port", str(self.port),
                                      "--no-query-cache", *self.extra_args], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.time() + 300
        async with httpx.AsyncClient() as client:
            while time.time() < deadline:
                if self.proc.poll() is not None:
                    raise SystemExit(f"API server exited ({self.proc.returncode}); see {self.log_path}")
                try:
                    if (await client.get(f"{self.url}/ready", timeout=5)).status_code == 200:
                        return self
                except httpx.HTTPError:
                    pass
                await asyncio.sleep(1)
        raise SystemExit(f"API server not ready in 300 s; see {self.log_path}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def memory(self) -> dict[str, float]:
        assert self.proc is not None
        out = {}
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                out[{"VmHWM": "peak_rss_mb", "VmRSS": "rss_mb"}[key]] = round(int(value.split()[0]) / 1024, 1)
        return out

    async def __aexit__(self, *exc: Any) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def service_pids(server: Server) -> dict[str, int]:
    """The root process of the API server and of each local store (their children count with them)."""
    assert server.proc is not None
    return {"api": server.proc.pid, **store_pids()}


async def rest_run(url: str, collection: str, claims: list[tuple[str, str]], mode: str, concurrency: int,
                   limit: int, pids: dict[str, int] | None = None) -> dict[str, Any]:
    """Every claim once, ``concurrency`` requests in flight; latencies, QPS, errors, stage records, and
    (given the services' pids) the CPU milliseconds each service spent per request."""
    records: list[dict[str, Any]] = []
    errors: list[str] = []
    leg_problems = 0
    latencies: list[float] = []
    results: dict[str, list[str]] = {}
    queue = list(claims)
    position = 0
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=120) as client:
        async def worker() -> None:
            nonlocal position, leg_problems
            while position < len(queue):
                qid, text = queue[position]
                position += 1
                body = {"query": text, "mode": mode, "limit": limit, "collections": [collection], "explain": True}
                t0 = time.perf_counter()
                try:
                    resp = await client.post("/search", json=body)
                except httpx.HTTPError as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                elapsed = (time.perf_counter() - t0) * 1000
                if resp.status_code != 200:
                    errors.append(f"HTTP {resp.status_code}: {resp.text[:200]}")
                    continue
                data = resp.json()
                latencies.append(elapsed)
                results[qid] = [r["document_id"] for r in data["results"]]
                legs = {leg: v["took_ms"] for leg, v in data["legs"].items() if v["status"] != "skipped"}
                leg_problems += sum(1 for v in data["legs"].values() if v["status"] in ("timeout", "error"))
                records.append({"client_ms": elapsed, "took_ms": data["took_ms"], "timings": data.get("timings", {}),
                                "legs": legs})

        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        services0 = cpu_seconds(pids or {})
        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - t0
        services1 = cpu_seconds(pids or {})
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    client_cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    # CPU per request by service: what bounds QPS on a machine whose cores they share.
    cpu_ms = {name: round((services1[name] - services0[name]) * 1000 / max(len(latencies), 1), 2)
              for name in services1 if name in services0}
    cpu_ms["client"] = round(client_cpu * 1000 / max(len(latencies), 1), 2)
    return {"concurrency": concurrency, "requests": len(claims), "ok": len(latencies), "errors": len(errors),
            "error_samples": errors[:3], "leg_timeouts_or_errors": leg_problems,
            "qps": round(len(latencies) / wall, 2), "wall_s": round(wall, 2),
            "client_cpu_share_of_2_cores": round(client_cpu / wall / (os.cpu_count() or 1), 3),
            "latency_ms": percentiles(latencies), "cpu_ms_per_request": cpu_ms, "_records": records,
            "_results": results}


# -- naive -----------------------------------------------------------------------------------------

async def naive_run(rt: Any, router: SearchRouter, collection: str, claims: list[tuple[str, str]],
                    limit: int) -> dict[str, Any]:
    latencies, sql_ms = [], []
    results: dict[str, list[str]] = {}
    statement = bench_sql("naive_hybrid", "naive_hybrid")
    for qid, text in claims:
        t0 = time.perf_counter()
        emb = await router.embed_query(text)  # cache off: the same embedding cost as ours
        t1 = time.perf_counter()
        rows = await rt.postgres.pool.fetch(statement, text, emb, limit, collection, timeout=3600)  # minutes at 1M
        sql_ms.append((time.perf_counter() - t1) * 1000)
        latencies.append((time.perf_counter() - t0) * 1000)
        results[qid] = [str(r["document_id"]) for r in rows]
    return {"latency_ms": percentiles(latencies), "sql_ms": percentiles(sql_ms), "_per_query": latencies,
            "_results": results}


def write_plans(collection: str, found: dict[str, Any], chunks: int) -> None:
    """The plans as text, one file per collection (bench/results/plans_<collection>.txt)."""
    lines = [f"# Plans of one auto search on {collection} ({chunks:,} chunks)", f"# claim: {found['query']}", ""]
    for name, entry in found["postgres"].items():
        lines += [f"## PostgreSQL {name}" + (f" (uses {entry['index']}: {entry['uses_index']})" if "index" in entry else ""),
                  f"-- settings: {entry['settings']}", entry["plan"], ""]
    for name, entry in found["neo4j"].items():
        lines += [f"## Neo4j {name} (index: {entry['uses_index']}, db hits {entry['db_hits']})", entry["operators"], ""]
    (RESULTS / f"plans_{collection}.txt").write_text("\n".join(lines))


def strip(obj: Any) -> Any:
    """Drop the private ``_`` keys (per-query data) before writing the JSON."""
    if isinstance(obj, dict):
        return {k: strip(v) for k, v in obj.items() if not str(k).startswith("_")}
    if isinstance(obj, list):
        return [strip(v) for v in obj]
    return obj


# -- main ------------------------------------------------------------------------------------------

async def run(args: argparse.Namespace) -> dict[str, Any]:
    claims = read_queries(args.queries)
    warmup = read_queries(args.warmup, offset=args.queries)
    qrels = read_qrels()
    modes = [m for m in args.modes.split(",") if m]
    levels = [int(c) for c in args.concurrency.split(",") if c]
    settings = Settings()
    started = time.time()
    async with open_services(settings) as rt:
        router = await rt.router()
        router.query_cache_size = 0  # every search pays for its query embedding
        counts = await rt.postgres.collection_counts()
        if args.collection not in counts:
            raise SystemExit(f"no collection {args.collection!r}; generate it: python bench/generate.py --chunks N")
        table_rows = {r["collection"]: r["n"] for r in await rt.postgres.pool.fetch(bench_sql("scale", "table_rows"))}
        doc_src = {str(r["id"]): r["src"] for r in
                   await rt.postgres.pool.fetch(bench_sql("scale", "document_sources"), args.collection)}
        out: dict[str, Any] = {
            "collection": args.collection, "label": args.label, "chunks": counts[args.collection]["chunks"],
            "documents": counts[args.collection]["documents"], "table_rows": table_rows,
            "queries": len(claims), "limit": args.limit, "server_args": args.server_args, "machine": await machine(rt),
            "recall_definition": "share of a claim's relevant SciFact documents among the sources (metadata.src for "
                                 "scale documents) of the top-10 chunks, averaged over claims",
        }
        print(f"{args.collection}: {out['chunks']} chunks, {len(claims)} claims", flush=True)
        for _, text in warmup:  # load models, fill pools and caches of the stores
            for mode in modes:
                await router.search(text, mode=mode, limit=args.limit, collections=[args.collection])

        if not args.skip_plans:
            # A claim that names entities, so the graph leg runs every one of its statements.
            sample = next((t for _, t in claims if name_spans(t)), claims[0][1])
            out["plans"] = await plans(rt, router, args.collection, sample)
            print("plans:", {k: v.get("uses_index") for k, v in out["plans"]["postgres"].items()},
                  {k: v["uses_index"] for k, v in out["plans"]["neo4j"].items()}, flush=True)
            write_plans(args.collection, out["plans"], out["chunks"])
            if args.plans_only:
                return out
        if args.exact_queries:
            out["vector_vs_exact"] = await exact_recall(rt, router, args.collection, claims[: args.exact_queries])
            print("vector vs exact:", out["vector_vs_exact"], flush=True)
        if args.ef_sweep:
            out["ef_search_sweep"] = await ef_sweep(rt, router, args.collection, claims[: args.exact_queries or 50],
                                                    [int(v) for v in args.ef_sweep.split(",")])

        py: dict[str, Any] = {}
        if not args.skip_python:
            for mode in modes:
                py[mode] = await python_api(router, args.collection, claims, mode, args.limit)
                py[mode]["recall@10"] = round(float(np.mean([source_recall(py[mode]["_results"][q], doc_src, qrels[q])
                                                              for q, _ in claims])), 4)
                print(f"python {mode:8} {py[mode]['latency_ms']}  recall@10 {py[mode]['recall@10']}", flush=True)
            out["python_api"] = py

        if args.naive_queries:
            subset = claims[: args.naive_queries]
            await rt.postgres.pool.execute(bench_sql("naive_hybrid", "create_naive_hybrid"))
            naive = await naive_run(rt, router, args.collection, subset, args.limit)
            side: dict[str, Any] = {"queries": len(subset), "naive": {
                "latency_ms": naive["latency_ms"], "sql_ms": naive["sql_ms"],
                "recall@10": round(float(np.mean([source_recall(naive["_results"][q], doc_src, qrels[q])
                                                  for q, _ in subset])), 4)}}
            for mode in ("hybrid", "auto"):
                if mode not in py:
                    continue
                ours = py[mode]["_per_query"][: len(subset)]
                ours_p = percentiles(ours)
                recall = round(float(np.mean([source_recall(py[mode]["_results"][q], doc_src, qrels[q])
                                              for q, _ in subset])), 4)
                side[mode] = {"latency_ms": ours_p, "recall@10": recall,
                              "speedup_p50": round(naive["latency_ms"]["p50"] / ours_p["p50"], 1),
                              "speedup_mean": round(naive["latency_ms"]["mean"] / ours_p["mean"], 1),
                              "recall_ratio": round(recall / side["naive"]["recall@10"], 3)
                              if side["naive"]["recall@10"] else None}
            out["naive_side_by_side"] = side
            print("naive:", json.dumps(side), flush=True)

        rest: dict[str, Any] = {}
        if not args.skip_rest:
            port = args.port or free_port()
            log_path = Path(f"/tmp/bench_serve_{args.collection}_{uuid.uuid4().hex[:6]}.log")
            async with Server(port, log_path, args.server_args.split()) as server:
                out["api_rss_after_start_mb"] = server.memory()
                pids = service_pids(server)
                async with httpx.AsyncClient(base_url=server.url, timeout=120) as client:
                    for _, text in warmup:
                        for mode in modes:
                            await client.post("/search", json={"query": text, "mode": mode, "limit": args.limit,
                                                               "collections": [args.collection]})
                for mode in modes:
                    entry: dict[str, Any] = {"throughput": []}
                    for level in levels:
                        res = await rest_run(server.url, args.collection, claims, mode, level, args.limit, pids)
                        if level == 1:
                            entry["latency_ms"] = res["latency_ms"]
                            entry["stages"] = stage_split(res["_records"])
                            embeds = [r["timings"].get("embed_ms", 0.0) for r in res["_records"]]
                            entry["latency_minus_embed_ms"] = percentiles(
                                [r["client_ms"] - e for r, e in zip(res["_records"], embeds, strict=True)])
                            entry["recall@10"] = round(float(np.mean([source_recall(res["_results"].get(q, []), doc_src,
                                                                                     qrels[q]) for q, _ in claims])), 4)
                        entry["throughput"].append(strip(res) | {"latency_ms": res["latency_ms"]})
                        print(f"rest {mode:8} c={level:<3} qps {res['qps']:7.1f} p50 {res['latency_ms'].get('p50')} "
                              f"p95 {res['latency_ms'].get('p95')} errors {res['errors']} "
                              f"leg problems {res['leg_timeouts_or_errors']} cpu ms/request {res['cpu_ms_per_request']}",
                              flush=True)
                    rest[mode] = entry
                out["api_memory_mb"] = server.memory()
            out["rest"] = rest
    if args.plans_only:
        return out
    out["bench_seconds"] = round(time.time() - started, 1)
    out = strip(out)
    name = f"search_{args.collection}{'_' + args.label if args.label else ''}.json"
    path = write_result(name, out)
    print(f"wrote {path}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--queries", type=int, default=200, help="SciFact claims measured (default 200)")
    parser.add_argument("--warmup", type=int, default=10, help="other claims run first, not measured")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--concurrency", default="1,8,32", help="REST concurrency levels (1 = the latency run)")
    parser.add_argument("--limit", type=int, default=10)
    parser.add_argument("--naive-queries", type=int, default=50, help="claims for the naive side by side (0: skip)")
    parser.add_argument("--exact-queries", type=int, default=50, help="claims for vector-vs-exact recall (0: skip)")
    parser.add_argument("--ef-sweep", default="", help="e.g. 40,64,100,200: vector latency and recall vs exact per "
                                                       "hnsw.ef_search (on the --exact-queries claims)")
    parser.add_argument("--label", default="", help="suffix of the result file (e.g. baseline)")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--server-args", default="", help="extra bench/serve.py flags, e.g. --no-embed-batching")
    parser.add_argument("--skip-rest", action="store_true")
    parser.add_argument("--skip-python", action="store_true")
    parser.add_argument("--skip-plans", action="store_true")
    parser.add_argument("--plans-only", action="store_true", help="only write bench/results/plans_<collection>.txt")
    args = parser.parse_args()
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
