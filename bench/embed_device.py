"""Chunk embedding on a GPU (GRAPHRAG_EMBEDDING_DEVICE): seconds and agreement against the CPU, on the
chunks an ingest of SciFact's first documents embeds.

    python bench/embed_device.py prepare --limit 1000 --out .gpu   # here: texts, reference vectors, model
    python bench/embed_device.py run --data .gpu --out DIR          # on the machine with the GPU

``prepare`` writes the texts ingestion would embed (``texts.json``), this machine's float32 vectors of
every fifth of them (``reference.npy``) and the model folder with its weights rounded to float16
(``model/``: half the bytes, for a transfer that allows 64 MiB). ``run`` widens the weights back to
float32, embeds every text on the CPU (all cores) and on the GPU, and writes ``embed_device.json``:
GPU seconds (median of repeats, after a warm-up) for the batch budgets compared, the token counting
alone, bfloat16 products, and the cosines of GPU against CPU vectors of the same weights (and of those
against this machine's, which shows what the float16 rounding of the transfer did). The GPU timings run
with the process held to two CPU cores, the cores of the machines the ingestion targets are set for.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from graphrag.ingest import embed  # noqa: E402

REFERENCE_EVERY = 5
MODEL_FILES = ("config.json", "modules.json", "sentence_bert_config.json", "config_sentence_transformers.json",
               "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt", "1_Pooling/config.json")


def prepare(args: argparse.Namespace) -> None:
    """Texts, reference vectors and the float16 model folder into ``args.out``."""
    import torch
    from safetensors.torch import load_file, save_file

    sys.path.insert(0, str(REPO / "bench"))
    from ingest_cpu import corpus_sample

    from graphrag.config import Settings
    from graphrag.ingest.ingest_models import embedding_text

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    settings = Settings()
    docs, embedder, counter, chunker = corpus_sample(settings, args.path, args.limit, "embed_device")
    texts = [embedding_text(c, counter) for d in docs for c in chunker.chunk(d)]
    (out / "texts.json").write_text(json.dumps({"documents": len(docs), "texts": texts}))
    cpu = embed.LocalEmbedder(embedder.spec, runtime="torch", precision="float32", device="cpu")
    np.save(out / "reference.npy", cpu.encode(texts[::REFERENCE_EVERY]))
    source = Path(embed.packaged_model_path())
    for name in MODEL_FILES:
        (out / "model" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source / name, out / "model" / name)
    weights = load_file(str(source / "model.safetensors"))
    save_file({k: v.to(torch.float16) if v.is_floating_point() else v for k, v in weights.items()},
              str(out / "model" / "model.fp16.safetensors"))
    print(f"{len(docs)} documents, {len(texts)} texts -> {out}")


def widen_model(data: Path, into: Path) -> Path:
    """The travelled model with its weights back in float32 (a sentence-transformers folder)."""
    import torch
    from safetensors.torch import load_file, save_file

    if into.exists():
        shutil.rmtree(into)
    shutil.copytree(data / "model", into, ignore=shutil.ignore_patterns("model.fp16.safetensors"))
    weights = load_file(str(data / "model" / "model.fp16.safetensors"))
    save_file({k: v.to(torch.float32) if v.is_floating_point() else v for k, v in weights.items()},
              str(into / "model.safetensors"))
    return into


def timed(fn: Any, repeats: int) -> tuple[float, Any]:
    """Median seconds of ``repeats`` calls after one warm-up call, and the last result."""
    import torch

    result = fn()
    seconds = []
    for _ in range(repeats):
        torch.cuda.synchronize()
        start = time.perf_counter()
        result = fn()
        torch.cuda.synchronize()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds), result


def cosines(a: np.ndarray, b: np.ndarray) -> dict[str, float]:
    c = (a * b).sum(axis=1)
    return {"min": round(float(c.min()), 7), "mean": round(float(c.mean()), 7)}


def run(args: argparse.Namespace) -> None:
    import torch

    data: Path = args.data
    loaded = json.loads((data / "texts.json").read_text())
    texts: list[str] = loaded["texts"]
    documents = int(loaded["documents"])
    model = widen_model(data, Path("/tmp/embed_device_model"))
    spec = embed.parse_spec(f"sentence-transformers:{model}")
    result: dict[str, Any] = {
        "documents": documents, "texts": len(texts), "repeats": args.repeats,
        "gpu_name": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "cpu_cores": len(os.sched_getaffinity(0)), "platform": platform.platform(),
    }
    import sentence_transformers
    result["sentence_transformers"] = sentence_transformers.__version__

    cpu = embed.LocalEmbedder(spec, device="cpu", runtime="torch", precision="float32")
    start = time.perf_counter()
    on_cpu = cpu.encode(texts, threads=torch.get_num_threads())
    result["cpu_all_cores_s"] = round(time.perf_counter() - start, 2)
    reference = np.load(data / "reference.npy")
    result["cpu_vs_prepared_reference"] = cosines(on_cpu[::REFERENCE_EVERY], reference)

    os.sched_setaffinity(0, set(sorted(os.sched_getaffinity(0))[:2]))  # a two-core host from here on
    torch.set_num_threads(2)
    result["timed_cores"] = len(os.sched_getaffinity(0))
    runs: dict[str, Any] = {}
    for name, precision, batch_size, padded in (
            ("float32_batch64", "float32", 64, None),
            ("float32_batch64_cpu_budget", "float32", 64, embed.PADDED_TOKENS_PER_BATCH),
            ("float32_batch256", "float32", 256, None),
            ("bfloat16_batch64", "bfloat16", 64, None)):
        gpu = embed.LocalEmbedder(spec, device="cuda", precision=precision, batch_size=batch_size)
        if padded is not None:
            gpu.padded_tokens_per_batch = padded
        lengths = gpu.token_lengths(texts)
        seconds, vectors = timed(lambda gpu=gpu, lengths=lengths: gpu.encode(texts, threads=2, lengths=lengths),
                                 args.repeats)
        runs[name] = {"seconds": round(seconds, 3), "documents_per_s": round(documents / seconds, 1),
                      "padded_tokens_per_batch": gpu.padded_tokens_per_batch,
                      "vs_cpu": cosines(vectors, on_cpu)}
        print(name, runs[name], flush=True)
    result["runs"] = runs
    counting, _ = timed(lambda: cpu.token_lengths(texts), args.repeats)
    result["token_counting_s"] = round(counting, 3)
    gpu = embed.LocalEmbedder(spec, device="cuda")
    query = texts[0][:200]
    query_s, _ = timed(lambda: gpu.encode_queries([query]), 20)
    result["query_ms"] = round(query_s * 1000, 2)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "embed_device.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("--path", type=Path, default=REPO.parent / "shared" / "eval" / "scifact" / "corpus.jsonl")
    p.add_argument("--limit", type=int, default=1000)
    p.add_argument("--out", type=Path, default=REPO / ".gpu")
    r = sub.add_parser("run")
    r.add_argument("--data", type=Path, default=REPO / ".gpu")
    r.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "bench/results")))
    r.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    prepare(args) if args.command == "prepare" else run(args)


if __name__ == "__main__":
    main()
