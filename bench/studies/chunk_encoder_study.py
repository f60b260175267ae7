"""Chunk embedding runtimes compared on real chunks: PyTorch against ONNX Runtime fp32 and int8.

Every variant embeds the same chunk texts (SciFact's first N documents, chunked as ingestion chunks
them) with the same thread count; the variants run interleaved group by group, so each sees the same
load. Reported per variant: CPU seconds of this process, wall seconds, and the cosine of every chunk's
vector against PyTorch's (min, mean, 0.1st percentile).

    python bench/studies/chunk_encoder_study.py --limit 256 --threads 1

Results go to bench/results/chunk_encoder_study_<limit>_<threads>t.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from graphrag.config import Settings  # noqa: E402
from graphrag.ingest.chunk import Chunker, ChunkOptions, HFTokenCounter  # noqa: E402
from graphrag.ingest.chunk_encoder import OnnxChunkEncoder, export_graph  # noqa: E402
from graphrag.ingest.embed import LocalEmbedder, parse_spec  # noqa: E402
from graphrag.ingest.ingest_models import embedding_text  # noqa: E402
from graphrag.ingest.load import Found, load_file  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
GROUP_DOCS = 64


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", type=Path, default=REPO.parent / "shared" / "eval" / "scifact" / "corpus.jsonl")
    parser.add_argument("--limit", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--variants", default="torch,onnx-fp32,int8,int8-pc,int8-rr,int8-pc-rr")
    args = parser.parse_args()

    settings = Settings()
    sample = Path(f"/tmp/chunk_encoder_study_{args.limit}.jsonl")
    with args.path.open() as src, sample.open("w") as dst:
        for i, line in enumerate(src):
            if i >= args.limit:
                break
            dst.write(line)
    docs = load_file(Found(sample, "jsonl"), 1 << 30)
    embedder = LocalEmbedder(parse_spec(settings.embedding_model), batch_size=settings.embedding_batch_size)
    counter = HFTokenCounter(embedder.tokenizer, embedder.max_seq_length)
    chunker = Chunker(counter, ChunkOptions(settings.chunk_tokens, settings.chunk_overlap_tokens))
    texts = [embedding_text(c, counter) for d in docs for c in chunker.chunk(d)]
    groups = [texts[k:k + 128] for k in range(0, len(texts), 128)]

    graph = export_graph(embedder.model)
    variants: dict[str, Callable[[list[str]], np.ndarray]] = {}
    for name in args.variants.split(","):
        if name == "torch":
            variants[name] = lambda g: embedder.encode(g, threads=args.threads)
            continue
        enc = OnnxChunkEncoder(embedder.model, graph=graph, threads=args.threads, int8="int8" in name,
                               per_channel="-pc" in name, reduce_range="-rr" in name, check=False)
        variants[name] = enc.encode
    for fn in variants.values():
        fn(texts[:8])  # warm up
    cpu = dict.fromkeys(variants, 0.0)
    wall = dict.fromkeys(variants, 0.0)
    outputs: dict[str, list[np.ndarray]] = {n: [] for n in variants}
    names = list(variants)
    load_start = os.getloadavg()
    for g, group in enumerate(groups):
        for k in range(len(names)):
            name = names[(g + k) % len(names)]
            t, w = time.process_time(), time.perf_counter()
            outputs[name].append(variants[name](group))
            cpu[name] += time.process_time() - t
            wall[name] += time.perf_counter() - w
    ref = np.concatenate(outputs[names[0]])
    stage: dict[str, Any] = {}
    for name in names:
        cos = (np.concatenate(outputs[name]) * ref).sum(axis=1)
        stage[name] = {"cpu_s": round(cpu[name], 2), "wall_s": round(wall[name], 2),
                       "cpu_ms_per_chunk": round(1000 * cpu[name] / len(texts), 2),
                       "vs_first_cpu": round(cpu[name] / cpu[names[0]], 3),
                       "cosine_min": round(float(cos.min()), 5), "cosine_p001": round(float(np.quantile(cos, 0.001)), 5),
                       "cosine_mean": round(float(cos.mean()), 6)}
    result = {"documents": len(docs), "chunks": len(texts), "threads": args.threads,
              "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
              "load_avg_start": [round(x, 2) for x in load_start],
              "load_avg_end": [round(x, 2) for x in os.getloadavg()], "variants": stage}
    print(json.dumps(result, indent=2), flush=True)
    out = REPO / "bench" / "results" / f"chunk_encoder_study_{args.limit}_{args.threads}t.json"
    out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
