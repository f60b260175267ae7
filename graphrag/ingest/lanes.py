"""How ingestion spreads its two model stages over the CPU cores.

Embedding and entity extraction of a batch run side by side in two lanes (threads), over two job
lists: extraction slices and embedding jobs. The extraction lane extracts slice after slice and then
helps with the embedding jobs nobody has taken yet; the embedding lane embeds job after job and then
helps with the slices left. Both lanes stay busy until the batch is done, whichever stage is the
heavier, and neither waits for the other.

When both lists are handed out, only the jobs in flight are left (one per lane at most): the caller
is told (``on_drained``), so that the next batch can start on the core that is free instead of that
core waiting for the batch's last job.

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
    """What :func:`run_model_stages` returns: each slice's extraction and each stage's seconds."""

    extracted: list[T]  # extract(k) for every slice k, in slice order
    extract_s: float  # from the start until the last slice was extracted
    embed_s: float  # from the start until the last embedding job was done
    embedded_by_extraction_lane: int  # embedding jobs the extraction lane took over
    extracted_by_embedding_lane: int  # slices the embedding lane took over


def run_model_stages(embed_jobs: int, embed: Callable[[int, int], None], extract_slices: int,
                     extract: Callable[[int], T], *, cores: int | None = None,
                     on_drained: Callable[[], None] | None = None) -> StageRun[T]:
    """Run ``extract(k)`` for ``k < extract_slices`` and ``embed(k, threads)`` for ``k < embed_jobs``
    side by side.

    With two cores or more, an embedding lane (``cores - 1`` threads per embedding call) starts on
    the embedding jobs while this thread takes the slices; each lane then takes what is left of the
    other list (embedding with one thread). On one core everything runs here, slices first.
    ``on_drained()`` is called once, from a lane, when every job and slice has been handed out (not
    when a job failed).
    Blocking: call it from a worker thread. If a job fails, no further jobs are started and the
    error is raised once both lanes have stopped.
    """
    cores = cores or available_cores()
    embeds, slices = Jobs(embed_jobs), Jobs(extract_slices)
    results: list[T | None] = [None] * extract_slices
    start = time.perf_counter()
    ends: dict[str, float] = {}
    ends_lock = threading.Lock()
    drained, failed = Jobs(1), threading.Event()  # drained hands out one token: who reports it

    def finished(stage: str) -> None:
        with ends_lock:
            ends[stage] = max(ends.get(stage, 0.0), time.perf_counter() - start)

    def lane(first: str, threads: int) -> int:
        """Take jobs of ``first`` kind, then of the other; returns how many of the other it took."""
        helped = 0
        try:
            for kind in (first, "extract" if first == "embed" else "embed"):
                while True:
                    k = (embeds if kind == "embed" else slices).take()
                    if k is None:
                        break
                    if kind == "embed":
                        embed(k, threads if kind == first else 1)
                    else:
                        results[k] = extract(k)
                    finished(kind)
                    helped += kind != first
        except BaseException:
            failed.set()  # the other lane stops after its job, and the batch was not drained
            embeds.close()
            slices.close()
            raise
        if on_drained is not None and not failed.is_set() and drained.take() == 0:  # once, by the first lane here
            on_drained()
        return helped

    if cores < 2:
        extra_embeds = lane("extract", 1)
        extra_slices = 0
    else:
        with ThreadPoolExecutor(1, thread_name_prefix="embed-lane") as pool:
            other = pool.submit(lane, "embed", cores - 1)
            try:
                extra_embeds = lane("extract", 1)
            finally:
                extra_slices = other.result()  # the embedding lane's error, if any, surfaces here
    return StageRun(list(results),  # type: ignore[arg-type]  # every slice ran (else we raised)
                    ends.get("extract", 0.0), ends.get("embed", 0.0), extra_embeds, extra_slices)
