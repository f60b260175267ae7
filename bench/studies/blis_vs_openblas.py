# One-off study, as run at commit 91c715b (2026-11-26); not maintained: check out that commit to run it.
"""spaCy's products through BLIS (thinc's default) against numpy's OpenBLAS (what the extractor uses),
interleaved in one process over the same chunks: CPU seconds of each and whether the extractions match.

    python bench/studies/blis_vs_openblas.py --path ../shared/eval/scifact/corpus.jsonl --limit 1000
    python bench/studies/blis_vs_openblas.py --path docs            # a folder of Markdown pages

Also measures the GFLOPS of both libraries on the tok2vec's shapes (``BLIS_ARCH_DEBUG=1`` makes BLIS
say which kernels it chose).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from common import write_result  # noqa: E402
from thinc.api import NumpyOps  # noqa: E402

from graphrag.config import Settings  # noqa: E402
from graphrag.ingest.chunk import Chunker, ChunkOptions, HFTokenCounter  # noqa: E402
from graphrag.ingest.embedders import Embedders  # noqa: E402
from graphrag.ingest.extract import SpacyExtractor  # noqa: E402
from graphrag.ingest.extractors import extract_options  # noqa: E402
from graphrag.ingest.load import Found, discover, file_type, load_file  # noqa: E402
from graphrag.models import Extraction  # noqa: E402


def gflops() -> list[dict[str, float]]:
    import blis.py

    out = []
    for m, k, n in [(4000, 96, 288), (4000, 288, 96), (4000, 480, 288), (64, 96, 128)]:
        a = np.random.rand(m, k).astype("f")
        b = np.random.rand(k, n).astype("f")
        row = {"m": m, "k": k, "n": n}
        for name, fn in (("blis", blis.py.gemm), ("openblas", np.matmul)):
            fn(a, b)
            t = time.perf_counter()
            for _ in range(50):
                fn(a, b)
            row[name] = round(2 * m * k * n / ((time.perf_counter() - t) / 50) / 1e9, 1)
        out.append(row)
    return out


def summary(ex: Extraction) -> tuple[object, ...]:
    return (sorted((k, e.name, e.label) for k, e in ex.entities.items()), sorted(ex.mentions.items()),
            sorted((k, sorted(r.chunk_weights.items()), sorted(r.predicates)) for k, r in ex.relations.items()),
            sorted(ex.phrases.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", required=True)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    settings = Settings()
    embedder = Embedders(settings).default
    counter = HFTokenCounter(embedder.tokenizer, embedder.max_seq_length)
    chunker = Chunker(counter, ChunkOptions(settings.chunk_tokens, settings.chunk_overlap_tokens))
    path = Path(args.path)
    found = discover([path])[0] if path.is_dir() else [Found(path, file_type(path))]
    docs = [d for f in found for d in load_file(f, 10**9)][:args.limit]
    chunks = [[c.text for c in chunker.chunk(d, "whole")] for d in docs]
    extractor = SpacyExtractor(settings.spacy_model, extract_options(settings))
    nodes = [n for _, pipe in extractor.nlp.pipeline if hasattr(pipe, "model") for n in pipe.model.walk()]
    ops = {"openblas": NumpyOps(use_blis=False), "blis": NumpyOps()}
    extractor.extract_many(chunks[:20])  # warm up
    cpu: dict[str, list[float]] = {"blis": [], "openblas": []}
    results: dict[str, list[tuple[object, ...]]] = {}
    for _ in range(args.rounds):
        for name in ("blis", "openblas"):
            for node in nodes:
                node.ops = ops[name]
            t = time.process_time()
            out = [e for k in range(0, len(chunks), 32) for e in extractor.extract_many(chunks[k:k + 32])]
            cpu[name].append(round(time.process_time() - t, 1))
            results[name] = [summary(e) for e in out]
    same = sum(a == b for a, b in zip(results["blis"], results["openblas"], strict=True))
    result = {"path": args.path, "documents": len(docs), "chunks": sum(map(len, chunks)), "cpu_s": cpu,
              "identical_documents": same, "gflops": gflops()}
    print(result)
    write_result(f"blis_vs_openblas_{path.parent.name if path.is_file() else path.name}_{len(docs)}.json", result)


if __name__ == "__main__":
    main()
