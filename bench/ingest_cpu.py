"""CPU seconds of the ingestion model stages, variant against variant, on the same chunks.

The machine this runs on is shared, so wall time says more about the neighbours than about the
code. This compares CPU seconds (``time.process_time``: every thread of this process) and runs the
variants interleaved, group by group of documents in rotating order, so that each variant sees the
same load over time. Embedding variants are checked against the first one by cosine per chunk;
extraction variants by whether every document's extraction is identical.

    python bench/ingest_cpu.py --limit 1000                 # SciFact's first 1,000 documents
    python bench/ingest_cpu.py --limit 300 --stage embed --int8
    python bench/ingest_cpu.py --limit 1000 --stage embed --openvino

Results go to bench/results/ingest_cpu_<name>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import types
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from graphrag.config import Settings  # noqa: E402
from graphrag.ingest.chunk import Chunker, ChunkOptions, HFTokenCounter  # noqa: E402
from graphrag.ingest.embed import LocalEmbedder, parse_spec  # noqa: E402
from graphrag.ingest.extract import SpacyExtractor  # noqa: E402
from graphrag.ingest.extractors import build_extractor, extract_options  # noqa: E402
from graphrag.ingest.load import Found, load_file  # noqa: E402
from graphrag.ingest.pipeline import SLICE_CHUNKS  # noqa: E402
from graphrag.ingest.ingest_models import embedding_text  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
GROUP_DOCS = 64  # documents per group: the pipeline's batch


def slices(groups: list[list[str]], size: int) -> list[list[str]]:
    """Consecutive documents' texts joined into runs of at least ``size`` (the pipeline's slices)."""
    out: list[list[str]] = []
    cur: list[str] = []
    for texts in groups:
        cur += texts
        if len(cur) >= size:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


def interleave(groups: list[Any],
               variants: dict[str, Callable[[Any], Any]]) -> tuple[dict[str, float], dict[str, list]]:
    """Run every variant over every group, in rotating order; CPU seconds and outputs per variant."""
    cpu = dict.fromkeys(variants, 0.0)
    outputs: dict[str, list] = {name: [] for name in variants}
    names = list(variants)
    for g, group in enumerate(groups):
        for k in range(len(names)):
            name = names[(g + k) % len(names)]
            t = time.process_time()
            outputs[name].append(variants[name](group))
            cpu[name] += time.process_time() - t
    return cpu, outputs


def compiled_embedder(embedder: LocalEmbedder) -> tuple[LocalEmbedder, float]:
    """A second embedder whose transformer runs through ``torch.compile`` (Inductor, default mode, frozen
    weights, dynamic shapes), warmed up once; with the CPU seconds that compiling and tuning took."""
    import torch
    import torch._inductor.config as inductor

    inductor.freezing = True  # weights as constants: lets Inductor pre-pack them for oneDNN
    compiled = LocalEmbedder(embedder.spec, batch_size=embedder.batch_size)
    transformer = compiled.model[0]
    transformer.model = torch.compile(transformer.model, dynamic=True)
    start = time.process_time()
    compiled.encode(["warm up " * n for n in (3, 40, 120)], threads=1)
    return compiled, time.process_time() - start


def embed_variants(embedder: LocalEmbedder, int8: bool, compiled: LocalEmbedder | None = None,
                   openvino: LocalEmbedder | None = None) -> dict[str, Callable[[list[list[str]]], np.ndarray]]:
    import torch

    model = embedder.model

    def before(group: list[list[str]], threads: int = 2) -> np.ndarray:
        torch.set_num_threads(threads)
        return np.concatenate([model.encode(s, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                                            show_progress_bar=False) for s in slices(group, SLICE_CHUNKS)])

    def bucketed(group: list[list[str]], threads: int, per_slice: bool = True, encoder: Any = embedder) -> np.ndarray:
        torch.set_num_threads(threads)
        parts = slices(group, SLICE_CHUNKS) if per_slice else [[t for texts in group for t in texts]]
        return np.concatenate([encoder.encode(s) for s in parts])

    variants: dict[str, Callable[[list[list[str]]], np.ndarray]] = {
        "before: slices, batch 64, 2 threads": before,
        "slices, batch 64, 1 thread": lambda g: before(g, 1),
        "slices, length batches, 1 thread": lambda g: bucketed(g, 1),
        "now: whole batch longest first, length batches, 1 thread": lambda g: bucketed(g, 1, per_slice=False),
    }
    if int8:
        from torch.ao.quantization import per_channel_dynamic_qconfig, quantize_dynamic

        quantized = LocalEmbedder(embedder.spec, batch_size=embedder.batch_size)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quantized.model = quantize_dynamic(quantized.model, {torch.nn.Linear: per_channel_dynamic_qconfig},
                                               dtype=torch.qint8)
        variants["int8 per-channel, slices, length batches, 1 thread"] = (
            lambda g: bucketed(g, 1, encoder=quantized))
    if compiled is not None:
        variants["torch.compile, frozen weights, whole batch, length batches, 1 thread"] = (
            lambda g: bucketed(g, 1, per_slice=False, encoder=compiled))
    if openvino is not None:
        variants["openvino, whole batch, length batches, 1 thread"] = (
            lambda g: openvino.encode([t for texts in g for t in texts], threads=1))
    return variants


def module_at(rev: str, path: str, name: str) -> Any:
    """A module of this repository as it was at commit ``rev`` (imported under ``name``)."""
    source = subprocess.run(["git", "-C", str(REPO), "show", f"{rev}:{path}"], check=True, capture_output=True,
                            text=True).stdout
    module = types.ModuleType(name)
    module.__file__ = f"{rev}:{path}"
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(source, module.__file__, "exec"), module.__dict__)  # noqa: S102 - our own history
    return module


def extract_variants(settings: Settings, before: str) -> dict[str, Callable[[list[list[str]]], list]]:
    old = module_at(before, "graphrag/ingest/extract.py", "extract_before")
    then = old.SpacyExtractor(settings.spacy_model, old.ExtractOptions(**vars(extract_options(settings))))
    lazy = SpacyExtractor(settings.spacy_model, extract_options(settings))
    lazy._ruler, lazy._skip = None, []  # the pipeline's own attribute ruler
    now = SpacyExtractor(settings.spacy_model, extract_options(settings))
    return {
        f"before: the extractor at {before}": build_extractor(settings, then).extract_many,
        "lazy lemmas, faster name and word reading": build_extractor(settings, lazy).extract_many,
        "and the attribute ruler as a table look-up": build_extractor(settings, now).extract_many,
    }


def corpus_sample(settings: Settings, path: Path, limit: int,
                  name: str) -> tuple[list[Any], LocalEmbedder, HFTokenCounter, Chunker]:
    """The first ``limit`` records of a JSONL corpus as loaded documents (through a copy in /tmp: the
    loader reads files), with the configured embedder and the chunker ingestion would use."""
    sample = Path(f"/tmp/{name}_{limit}.jsonl")
    with path.open() as src, sample.open("w") as dst:
        for i, line in enumerate(src):
            if i >= limit:
                break
            dst.write(line)
    docs = load_file(Found(sample, "jsonl"), 1 << 30)
    # PyTorch: the variants compared here are PyTorch's (--openvino adds the OpenVINO runtime's).
    embedder = LocalEmbedder(parse_spec(settings.embedding_model), batch_size=settings.embedding_batch_size,
                             runtime="torch")
    counter = HFTokenCounter(embedder.tokenizer, embedder.max_seq_length)
    return docs, embedder, counter, Chunker(counter, ChunkOptions(settings.chunk_tokens, settings.chunk_overlap_tokens))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", type=Path, default=REPO.parent / "shared" / "eval" / "scifact" / "corpus.jsonl")
    parser.add_argument("--name", default="scifact")
    parser.add_argument("--limit", type=int, default=1000, help="the first N records of the JSONL corpus")
    parser.add_argument("--stage", choices=("embed", "extract", "both"), default="both")
    parser.add_argument("--int8", action="store_true", help="also time torch dynamic int8 quantization")
    parser.add_argument("--compile", action="store_true",
                        help="also time the model compiled by torch.compile (Inductor, frozen weights)")
    parser.add_argument("--openvino", action="store_true",
                        help="also time the OpenVINO runtime (GRAPHRAG_EMBEDDING_RUNTIME=openvino)")
    parser.add_argument("--before", default="c81bf66", help="the commit whose extractor is the baseline")
    args = parser.parse_args()

    settings = Settings()
    docs, embedder, counter, chunker = corpus_sample(settings, args.path, args.limit, f"ingest_cpu_{args.name}")
    chunked = [chunker.chunk(d) for d in docs]
    groups = [chunked[k:k + GROUP_DOCS] for k in range(0, len(chunked), GROUP_DOCS)]
    result: dict[str, Any] = {
        "dataset": args.name, "documents": len(docs), "chunks": sum(len(c) for c in chunked),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "load_avg_start": [round(x, 2) for x in os.getloadavg()],
        "metric": "CPU seconds of this process (all threads), variants interleaved per group of "
                  f"{GROUP_DOCS} documents",
    }
    if args.stage in ("embed", "both"):
        embedder.encode(["warm up"] * 4)
        texts = [[[embedding_text(c, counter) for c in chunks] for chunks in group] for group in groups]
        compiled = None
        if args.compile:
            compiled, result["compile_cpu_s"] = compiled_embedder(embedder)
        openvino = None
        if args.openvino:
            openvino = LocalEmbedder(embedder.spec, batch_size=embedder.batch_size, runtime="openvino")
            openvino.encode(["warm up"] * 4)  # converts and compiles the model
        cpu, outputs = interleave(texts, embed_variants(embedder, args.int8, compiled, openvino))
        first = next(iter(outputs))
        ref = np.concatenate(outputs[first])
        stage = {}
        for name, seconds in cpu.items():
            cos = (np.concatenate(outputs[name]) * ref).sum(axis=1)
            stage[name] = {"cpu_s": round(seconds, 2), "vs_before": round(seconds / cpu[first], 3),
                           "cosine_min": round(float(cos.min()), 5), "cosine_mean": round(float(cos.mean()), 6)}
        result["embed"] = stage
        print(json.dumps(stage, indent=2), flush=True)
    if args.stage in ("extract", "both"):
        texts = [[[c.text for c in chunks] for chunks in group] for group in groups]
        cpu, outputs = interleave(texts, extract_variants(settings, args.before))
        first = next(iter(outputs))
        ref = [x for part in outputs[first] for x in part]
        stage = {}
        for name, seconds in cpu.items():
            got = [x for part in outputs[name] for x in part]
            same = sum(1 for a, b in zip(ref, got, strict=True)
                       if (a.entities, a.mentions, a.relations, a.phrases)
                       == (b.entities, b.mentions, b.relations, b.phrases))
            stage[name] = {"cpu_s": round(seconds, 2), "vs_before": round(seconds / cpu[first], 3),
                           "identical_documents": same, "entities": sum(len(x.entities) for x in got),
                           "relations": sum(len(x.relations) for x in got)}
        result["extract"] = stage
        print(json.dumps(stage, indent=2), flush=True)
    result["load_avg_end"] = [round(x, 2) for x in os.getloadavg()]
    out = REPO / "bench" / "results" / f"ingest_cpu_{args.name}_{args.limit}.json"
    out.write_text(json.dumps(result, indent=2))
    print(out)


if __name__ == "__main__":
    main()
