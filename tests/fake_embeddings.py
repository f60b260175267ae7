"""A fake OpenAI-compatible ``POST /v1/embeddings`` server on loopback, for tests.

Vectors are deterministic and meaningful enough to search with: each word (lower-cased, a crude
plural ``s`` dropped) adds a fixed pseudo-random direction, so texts sharing words are close. The test
controls it: fail the next N requests with 500, fail every request after a count, answer with another
dimension, and read how many requests and texts it served.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np


def word_vector(word: str, dim: int) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).standard_normal(dim)


def fake_vector(text: str, dim: int) -> list[float]:
    vec = np.zeros(dim)
    for word in re.findall(r"\w+", text.lower()):
        vec += word_vector(word[:-1] if len(word) > 3 and word.endswith("s") else word, dim)
    if not vec.any():
        vec = word_vector("", dim)
    return (vec / np.linalg.norm(vec)).tolist()


class FakeEmbeddings:
    """``with FakeEmbeddings(dim=64) as fake: ... fake.base_url``."""

    def __init__(self, dim: int = 64, api_key: str | None = None) -> None:
        self.dim = dim
        self.api_key = api_key
        self.requests = 0
        self.texts = 0
        self.fail_next = 0  # answer the next N requests with 500
        self.fail_after: int | None = None  # answer every request after this many texts with 500
        self.answer_dim: int | None = None  # answer with vectors of this dimension instead
        self.lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet test output
                pass

            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
                status, payload = fake.answer(self.path, self.headers.get("authorization"), body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, path: str, auth: str | None, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self.lock:
            self.requests += 1
            if path != "/v1/embeddings":
                return 404, {"error": {"message": "not found"}}
            if self.api_key and auth != f"Bearer {self.api_key}":
                return 401, {"error": {"message": "bad key"}}
            if self.fail_next > 0:
                self.fail_next -= 1
                return 500, {"error": {"message": "overloaded"}}
            texts = body.get("input")
            if isinstance(texts, str):
                texts = [texts]
            if self.fail_after is not None and self.texts >= self.fail_after:
                return 500, {"error": {"message": "down"}}
            self.texts += len(texts)
            dim = self.answer_dim or self.dim
        data = [{"object": "embedding", "index": i, "embedding": fake_vector(t, dim)} for i, t in enumerate(texts)]
        return 200, {"object": "list", "data": data, "model": body.get("model"),
                     "usage": {"prompt_tokens": 0, "total_tokens": 0}}

    def __enter__(self) -> FakeEmbeddings:
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
