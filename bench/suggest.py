"""Suggestion (search-as-you-type) latency: ``graphrag.search.suggest`` in-process and ``GET /suggest``
over HTTP, by prefix length, on one collection; optionally on a stress table of many more terms.

Prefixes are cut from the collection's own terms (a seeded sample), 1, 2, 3, 5 and 8 characters
long, so every length is measured on prefixes that occur. Each prefix is asked once after a warm-up
pass over all of them. The plan of the suggestion statement for the busiest 1-character prefix is
kept (EXPLAIN ANALYZE), to show it stays an index-only range scan.

``--rebuild`` first fills the collection's terms from its titles and its graph (needed for
collections made by bench/generate.py, whose bulk load bypasses the ingestion writer).
``--stress N`` also measures a collection of N terms written straight into ``suggest_terms``: the
most frequent words and two- and three-word phrases of the SciFact corpus, with their document
counts (removed afterwards).

    python bench/suggest.py --collection scale_100k --rebuild
    python bench/suggest.py --collection scifact --rest --stress 1000000

Writes bench/results/suggest_<collection>.json. Run from the repository root.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx  # noqa: E402

from bench.common import SCIFACT, machine, percentiles, write_result  # noqa: E402
from graphrag.config import Settings  # noqa: E402
from graphrag.ingest import terms  # noqa: E402
from graphrag.runtime import open_services  # noqa: E402
from graphrag.search import suggest as sg  # noqa: E402
from graphrag.stores import queries  # noqa: E402

LENGTHS = (1, 2, 3, 5, 8)
STRESS = "suggest_stress"
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]{2,}")
_STOP = frozenset("the and for with that this from are was were which these those their has have had not but "
                  "also can may than such into its our all been between both more most other only over per "
                  "each after before during while who whom what when where how".split())


async def prefixes(pg: Any, collection: str, sample: int, seed: int) -> dict[int, list[str]]:
    rows = await pg.pool.fetch("SELECT norm FROM suggest_terms WHERE collection = $1 AND documents > 0", collection)
    norms = sorted(r["norm"] for r in rows)
    rng = random.Random(seed)
    picked = rng.sample(norms, min(sample, len(norms)))
    return {n: sorted({t[:n] for t in picked if len(t) >= n and t[:n].strip()}) for n in LENGTHS}


async def measure(pg: Any, collection: str, by_length: dict[int, list[str]], limit: int) -> dict[str, Any]:
    for group in by_length.values():  # warm-up: the index pages in the buffer cache, statements prepared
        for p in group:
            await sg.suggest(pg, p, collections=[collection], limit=limit)
    out: dict[str, Any] = {}
    every: list[float] = []
    for n, group in by_length.items():
        times = []
        for p in group:
            t = time.perf_counter()
            await sg.suggest(pg, p, collections=[collection], limit=limit)
            times.append((time.perf_counter() - t) * 1000)
        every += times
        out[f"prefix_{n}"] = percentiles(times)
    out["all"] = percentiles(every)
    return out


async def floor_and_server(pg: Any, collection: str, by_length: dict[int, list[str]], limit: int) -> dict[str, Any]:
    """What the machine allows: a ``SELECT 1`` round trip through the same pool as often, and the
    statement's own execution time in the server (EXPLAIN ANALYZE) for every prefix."""
    every = [p for group in by_length.values() for p in group]
    floor = []
    for _ in every:
        t = time.perf_counter()
        await pg.pool.fetchval("SELECT 1")
        floor.append((time.perf_counter() - t) * 1000)
    server = []
    for p in every:
        lines = await plan(pg, collection, sg.fold(p), limit, analyze_only=True)
        found = next((ln for ln in lines if ln.startswith("Execution Time:")), "")
        server.append(float(re.findall(r"[\d.]+", found)[0]) if found else float("nan"))
    return {"select_1_roundtrip_ms": percentiles(floor), "server_execution_ms": percentiles(server)}


async def plan(pg: Any, collection: str, prefix: str, limit: int, analyze_only: bool = False) -> list[str]:
    low, high = sg.prefix_range(prefix)
    text = ("EXPLAIN (ANALYZE) " if analyze_only else "EXPLAIN (ANALYZE, BUFFERS) ") + queries.sql("suggest", "complete")
    rows = await pg.pool.fetch(text, [collection], low, high, limit * sg.CANDIDATES_PER_RESULT, sg.RANGE_CAP,
                               sg.WALK_TERMS)
    return [r[0] for r in rows]


async def table_info(pg: Any, collection: str) -> dict[str, Any]:
    kinds = await pg.q.terms.counts(collection)
    sizes = await pg.pool.fetch("SELECT relname, pg_total_relation_size(oid) AS bytes FROM pg_class "
                                "WHERE relname = ANY($1::text[])",
                                ["suggest_terms", "suggest_terms_key", "suggest_terms_prefix", "suggest_terms_popular",
                                 "document_terms", "document_terms_pkey"])
    chunks = await pg.pool.fetchval("SELECT count(*) FROM chunks WHERE collection = $1", collection)
    return {"chunks": chunks, "terms": kinds,
            "table_bytes_all_collections": {r["relname"]: r["bytes"] for r in sizes}}


def scifact_terms(count: int) -> list[tuple[str, str, str, int, int]]:
    """``(norm, kind, display, documents, mentions)`` of the ``count`` most frequent SciFact words and
    two- and three-word phrases."""
    df: Counter[str] = Counter()
    tf: Counter[str] = Counter()
    with (SCIFACT / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            for text in (record.get("title", ""), record.get("text", "")):
                seen: set[str] = set()
                for sentence in re.split(r"[.;:!?()\[\]]", text):
                    words = [w.lower() for w in _WORD.findall(sentence)]
                    for n in (1, 2, 3):
                        for i in range(len(words) - n + 1):
                            gram = words[i:i + n]
                            if gram[0] in _STOP or gram[-1] in _STOP:
                                continue
                            term = " ".join(gram)
                            tf[term] += 1
                            seen.add(term)
                df.update(seen)
    top = [t for t, _ in df.most_common(count) if len(t) <= terms.MAX_TERM_CHARS]
    return [(t, "entity" if " " not in t else "phrase", t, df[t], tf[t]) for t in top]


async def stress(pg: Any, count: int, sample: int, seed: int, limit: int) -> dict[str, Any]:
    rows = await asyncio.to_thread(scifact_terms, count)
    async with pg.pool.acquire() as conn:
        await conn.execute("DELETE FROM suggest_terms WHERE collection = $1", STRESS)
        await conn.copy_records_to_table("suggest_terms", records=[(STRESS, *r) for r in rows],
                                         columns=["collection", "norm", "kind", "display", "documents", "mentions"])
        await conn.execute("VACUUM ANALYZE suggest_terms")
    try:
        by_length = await prefixes(pg, STRESS, sample, seed)
        return {"terms": len(rows), "latency_ms": await measure(pg, STRESS, by_length, limit),
                **await floor_and_server(pg, STRESS, by_length, limit),
                "plan_prefix_1": await plan(pg, STRESS, Counter(r[0][0] for r in rows).most_common(1)[0][0], limit)}
    finally:
        await pg.pool.execute("DELETE FROM suggest_terms WHERE collection = $1", STRESS)


def rest(settings: Settings, collection: str, by_length: dict[int, list[str]], limit: int) -> dict[str, Any]:
    """``GET /suggest`` over real HTTP to the API served by uvicorn in a thread (its own stores and loop;
    the client shares the process, as in the tests)."""
    import socket

    import uvicorn

    from graphrag.api import create_app

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(settings, start_local=False), host="127.0.0.1", port=port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the API did not start")
        time.sleep(0.2)
    out: dict[str, Any] = {}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
            for group in by_length.values():
                for p in group:
                    client.get("/suggest", params={"q": p, "collections": collection, "limit": limit})
            every: list[float] = []
            inside: list[float] = []
            for n, group in by_length.items():
                times = []
                for p in group:
                    t = time.perf_counter()
                    r = client.get("/suggest", params={"q": p, "collections": collection, "limit": limit})
                    times.append((time.perf_counter() - t) * 1000)
                    r.raise_for_status()
                    inside.append(r.json()["took_ms"])
                every += times
                out[f"prefix_{n}"] = percentiles(times)
            out["all"] = percentiles(every)
            # The handler's own time (took_ms), and GET /health as the floor of the HTTP stack here.
            out["took_ms"] = percentiles(inside)
            health = []
            for _ in every:
                t = time.perf_counter()
                client.get("/health").raise_for_status()
                health.append((time.perf_counter() - t) * 1000)
            out["health_floor_ms"] = percentiles(health)
    finally:
        server.should_exit = True
        thread.join(30)
    return out


async def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = Settings()
    async with open_services(settings) as rt:
        result: dict[str, Any] = {"collection": args.collection, "limit": args.limit, "machine": await machine(rt)}
        pg = rt.postgres
        await pg.require_collections([args.collection])
        if args.rebuild:
            t = time.perf_counter()
            result["rebuild"] = {"terms": await terms.rebuild(pg, rt.neo4j, args.collection),
                                 "seconds": round(time.perf_counter() - t, 2)}
            await pg.pool.execute("VACUUM ANALYZE suggest_terms")
        result["table"] = await table_info(pg, args.collection)
        by_length = await prefixes(pg, args.collection, args.sample, args.seed)
        result["prefixes"] = {f"prefix_{n}": len(v) for n, v in by_length.items()}
        result["examples"] = {p: [s["text"] for s in (await sg.suggest(pg, p, collections=[args.collection],
                                                                       limit=5))["suggestions"]]
                              for p in (by_length[2][:3] + by_length[5][:2])}
        result["python_api_ms"] = await measure(pg, args.collection, by_length, args.limit)
        result.update(await floor_and_server(pg, args.collection, by_length, args.limit))
        busiest = await pg.pool.fetchval("SELECT left(norm, 1) FROM suggest_terms WHERE collection = $1 "
                                         "GROUP BY 1 ORDER BY count(*) DESC LIMIT 1", args.collection)
        result["plan_prefix_1"] = await plan(pg, args.collection, busiest or "a", args.limit)
        if args.stress:
            result["stress"] = await stress(pg, args.stress, args.sample, args.seed, args.limit)
    if args.rest:
        result["rest_ms"] = await asyncio.to_thread(rest, settings, args.collection, by_length, args.limit)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--rebuild", action="store_true", help="fill the terms from titles and the graph first")
    parser.add_argument("--sample", type=int, default=200, help="terms to cut prefixes from (default 200)")
    parser.add_argument("--limit", type=int, default=10, help="suggestions per request (default 10)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rest", action="store_true", help="also GET /suggest over HTTP (loads the API's models)")
    parser.add_argument("--stress", type=int, default=0, metavar="N", help="also a table of N SciFact terms")
    parser.add_argument("--label", help="suffix of the result file")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    name = f"suggest_{args.collection}" + (f"_{args.label}" if args.label else "") + ".json"
    path = write_result(name, result)
    summary = {k: result[k] for k in ("table", "python_api_ms", "select_1_roundtrip_ms", "server_execution_ms")
               if k in result}
    if "rest_ms" in result:
        summary["rest_ms"] = {k: result["rest_ms"][k] for k in ("all", "took_ms", "health_floor_ms")}
    if "stress" in result:
        summary["stress"] = {"terms": result["stress"]["terms"], "all": result["stress"]["latency_ms"]["all"],
                             "server_execution_ms": result["stress"]["server_execution_ms"]}
    print(json.dumps(summary, indent=2))
    print(f"written to {path}")


if __name__ == "__main__":
    main()
