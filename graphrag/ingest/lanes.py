"""How ingestion spreads its two model stages over the CPU cores.

Embedding and entity extraction of a batch run side by side in two lanes (threads): the embedding
lane embeds slice after slice; the extraction lane extracts every slice and then helps embedding
with the slices nobody has taken yet. Both lanes stay busy until the batch is done, whichever stage
is the heavier, and neither waits for the other.

Each embedding call names its thread count: the embedding lane takes all cores but the one the
extraction lane works on, and a lane helping out takes one. One thread per model call is also the
cheapest way to run a small model on few cores: it spends no CPU time keeping threads in step.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


def available_cores() -> int:
    """The CPU cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class Jobs:
    """Job numbers ``0..n-1`` handed out once each, in order, to whichever lane asks first."""

    def __init__(self, n: int) -> None:
        self._n = n
        self._next = 0
        self._lock = threading.Lock()

    def take(self) -> int | None:
        """The next job not yet taken, or None when all are (or the jobs were closed)."""
        with self._lock:
            if self._next >= self._n:
                return None
            k = self._next
            self._next += 1
            return k

    def close(self) -> None:
        """Hand out no more jobs (a lane failed: the others stop after their current job)."""
        with self._lock:
            self._next = self._n


@dataclass
class StageRun(Generic[T]):
    """What :func:`run_model_stages` returns: the extraction's result and each stage's seconds."""

    extracted: T
    extract_s: float  # from the start until extraction was done
    embed_s: float  # from the start until the last embedding job was done
    embedded_by_extraction_lane: int  # embedding jobs the extraction lane took over


def run_model_stages(embed_jobs: int, embed: Callable[[int, int], None], extract: Callable[[], T], *,
                     cores: int | None = None) -> StageRun[T]:
    """Run ``extract()`` and the embedding jobs ``embed(k, threads)`` for ``k < embed_jobs`` side by side.

    With two cores or more, an embedding lane (``cores - 1`` threads per call) starts on the jobs at
    once while this thread extracts and then takes the jobs left (one thread per call). On one core
    the stages run one after the other. Blocking: call it from a worker thread. If either stage
    fails, no further jobs are started and the error is raised once both lanes have stopped.
    """
    cores = cores or available_cores()
    jobs = Jobs(embed_jobs)
    start = time.perf_counter()

    def embed_lane(threads: int) -> tuple[float | None, int]:
        last, done = None, 0
        try:
            while (k := jobs.take()) is not None:
                embed(k, threads)
                last, done = time.perf_counter(), done + 1
        except BaseException:
            jobs.close()
            raise
        return last, done

    def extract_first() -> tuple[T, float]:
        try:
            out = extract()
        except BaseException:
            jobs.close()
            raise
        return out, time.perf_counter() - start

    if cores < 2:
        extracted, extract_s = extract_first()
        last, helped = embed_lane(1)
        ends = [last]
    else:
        with ThreadPoolExecutor(1, thread_name_prefix="embed-lane") as pool:
            lane = pool.submit(embed_lane, cores - 1)
            try:
                extracted, extract_s = extract_first()
                last, helped = embed_lane(1)
            finally:
                other_last, _ = lane.result()  # the embedding lane's error, if any, surfaces here
        ends = [last, other_last]
    finished = [t for t in ends if t is not None]
    embed_s = (max(finished) - start) if finished else 0.0
    return StageRun(extracted, extract_s, embed_s, helped)
