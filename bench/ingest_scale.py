"""Ingestion at scale: the pipeline's measured throughput on a sample, extrapolated to a scale corpus.

Reads an ingestion result of ``bench/ingest.py`` (run on a sample of the SciFact corpus through the real
pipeline: chunk, embed, NER, both stores) and a ``bench/generate.py`` result, and writes what ingesting
that many chunks through the pipeline would take on this machine, stage by stage, next to the bulk load
of the generated corpus (which skips the models).

    python bench/ingest.py --limit 2000 --name scifact_2000     # the sample (real pipeline)
    python bench/ingest_scale.py --sample scifact_2000 --target scale_100k

Writes bench/results/ingest_scale_<target>.json. The extrapolation is linear in chunks: the model
stages are per chunk, and the measured write stage on the sample already includes the index upkeep
of a table of the dev database's size (HNSW inserts grow slowly, with the log of the table size).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import RESULTS, write_result  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sample", default="scifact_2000", help="name of bench/results/ingest_<name>.json")
    parser.add_argument("--target", default="scale_100k", help="name of bench/results/generate_<name>.json")
    args = parser.parse_args()
    sample = json.loads((RESULTS / f"ingest_{args.sample}.json").read_text())
    target = json.loads((RESULTS / f"generate_{args.target}.json").read_text())
    chunks, docs = target["chunks"], target["documents"]
    factor = chunks / sample["chunks"]
    stages = {k: round(v * factor, 1) for k, v in sample["stages_s"].items()}
    seconds = sample["seconds"] * factor
    bulk = target["postgres"]["load_s"] + (target["postgres"].get("gin_build_s") or 0) + \
        (target["postgres"].get("hnsw_build_s") or 0) + target["neo4j"]["load_s"]
    result = {
        "sample": {k: sample[k] for k in ("dataset", "documents", "chunks", "characters", "seconds", "docs_per_s",
                                           "chunks_per_s", "stages_s", "peak_rss_mb", "alone_s") if k in sample},
        "target": {"collection": args.target, "documents": docs, "chunks": chunks},
        "pipeline_extrapolated": {
            "seconds": round(seconds), "hours": round(seconds / 3600, 2),
            "stages_s": stages,
            "share_of_stage_time": {k: round(v / sum(stages.values()), 3) for k, v in stages.items()},
        },
        "bulk_load_measured_s": round(bulk, 1),
        "pipeline_over_bulk": round(seconds / bulk, 1),
        "machine": sample.get("machine"),
        "note": "linear extrapolation from the sample's chunks/s; the model stages (embed, NER) are per chunk "
                "and CPU-bound on this machine",
    }
    path = write_result(f"ingest_scale_{args.target}.json", result)
    print(json.dumps(result, indent=2))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
