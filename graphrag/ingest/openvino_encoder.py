"""Chunk embeddings by OpenVINO: a sentence-transformers model's transformer, converted when the
encoder is built and run with bfloat16 matrix products on CPUs that have them, float32 elsewhere.

Ingestion spends most of its CPU embedding chunks. On a CPU with native bfloat16 (AVX-512 BF16, AMX)
OpenVINO runs the same model as PyTorch's bfloat16 autocast in about a fifth less CPU (its attention
and layer kernels are fused for bfloat16, where PyTorch's attention falls back to float32 products),
with vectors as close to float32 as PyTorch's (docs/benchmarks.md). In float32 it takes the same CPU
as PyTorch at one thread and keeps an ingest's peak memory about 0.5 GB lower, so ``auto`` uses it
wherever it is installed.

The conversion traces the loaded model through OpenVINO's PyTorch frontend (about a second, once per
process, while the ingestion models load or else on the first chunk batch), so there is no file to
keep in step with the model, and nothing is reported to OpenVINO's telemetry: ``ov.convert_model``
would, and so would a plain ``import openvino`` (:func:`import_openvino` imports it with the
telemetry package hidden). Only the plain layouts are supported (a Transformer, mean or CLS pooling,
an optional Normalize), and the encoder must reproduce the model's own float32 vectors on probe
texts; anything else raises :class:`QueryEncoderUnavailable` and the caller keeps PyTorch.

Threads: the model is compiled with one stream per core, one thread each, and has one infer request per
stream, shared by every caller: concurrent callers (the ingest's two lanes) run side by side, a call
that asks for more threads spreads its batches over that many streams, and memory stays bounded
however many threads call (each request keeps the buffers of the largest batch it ran).
"""

from __future__ import annotations

import logging
import queue
import sys
import warnings
from collections import deque
from typing import Any

import numpy as np

from graphrag.ingest.query_encoder import QueryEncoderUnavailable, TransformerRunner, hidden_states_module, pool

log = logging.getLogger(__name__)

#: Input shapes whose compiled kernels OpenVINO keeps (default 5,000). A model converted by
#: ``ov.convert_model`` grew by about 1 MB for every new batch shape without this cap; converted as
#: here, memory levels off at about 190 MB once the largest batches have run, capped or not, and the
#: cap costs no measurable CPU: it bounds the cache for shapes nobody measured.
SHAPE_CACHE_ENTRIES = 64

#: Cosine the vectors must reach against the model's float32 ones on the probes (bfloat16 products
#: give 0.99997 on the packaged MiniLM).
_AGREEMENT = 0.9995
_PROBES = [
    "What does the graph leg add to a hybrid search?",
    "Aspirin lowers the risk of stroke in adults with atrial fibrillation (HR 0.78; 95% CI 0.65-0.94).",
    "`Arc<Mutex<T>>` shares mutable state between threads; `Rc<RefCell<T>>` does it within one.",
]


def openvino_available() -> bool:
    """Whether the ``openvino`` package is installed here (found, not imported: the import takes
    about 0.2 s, which a command that never embeds a chunk should not pay)."""
    import importlib.util

    return importlib.util.find_spec("openvino") is not None


def import_openvino() -> Any:
    """``import openvino`` without reporting it: the package's converter sends an "import" event to
    OpenVINO's usage telemetry (Google Analytics, from a forked process) when it is imported, unless the
    user opted out, and a service must not call home. That converter falls back to its own no-op
    stub when ``openvino_telemetry`` cannot be imported, so the import runs with that package hidden
    (and put back afterwards for anyone else's use)."""
    if "openvino" in sys.modules:
        return sys.modules["openvino"]
    saved = sys.modules.get("openvino_telemetry")
    sys.modules["openvino_telemetry"] = None  # type: ignore[assignment]  # None makes its import fail
    try:
        import openvino
    finally:
        del sys.modules["openvino_telemetry"]
        if saved is not None:
            sys.modules["openvino_telemetry"] = saved
    return openvino


class OpenVinoEncoder(TransformerRunner):
    """``encode(batches of texts)`` -> unit-length float32 rows, the model's vectors computed by OpenVINO."""

    def __init__(self, model: Any, *, precision: str = "bfloat16", cores: int = 1,
                 agreement: float | None = _AGREEMENT) -> None:
        """Convert ``model`` (a loaded SentenceTransformer, in float32) and compile it for the CPU.

        ``precision``: ``bfloat16`` or ``float32`` products; ``cores``: streams of one thread each (the
        most threads one call can use, and the most calls that run at once); ``agreement``: the least
        cosine against the model's float32 vectors on the probes (None: not checked).
        Raises QueryEncoderUnavailable."""
        try:
            ov = import_openvino()
            import torch
            from openvino.frontend import FrontEndManager
            from openvino.frontend.pytorch.ts_decoder import TorchScriptPythonDecoder
        except ImportError as exc:
            raise QueryEncoderUnavailable(f"openvino is not installed ({exc})") from None
        super().__init__(model)
        sample = model[0].tokenizer(["probe", "a second probe"], padding=True, return_tensors="pt")
        try:
            # The PyTorch frontend itself, not ov.convert_model: that one reports every conversion to
            # OpenVINO's telemetry unless the user opted out, and a service must not call home.
            with torch.inference_mode(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the tracer's notes on control flow it froze
                decoder = TorchScriptPythonDecoder(hidden_states_module(model),
                                                   example_input=tuple(sample[name] for name in self._inputs))
                frontend = FrontEndManager().load_by_framework("pytorch")
                converted = frontend.convert(frontend.load(decoder))
            self.dim = int(converted.outputs[0].get_partial_shape()[2].get_length())
            self.streams = max(1, cores)
            self._compiled = ov.Core().compile_model(converted, "CPU", {
                "INFERENCE_PRECISION_HINT": "bf16" if precision == "bfloat16" else "f32",
                "NUM_STREAMS": self.streams,
                "INFERENCE_NUM_THREADS": self.streams,  # one thread a stream
                # The lanes and PostgreSQL/Neo4j share these cores: threads must not be pinned.
                "ENABLE_CPU_PINNING": False,
                "CPU_RUNTIME_CACHE_CAPACITY": SHAPE_CACHE_ENTRIES,
            })
        except Exception as exc:  # noqa: BLE001 - any conversion failure means: keep PyTorch
            raise QueryEncoderUnavailable(f"OpenVINO conversion failed: {type(exc).__name__}: {exc}") from None
        # One infer request per stream, shared by all callers: the API embeds from many threads.
        self._requests: queue.Queue[Any] = queue.Queue()
        for _ in range(self.streams):
            self._requests.put(self._compiled.create_infer_request())
        if agreement is not None:
            self._check(model, lambda texts: self.encode([texts]), _PROBES, agreement, "OpenVINO")

    def encode(self, batches: list[list[str]], threads: int = 1) -> np.ndarray:
        """The vectors of every text of ``batches`` (each a model batch, padded to its longest text),
        as rows in the order of the texts; ``threads``: how many batches run at once (at most
        :attr:`streams`, and fewer while other callers hold the rest). Tokenising the next batch
        overlaps the running ones."""
        count = sum(len(b) for b in batches)
        out = np.empty((count, self.dim), dtype=np.float32)
        starts = np.cumsum([0, *[len(b) for b in batches]])
        requests = self._take(min(max(1, threads), len(batches)))
        idle = list(requests)
        running: deque[tuple[Any, int, np.ndarray]] = deque()

        def finish_one() -> None:
            request, k, mask = running.popleft()
            request.wait()
            out[starts[k]:starts[k + 1]] = pool(request.get_output_tensor(0).data, mask, self._pooling)
            idle.append(request)

        try:
            for k, batch in enumerate(batches):
                feed = self._feed(batch)
                if not idle:
                    finish_one()
                request = idle.pop()
                request.start_async(self._positional(feed))
                running.append((request, k, feed["attention_mask"]))
            while running:
                finish_one()
        finally:
            # After a failure, requests may still be running: the next caller must find them idle.
            for request, _, _ in running:
                try:
                    request.wait()
                except Exception:  # noqa: BLE001, S110 - the first failure is the one raised
                    pass
            for request in requests:
                self._requests.put(request)
        return out

    def _take(self, wanted: int) -> list[Any]:
        """Up to ``wanted`` infer requests of the pool (one per stream), at least one (waiting for it).
        A request keeps the buffers of the largest batch it ran, so there are never more than streams."""
        taken = [self._requests.get()]
        while len(taken) < wanted:
            try:
                taken.append(self._requests.get_nowait())
            except queue.Empty:
                break
        return taken

    def _positional(self, feed: dict[str, np.ndarray]) -> list[np.ndarray]:
        """The inputs in the order the converted module takes them (its inputs have no names)."""
        return [feed[name] for name in self._inputs]
