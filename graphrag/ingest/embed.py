"""Sentence-transformers embeddings: batched, normalised, run off the event loop."""

from __future__ import annotations

import asyncio
import copy
import logging
import os
import threading
from pathlib import Path

import numpy as np

from graphrag.errors import ConfigurationError

log = logging.getLogger(__name__)


class Embedder:
    """Loads a local sentence-transformers model once; ``model_name`` is stored with every chunk."""

    def __init__(self, model_path: str, *, batch_size: int = 64, dim: int | None = None) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a local path must never turn into a download
        if not Path(model_path).exists():
            raise ConfigurationError(f"GRAPHRAG_EMBEDDING_MODEL: no model folder at {model_path}")
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bar on every start
        # Token counting of long texts warns about the model limit; chunking handles that limit itself.
        hf_logging.set_verbosity_error()
        self.model = SentenceTransformer(model_path, device="cpu", local_files_only=True)
        self.batch_size = batch_size
        get_dim = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        self.dim = int(get_dim() or 0)
        if dim is not None and self.dim != dim:
            raise ConfigurationError(
                f"GRAPHRAG_EMBEDDING_MODEL gives {self.dim}-dim vectors but the schema expects {dim} (GRAPHRAG_EMBEDDING_DIM)"
            )
        self.max_seq_length = int(self.model.max_seq_length)
        # A fast tokenizer is not thread-safe: each call sets padding/truncation on the one Rust object,
        # so a token count (no padding) racing an encode (padding) broke batches ("expected sequence of
        # length 25 ... got 18") under concurrent ingest and search. Encodes take turns (two forward
        # passes on the same cores gain nothing), and token counting gets a tokenizer of its own.
        self._lock = threading.Lock()
        self._counting_tokenizer: object | None = None
        name = Path(model_path).name
        # The packaged MiniLM lives in a folder called "model": name it after what it is.
        self.model_name = "all-MiniLM-L6-v2" if name == "model" and "minilm" in model_path.lower() else name

    @property
    def tokenizer(self) -> object:
        """A copy of the model's tokenizer for counting tokens (safe beside :meth:`encode`)."""
        if self._counting_tokenizer is None:
            self._counting_tokenizer = copy.deepcopy(self.model.tokenizer)
        return self._counting_tokenizer

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            vectors = self.model.encode(
                texts, batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    async def aencode(self, texts: list[str]) -> np.ndarray:
        """:meth:`encode` in a worker thread, so the event loop keeps serving."""
        return await asyncio.to_thread(self.encode, texts)
