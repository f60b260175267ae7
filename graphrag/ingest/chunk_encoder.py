"""Chunk embeddings by ONNX Runtime: the model's transformer exported, optionally quantised to int8.

Ingestion embeds thousands of chunks of up to the model's token limit; on a CPU that is the costliest
model stage. ONNX Runtime runs the exported graph; with dynamic int8 quantisation
(``onnxruntime.quantization.quantize_dynamic``: weights stored as int8, activations quantised per
batch) the matrix products cost a fraction of fp32 ones. int8 vectors are not the model's exactly
(cosine about 0.99 against PyTorch's), so the encoder is checked on probe texts when it is built and
refused below :data:`INT8_AGREEMENT`; the caller then keeps PyTorch.

Batches are formed as ``LocalEmbedder.encode`` forms them (longest first, bounded padded length),
and a session is opened per intra-op thread count a caller asks for.
"""

from __future__ import annotations

import contextlib
import logging
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from graphrag.ingest.query_encoder import OnnxQueryEncoder, QueryEncoderUnavailable, export_graph

log = logging.getLogger(__name__)

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
        from graphrag.ingest.embed import PADDED_CHARS_PER_BATCH, length_batches

        session = self._session(max(1, threads or self.threads))
        parts = [(batch, session.encode([texts[i] for i in batch]))
                 for batch in length_batches([len(t) for t in texts], self.batch_size, PADDED_CHARS_PER_BATCH)]
        if not parts:
            return np.zeros((0, 0), dtype=np.float32)
        out = np.empty((len(texts), parts[0][1].shape[1]), dtype=np.float32)
        for batch, vectors in parts:
            out[batch] = vectors
        return out
