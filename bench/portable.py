"""Export and import of a collection at scale: archive size, time, memory.

    python bench/generate.py --chunks 10000 --source SOURCE   # a 10k-chunk collection (scale_10k), no model runs
    python bench/portable.py --collection scale_10k           # export it, import it as scale_10k_imported

Exports the collection twice (gzip, then uncompressed) into a temporary folder, imports the gzip'ed
archive into a fresh collection, then imports it again (the idempotent path: every document is
replaced), and checks that the copy holds the same counts in both stores as the original. The
embedding model is loaded before the import is timed (a server has it loaded; the CLI loads it once).
Peak RSS is read after the exports (no model loaded yet) and at the end.

Writes bench/results/portable_<collection>.json. Run from the repository root (the local services
under ./.graphrag, or GRAPHRAG_HOME, are started on demand).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import machine, write_result  # noqa: E402
from bench.generate import Neo4jRunner, drop_collection  # noqa: E402
from graphrag.config import Settings  # noqa: E402
from graphrag.portable import export_to_file, import_archive  # noqa: E402
from graphrag.runtime import open_services  # noqa: E402
from graphrag.stores.neo4j import GraphWrites  # noqa: E402


def peak_rss_mb() -> float:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


async def counts(rt: Any, collection: str) -> dict[str, int]:
    pg = await rt.postgres.q.documents.totals(collection)
    graph = (await GraphWrites(rt.neo4j).collection_counts()).get(collection, {})
    return {"documents": pg.documents, "chunks": pg.chunks, **graph}


async def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = Settings()
    target = args.target or f"{args.collection}_imported"
    async with open_services(settings) as rt:
        result: dict[str, Any] = {"collection": args.collection, "target": target, "machine": await machine(rt),
                                  "note": args.note}
        result["source_counts"] = await counts(rt, args.collection)
        with tempfile.TemporaryDirectory(prefix="graphrag-bench-") as tmp:
            paths = {}
            for compression in ("gzip", "none"):
                path = Path(tmp) / f"{args.collection}.tar{'.gz' if compression == 'gzip' else ''}"
                report = await export_to_file(rt, args.collection, path, compression=compression)
                paths[compression] = path
                result[f"export_{compression}"] = {
                    "seconds": report.seconds, "bytes": report.bytes, "mb": round(report.bytes / 2**20, 1),
                    "parts": report.parts, "rows": {k: getattr(report, k) for k in
                                                    ("documents", "chunks", "entities", "mentions", "relations")}}
                print(f"export ({compression}): {report.seconds:.1f} s, {report.bytes / 2**20:.1f} MB", flush=True)
            result["peak_rss_mb_after_exports"] = peak_rss_mb()
            t = time.perf_counter()
            await asyncio.to_thread(lambda: rt.embedders.default)
            result["model_load_seconds"] = round(time.perf_counter() - t, 2)
            await drop_collection(rt, Neo4jRunner(rt.neo4j), target)
            imports = []
            for attempt in range(2 if args.twice else 1):
                t = time.perf_counter()
                report = await import_archive(rt, paths["gzip"], collection=target)
                seconds = round(time.perf_counter() - t, 2)
                imports.append({"seconds": seconds, "verify_seconds": report.verify_seconds,
                                "replaced": report.replaced, "parts": report.parts,
                                "graph_pending": report.graph_pending})
                print(f"import #{attempt + 1}: {seconds:.1f} s (verify {report.verify_seconds:.1f} s), "
                      f"{report.replaced} replaced", flush=True)
            result["imports"] = imports
        result["target_counts"] = await counts(rt, target)
        result["same_counts"] = result["target_counts"] == result["source_counts"]
        result["peak_rss_mb"] = peak_rss_mb()
        if not args.keep:
            await drop_collection(rt, Neo4jRunner(rt.neo4j), target)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--collection", default="scale_10k", help="collection to export (default scale_10k)")
    parser.add_argument("--target", help="collection to import into (default <collection>_imported; replaced)")
    parser.add_argument("--twice", action="store_true", help="import a second time (the idempotent path)")
    parser.add_argument("--keep", action="store_true", help="keep the imported collection")
    parser.add_argument("--out", help="result file name in bench/results (default portable_<collection>.json)")
    parser.add_argument("--note", default="", help="a note on the machine and its load, stored with the results")
    args = parser.parse_args()
    result = asyncio.run(run(args))
    path = write_result(args.out or f"portable_{args.collection}.json", result)
    print({k: result[k] for k in ("export_gzip", "export_none", "imports", "same_counts", "peak_rss_mb")})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
