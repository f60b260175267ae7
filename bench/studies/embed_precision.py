"""Chunk embeddings in float32 against bfloat16 (autocast, and weights cast to bfloat16): CPU ms per
chunk at one thread and cosine with float32, over the first N SciFact documents chunked as ingestion
chunks them. Ran at the commit that added GRAPHRAG_EMBEDDING_PRECISION (docs/benchmarks.md,
"bfloat16 chunk embeddings").

    python bench/studies/embed_precision.py --limit 200
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from graphrag.config import Settings  # noqa: E402
from graphrag.ingest.embed import cpu_has_native_bf16  # noqa: E402
from ingest_cpu import corpus_sample  # noqa: E402

REPO = Path(__file__).resolve().parents[2]


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--path", type=Path, default=REPO.parent / "shared" / "eval" / "scifact" / "corpus.jsonl")
    args = parser.parse_args()
    docs, embedder, _, chunker = corpus_sample(Settings(), args.path, args.limit, "precision")
    texts = [c.text for d in docs for c in chunker.chunk(d)]
    print(f"{len(texts)} chunks; native bfloat16: {cpu_has_native_bf16()}")
    embedder.precision = "float32"
    embedder.encode(texts[:16], threads=1)  # warm-up
    start = cpu_s()
    reference = embedder.encode(texts, threads=1)
    print(f"float32: {1000 * (cpu_s() - start) / len(texts):.1f} ms/chunk")

    def report(label: str) -> None:
        start = cpu_s()
        vectors = embedder.encode(texts, threads=1)
        ms = 1000 * (cpu_s() - start) / len(texts)
        cosine = (vectors * reference).sum(axis=1)
        print(f"{label}: {ms:.1f} ms/chunk, cosine with float32 min {cosine.min():.6f} mean {cosine.mean():.6f}")

    embedder.precision = "bfloat16"
    report("bfloat16 autocast")
    original = embedder.model
    embedder.model = copy.deepcopy(original).to(torch.bfloat16)
    embedder.precision = "float32"
    report("weights cast to bfloat16")
    embedder.model = original
    assert np.isfinite(reference).all()


if __name__ == "__main__":
    main()
