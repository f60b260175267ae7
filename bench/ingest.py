"""Ingestion benchmark: a BEIR corpus (default SciFact) or a folder into a fresh collection.

Reports documents/s, chunks/s, characters/s, seconds per stage, peak RSS, the time of an unchanged
re-ingest, the CPU seconds of this process and the load average it saw (the machine may be shared),
and, for comparison, the embedding and NER stages run alone over the same chunks: embedding with
the process's default thread count, and with one thread (as the pipeline's lanes run it on two
cores; ``embed_1_thread``).

    python bench/ingest.py                       # ../shared/eval/scifact/corpus.jsonl
    python bench/ingest.py --path docs/ --name markdown-docs
    python bench/ingest.py --limit 500           # a quick sample

Results go to bench/results/ingest_<name>.json. Needs the local services (started on demand).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import cpu_model, cpu_seconds, store_pids  # noqa: E402
from graphrag.config import Settings  # noqa: E402
from graphrag.ingest import pipeline  # noqa: E402
from graphrag.ingest.ingest_models import embedding_text  # noqa: E402
from graphrag.ingest.load import discover, load_file  # noqa: E402
from graphrag.runtime import open_services  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def machine_busy_s() -> float:
    """CPU seconds the whole machine has spent busy (all processes, all cores) since boot."""
    import psutil

    times = psutil.cpu_times()
    return float(sum(times) - times.idle - getattr(times, "iowait", 0.0))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def batch_docs(value: str) -> int:
    """A --batch-docs value: a whole number of documents, at least 1."""
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a number of documents (1 or more)")
    return int(value)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", type=Path, default=REPO.parent / "shared" / "eval" / "scifact" / "corpus.jsonl")
    parser.add_argument("--name", default="scifact")
    parser.add_argument("--limit", type=int, default=0, help="only the first N records of a JSONL corpus")
    parser.add_argument("--no-alone", action="store_true", help="skip timing the model stages alone")
    parser.add_argument("--batch-docs", type=batch_docs, default=0, metavar="N",
                        help="ingest batches of at most N documents and 4N kB (default: the pipeline's)")
    args = parser.parse_args()
    if args.batch_docs:
        pipeline.BATCH_DOCS, pipeline.BATCH_KB = args.batch_docs, 4 * args.batch_docs

    settings = Settings()
    collection = f"bench_{args.name}_{int(time.time())}"
    path = args.path
    if args.limit and path.suffix == ".jsonl":
        sample = Path(f"/tmp/bench_{args.name}_{args.limit}.jsonl")
        with path.open() as src, sample.open("w") as dst:
            for i, line in enumerate(src):
                if i >= args.limit:
                    break
                dst.write(line)
        path = sample
    load_start = os.getloadavg()
    async with open_services(settings) as rt:
        t0 = time.perf_counter()
        ingestor = await rt.ingestor()
        rt_embedder = (await rt.models()).embedder
        models_s = time.perf_counter() - t0
        cpu0 = time.process_time()
        busy0 = machine_busy_s()
        stores = store_pids()
        stores0 = cpu_seconds(stores)
        report = await ingestor.ingest_paths([path], collection=collection, progress=True)
        ingest_cpu_s = time.process_time() - cpu0
        ingest_machine_cpu_s = machine_busy_s() - busy0
        stores1 = cpu_seconds(stores)
        load_after_ingest = os.getloadavg()
        rss_after_ingest = peak_rss_mb()
        again = await ingestor.ingest_paths([path], collection=collection, progress=False)
        found, _ = discover([path.resolve()])  # as the ingest found them: the same includes are read
        docs = []
        for f in found:
            try:
                docs += load_file(f, 1 << 30)
            except Exception:  # noqa: BLE001 - failed files are in the report already
                pass
        chars = sum(len(d.text) for d in docs)
        alone: dict[str, float] = {}
        alone_cpu: dict[str, float] = {}
        if not args.no_alone:
            models = await rt.models()
            chunker = models.chunker()
            chunks = [c for d in docs for c in chunker.chunk(d)]
            texts = [c.text for c in chunks]
            # The pipeline embeds each chunk under its heading path (a BEIR title), so the embedding
            # stage alone embeds the same strings; extraction reads the chunk text itself.
            embedded = [embedding_text(c, models.counter) for c in chunks]
            runs: dict[str, Any] = {
                "embed": lambda: models.embedder.encode(embedded),
                "embed_1_thread": lambda: models.embedder.encode(embedded, threads=1),
                "extract": lambda: models.extractor.extract_many([[x] for x in texts]),
            }
            for name, run in runs.items():
                t, c = time.perf_counter(), time.process_time()
                try:
                    run()
                except TypeError:  # an embedder without per-call threads (older code)
                    continue
                alone[name] = round(time.perf_counter() - t, 2)
                alone_cpu[name] = round(time.process_time() - c, 2)
        load_end = os.getloadavg()
    seconds = report.seconds
    result = {
        "dataset": args.name,
        "path": str(args.path),
        "machine": {"cpus": os.cpu_count(), "cpu": cpu_model(), "platform": platform.platform(),
                    "python": platform.python_version()},
        "embedding_precision": getattr(rt_embedder, "precision", None),
        "embedding_runtime": getattr(rt_embedder, "runtime", None),  # what ran: openvino or torch
        "batch_docs": pipeline.BATCH_DOCS,
        "documents": report.ingested + report.updated,
        "failed": len(report.failed),
        "chunks": report.chunks,
        "characters": chars,
        "entities": report.entities,
        "relations": report.relations,
        "seconds": seconds,
        "model_load_seconds": round(models_s, 2),
        "docs_per_s": round((report.ingested + report.updated) / seconds, 2),
        "chunks_per_s": round(report.chunks / seconds, 2),
        "chars_per_s": round(chars / seconds, 1),
        "stages_s": report.stages,
        "reingest_unchanged_s": again.seconds,
        "reingest_unchanged": again.unchanged,
        "peak_rss_mb": round(rss_after_ingest, 1),
        "ingest_cpu_s": round(ingest_cpu_s, 1),
        # Every process's CPU during the ingest (this one, PostgreSQL, Neo4j, and anything else running).
        "ingest_machine_cpu_s": round(ingest_machine_cpu_s, 1),
        # The local stores' process trees (all backends, exited ones included) during the ingest.
        "store_cpu_s": {k: round(stores1[k] - stores0[k], 1) for k in stores1 if k in stores0},
        "load_avg": {"start": [round(x, 2) for x in load_start],
                     "after_ingest": [round(x, 2) for x in load_after_ingest],
                     "end": [round(x, 2) for x in load_end]},
        "alone_s": alone,
        "alone_cpu_s": alone_cpu,
        "ratio_to_slowest_stage_alone": (round(seconds / max(alone.get("embed", 0), alone.get("extract", 0)), 3)
                                         if alone else None),
        "ratio_to_slowest_stage_alone_1_thread": (
            round(seconds / max(alone["embed_1_thread"], alone["extract"]), 3) if "embed_1_thread" in alone else None),
        "collection": collection,
    }
    out = REPO / "bench" / "results" / f"ingest_{args.name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    asyncio.run(main())
