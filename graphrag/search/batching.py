"""Query-time embedding with natural batching: texts that arrive while the model is busy are embedded
together in the next model call.

One call at a time runs the model (in a worker thread). A request that arrives when the model is idle
starts a call at once with just its texts, so a lone request waits for nothing; requests that arrive
during a call queue up and share the next one. Under concurrency this replaces N small model calls,
each competing for the same cores with its own threads, by a few batched ones.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

import numpy as np

log = logging.getLogger(__name__)


class EmbeddingBatcher:
    """``await batcher(texts)`` -> one unit vector per text, like ``Embedder.aencode_queries``."""

    def __init__(self, encode: Callable[[list[str]], Awaitable[np.ndarray]], max_texts: int = 64) -> None:
        self._encode = encode
        self._max_texts = max_texts
        self._pending: list[tuple[list[str], asyncio.Future[np.ndarray]]] = []
        self._worker: asyncio.Task[None] | None = None

    async def __call__(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return await self._encode(texts)
        loop = asyncio.get_running_loop()
        if self._worker is not None and self._worker.get_loop() is not loop:
            self._pending, self._worker = [], None  # a router reused on a new event loop starts afresh
        future: asyncio.Future[np.ndarray] = loop.create_future()
        self._pending.append((list(texts), future))
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._pending:
            batch: list[tuple[list[str], asyncio.Future[np.ndarray]]] = []
            count = 0
            while self._pending and (not batch or count + len(self._pending[0][0]) <= self._max_texts):
                item = self._pending.pop(0)
                batch.append(item)
                count += len(item[0])
            texts = [t for ts, _ in batch for t in ts]
            try:
                vectors = await self._encode(texts)
            except Exception as exc:  # noqa: BLE001 - every waiter gets the model's error
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                continue
            start = 0
            for ts, future in batch:
                if not future.done():  # a cancelled request no longer waits
                    future.set_result(vectors[start:start + len(ts)])
                start += len(ts)
