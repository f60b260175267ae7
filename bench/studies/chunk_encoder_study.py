"""Chunk embedding runtimes on real chunks, PyTorch against ONNX Runtime fp32 and int8 (ran on 15a8e19).

The int8 encoder here (dynamic quantisation of the exported MiniLM by ``quantize_dynamic``, run in the
pipeline's length-bounded batches) was built as a candidate for ingestion and not shipped: on SciFact it
cost 0.0065 vector nDCG@10 (docs/benchmarks.md, "int8 chunk embeddings"; decisions/0004).

Every variant embeds the same chunk texts (SciFact's first N documents, chunked as ingestion chunks
them) with the same thread count; the variants run interleaved group by group, so each sees the same
load. Reported per variant: CPU seconds of this process, wall seconds, and the cosine of every chunk's
vector against PyTorch's (min, mean, 0.1st percentile).

    python bench/studies/chunk_encoder_study.py --limit 256 --threads 1

Results go to bench/results/chunk_encoder_study_<limit>_<threads>t.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import platform
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from bench.ingest_cpu import corpus_sample  # noqa: E402
from graphrag.config import Settings  # noqa: E402
from graphrag.ingest.embed import length_batches  # noqa: E402
from graphrag.ingest.ingest_models import embedding_text  # noqa: E402
from graphrag.ingest.query_encoder import OnnxQueryEncoder, QueryEncoderUnavailable, export_graph  # noqa: E402

PADDED_CHARS_PER_BATCH = 16_384  # the character budget of a batch when this study ran

REPO = Path(__file__).resolve().parents[2]

#: The least cosine an int8 encoder's vectors must reach against the model's on the probe texts.
INT8_AGREEMENT = 0.98
#: The least cosine an fp32 ONNX encoder's vectors must reach (the same computation, reordered).
FP32_AGREEMENT = 0.9999
#: Chunk-like probe texts: several sentences each, so the check covers long inputs too.
PROBES = [
    "Aspirin lowers the risk of stroke in adults.",
    "What does the graph leg add to a hybrid search?",
    "Alterations of the architecture of cerebral white matter in the developing human brain can affect "
    "cortical development and result in functional disabilities. A line scan diffusion-weighted magnetic "
    "resonance imaging sequence with diffusion tensor analysis was applied to measure the apparent "
    "diffusion coefficient and to delineate three-dimensional fiber architecture in cerebral white matter.",
    "The service keeps documents and chunks in PostgreSQL and the knowledge graph in Neo4j. Each query is "
    "embedded once; the vector, keyword and graph legs run concurrently and their rankings are fused.",
]


@contextlib.contextmanager
def _quiet_root_warning(words: str) -> Iterator[None]:
    """Drop the root logger's records containing ``words`` meanwhile (the quantiser's advice to
    pre-process, logged on every call, is about static quantisation)."""

    def keep(record: logging.LogRecord) -> bool:
        return words not in record.getMessage()

    root = logging.getLogger()
    root.addFilter(keep)
    try:
        yield
    finally:
        root.removeFilter(keep)


def quantize_graph(graph: bytes, *, per_channel: bool = False, reduce_range: bool = False) -> bytes:
    """``graph`` with its MatMul weights quantised to int8 (dynamic quantisation of activations).

    Raises QueryEncoderUnavailable when the quantisation tools are missing or fail."""
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise QueryEncoderUnavailable(f"onnxruntime.quantization is not available ({exc})") from None
    try:
        with tempfile.TemporaryDirectory(prefix="graphrag-onnx-int8-") as folder:
            source, target = Path(folder) / "model.onnx", Path(folder) / "model.int8.onnx"
            source.write_bytes(graph)
            with _quiet_root_warning("pre-processing"):
                quantize_dynamic(source, target, per_channel=per_channel, reduce_range=reduce_range,
                                 weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"])
            return target.read_bytes()
    except Exception as exc:  # noqa: BLE001 - any failure here means: keep PyTorch
        raise QueryEncoderUnavailable(f"int8 quantisation failed: {type(exc).__name__}: {exc}") from None


class OnnxChunkEncoder:
    """``encode(texts, threads)`` -> unit-length float32 rows by ONNX Runtime (fp32 or int8)."""

    def __init__(self, model: Any, *, int8: bool = True, graph: bytes | None = None, batch_size: int = 64,
                 threads: int = 1, per_channel: bool = False, reduce_range: bool = False,
                 check: bool = True) -> None:
        """Export ``model`` (a loaded SentenceTransformer; the caller keeps others off it meanwhile),
        quantise it when ``int8``, and check it against the model on :data:`PROBES`.

        ``graph``: an already exported fp32 graph (:func:`export_graph`); ``threads``: the intra-op
        threads of a call that names none; ``check=False`` skips the refusal (studies only: the
        agreement is still measured). Raises QueryEncoderUnavailable."""
        self._model = model
        self.int8 = int8
        self.batch_size = batch_size
        self.threads = max(1, threads)
        fp32 = graph if graph is not None else export_graph(model)
        self._graph = quantize_graph(fp32, per_channel=per_channel, reduce_range=reduce_range) if int8 else fp32
        self._sessions: dict[int, OnnxQueryEncoder] = {}
        self._lock = threading.Lock()
        self._needed = (INT8_AGREEMENT if int8 else FP32_AGREEMENT) if check else -1.0
        first = self._session(self.threads)
        #: The least cosine against the model's own vectors on the probe texts.
        self.agreement = first.agreement

    def _session(self, threads: int) -> OnnxQueryEncoder:
        with self._lock:
            found = self._sessions.get(threads)
            if found is None:
                # The first session is checked against the model; later ones run the same graph.
                needed = None if self._sessions else self._needed
                found = OnnxQueryEncoder(self._model, threads=threads, graph=self._graph, agreement=needed,
                                         probes=PROBES)
                self._sessions[threads] = found
            return found

    def encode(self, texts: list[str], threads: int | None = None) -> np.ndarray:
        """Unit-length float32 rows, one per text, in length-bounded batches, longest first, with
        ``threads`` intra-op threads (None: the encoder's default)."""
        session = self._session(max(1, threads or self.threads))
        parts = [(batch, session.encode([texts[i] for i in batch]))
                 for batch in length_batches([len(t) for t in texts], self.batch_size, PADDED_CHARS_PER_BATCH)]
        if not parts:
            return np.zeros((0, 0), dtype=np.float32)
        out = np.empty((len(texts), parts[0][1].shape[1]), dtype=np.float32)
        for batch, vectors in parts:
            out[batch] = vectors
        return out




def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--path", type=Path, default=REPO.parent / "shared" / "eval" / "scifact" / "corpus.jsonl")
    parser.add_argument("--limit", type=int, default=256)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--variants", default="torch,onnx-fp32,int8,int8-pc,int8-rr,int8-pc-rr")
    args = parser.parse_args()

    settings = Settings()
    docs, embedder, counter, chunker = corpus_sample(settings, args.path, args.limit, "chunk_encoder_study")
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
