"""A fast encoder for short texts: a sentence-transformers model's transformer run by ONNX Runtime.

A search embeds one short query (or a few, batched). For such inputs PyTorch's eager mode spends most
of its time on per-operator overhead; ONNX Runtime runs the same graph, fused, in a fraction of it.
Long batches (ingestion) are not faster there: chunks go through OpenVINO or PyTorch
(openvino_encoder.py, which shares this module's tokenising, pooling and agreement check).

The graph is exported from the loaded model when the encoder is built (through a temporary file) (about a second,
needs the ``onnx`` package), so there is no file to keep in step with the model. Pooling and
normalisation are done here the way the model's own modules do them; only the plain layouts are
supported (a Transformer, mean or CLS pooling, an optional Normalize). Anything else, or an encoder
whose output differs from the model's on a probe sentence, is refused and the caller keeps PyTorch.
"""

from __future__ import annotations

import copy
import logging
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

#: Cosine similarity the ONNX vectors must reach against the model's own on the probe texts.
_AGREEMENT = 0.9999
_PROBES = ["What does the graph leg add to a hybrid search?", "Aspirin lowers the risk of stroke in adults."]


class QueryEncoderUnavailable(RuntimeError):
    """The model cannot be run by ONNX Runtime (or OpenVINO) here: a missing package, an unsupported
    layout, a failed export or conversion, or vectors that differ from the model's."""


class TransformerRunner:
    """What an encoder that runs a SentenceTransformer's transformer outside PyTorch shares: the
    model's tokenisation (a tokenizer of its own, since fast tokenizers are not thread-safe), its
    pooling, and the check of its vectors against the model's own."""

    def __init__(self, model: Any) -> None:
        self._pooling = _pooling_mode(model)
        transformer = model[0]
        self._max_length = int(model.max_seq_length or 512)
        self._tokenizer = copy.deepcopy(transformer.tokenizer)
        self._tokenizer_lock = threading.Lock()
        self._lower = bool(getattr(transformer, "do_lower_case", False))
        self._inputs = _input_names(transformer.tokenizer)
        #: The least cosine of this encoder's vectors against the model's on the probes (NaN: not checked).
        self.agreement = float("nan")

    def _feed(self, texts: list[str]) -> dict[str, np.ndarray]:
        """The model inputs of one batch, as the model's own ``preprocess`` makes them (int64)."""
        if self._lower:
            texts = [t.lower() for t in texts]
        with self._tokenizer_lock:
            features = self._tokenizer([t.strip() for t in texts], padding=True, truncation="longest_first",
                                       max_length=self._max_length, return_tensors="np")
        return {name: np.asarray(features[name], dtype=np.int64) for name in self._inputs}

    def _check(self, model: Any, vectors: Callable[[list[str]], np.ndarray], probes: list[str], least: float,
               runtime: str) -> None:
        """Compare ``vectors(probes)`` with the model's own float32 vectors; raise below ``least``."""
        reference = np.asarray(model.encode(probes, normalize_embeddings=True, convert_to_numpy=True,
                                            show_progress_bar=False))
        self.agreement = float((reference * vectors(probes)).sum(axis=1).min())
        if self.agreement < least:
            raise QueryEncoderUnavailable(f"{runtime} vectors differ from the model's (cosine {self.agreement:.6f})")


class OnnxQueryEncoder(TransformerRunner):
    """``encode(texts)`` -> unit-length float32 rows, the same vectors as the model's ``encode``."""

    def __init__(self, model: Any, *, threads: int = 1, graph: bytes | None = None,
                 agreement: float | None = _AGREEMENT, probes: list[str] | None = None) -> None:
        """Export ``model`` (a loaded SentenceTransformer) and open an ONNX Runtime session on it.

        ``threads``: intra-op threads (0: as many as cores). One by default: a query is embedded while
        the keyword and graph legs already run, so a second thread saves no latency, and under load it
        costs a millisecond of CPU per query (2 cores, 100k chunks: 50.6 -> 52.4 ``auto`` QPS at
        concurrency 8 with one thread, and no slower at concurrency 1). ``graph``: an ONNX graph of the model's
        transformer to run instead of exporting one (:func:`export_graph`, possibly transformed);
        ``agreement``: the least cosine its vectors must reach against the model's on ``probes``
        (None: two short sentences); ``agreement=None`` skips the check (a graph already checked,
        e.g. a second session on it). Raises QueryEncoderUnavailable."""
        try:
            import onnxruntime as ort
        except ImportError as exc:  # the packages are dependencies; a trimmed install keeps PyTorch
            raise QueryEncoderUnavailable(f"onnxruntime is not installed ({exc})") from None
        super().__init__(model)
        if graph is None:
            graph = export_graph(model)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle threads must not spin: the API serves other requests (and PostgreSQL and Neo4j) on the same cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self._session = ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"])
        if agreement is not None:
            self._check(model, self.encode, probes or _PROBES, agreement, "ONNX")

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows, one per text (normalised as ``LocalEmbedder.encode`` does)."""
        feed = self._feed(texts)
        return pool(self._session.run(None, feed)[0], feed["attention_mask"], self._pooling)


def pool(hidden: np.ndarray, attention_mask: np.ndarray, mode: str) -> np.ndarray:
    """Unit-length float32 sentence vectors from a batch's last hidden states, pooled the way the
    model's Pooling module does (``mean`` over the real tokens, or the ``cls`` token)."""
    if mode == "cls":
        vectors = hidden[:, 0]
    else:
        mask = attention_mask[..., None].astype(np.float32)
        vectors = (hidden * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1.0, norms)


def _input_names(tokenizer: Any) -> list[str]:
    """The model inputs the tokenizer gives, in the order the exported graph takes them."""
    sample = tokenizer(["probe"], return_tensors="np")
    return [name for name in ("input_ids", "attention_mask", "token_type_ids") if name in sample]


def export_graph(model: Any) -> bytes:
    """The ONNX graph (serialised) of a loaded SentenceTransformer's transformer: its inputs by name
    (batch and token axes dynamic) to its last hidden states. Raises QueryEncoderUnavailable."""
    try:
        import torch
    except ImportError as exc:
        raise QueryEncoderUnavailable(f"torch is not installed ({exc})") from None
    transformer = model[0]
    model_inputs = _input_names(transformer.tokenizer)
    sample = transformer.tokenizer(["probe"], return_tensors="pt")
    wrapped = hidden_states_module(model)
    try:
        with tempfile.TemporaryDirectory(prefix="graphrag-onnx-") as folder, torch.inference_mode(), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on control flow it froze
            path = Path(folder) / "model.onnx"
            torch.onnx.export(
                wrapped, tuple(sample[name] for name in model_inputs), str(path), input_names=model_inputs,
                output_names=["hidden"], dynamic_axes={name: {0: "batch", 1: "tokens"} for name in model_inputs},
                opset_version=17, dynamo=False)
            return path.read_bytes()
    except Exception as exc:  # noqa: BLE001 - any export failure means: keep PyTorch
        raise QueryEncoderUnavailable(f"ONNX export failed: {type(exc).__name__}: {exc}") from None


def hidden_states_module(model: Any) -> Any:
    """A loaded SentenceTransformer's transformer as a module that takes its inputs by position (in
    :func:`_input_names` order) and returns the last hidden states, for exporters and converters.

    In eval mode, like the model: an exporter puts the module it is given back in the mode it found it
    in, and a new module starts in training mode, which would switch on the model's dropout for every
    later encode (found when chunk vectors changed after an export)."""
    import torch

    transformer = model[0]
    model_inputs = _input_names(transformer.tokenizer)
    auto_model = transformer.auto_model.eval()

    class HiddenStates(torch.nn.Module):
        """The transformer with positional inputs, returning its last hidden states."""

        def __init__(self) -> None:
            super().__init__()
            self.model = auto_model

        def forward(self, *args: Any) -> Any:
            return self.model(**dict(zip(model_inputs, args, strict=True))).last_hidden_state

    return HiddenStates().eval()


def _pooling_mode(model: Any) -> str:
    """``mean`` or ``cls`` for a [Transformer, Pooling, (Normalize)] model; refuses anything else."""
    names = [type(m).__name__ for m in model]
    if names[:2] != ["Transformer", "Pooling"] or any(n != "Normalize" for n in names[2:]):
        raise QueryEncoderUnavailable(f"unsupported module layout {names}")
    config = model[1].get_config_dict()
    # sentence-transformers 5 names one mode (``pooling_mode: "mean"``); older ones set flags.
    modes = ([config["pooling_mode"]] if isinstance(config.get("pooling_mode"), str)
             else [key.removeprefix("pooling_mode_") for key, on in config.items()
                   if key.startswith("pooling_mode_") and on is True])
    if modes in (["mean"], ["mean_tokens"]):
        return "mean"
    if modes in (["cls"], ["cls_token"]):
        return "cls"
    raise QueryEncoderUnavailable(f"unsupported pooling {modes}")
