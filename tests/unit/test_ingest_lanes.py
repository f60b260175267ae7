"""Ingestion throughput, pure logic: length batching of embedding inputs and the two model-stage lanes."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from graphrag.ingest.embed import length_batches
from graphrag.ingest.lanes import Jobs, run_model_stages
from graphrag.ingest.pipeline import batch_bounds


def test_length_batches_group_similar_lengths_longest_first_within_both_limits() -> None:
    lengths = [10, 900, 15, 1000, 950, 20, 12, 5]
    batches = length_batches(lengths, max_items=3, max_padded=3000)
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))  # each text once
    firsts = [lengths[b[0]] for b in batches]
    assert firsts == sorted(firsts, reverse=True)  # longest first
    for b in batches:
        assert len(b) <= 3
        assert lengths[b[0]] == max(lengths[i] for i in b)
        assert len(b) == 1 or len(b) * lengths[b[0]] <= 3000
    # The long texts do not share a batch with the short ones (which would all be padded to 1000).
    assert batches == [[3, 4, 1], [5, 2, 6], [0, 7]]


def test_length_batches_gives_an_overlong_text_a_batch_of_its_own_and_handles_nothing() -> None:
    assert length_batches([5000, 10, 10], max_items=64, max_padded=1000) == [[0], [1, 2]]
    assert length_batches([], max_items=8, max_padded=100) == []


def test_ingest_batches_ramp_up_and_down_around_full_batches() -> None:
    bounds = batch_bounds([1] * 1000, max_docs=256, max_units=1024)
    assert [b - a for a, b in bounds] == [32, 32, 64, 128, 256, 256, 116, 58, 29, 29]
    assert bounds[0][0] == 0 and bounds[-1][1] == 1000
    assert all(a2 == b1 for (_, b1), (a2, _) in zip(bounds, bounds[1:], strict=False))  # consecutive, no gap
    # One batch's worth: only the ramp up.
    assert batch_bounds([1] * 100, max_docs=256, max_units=1024) == [(0, 12), (12, 25), (25, 50), (50, 100)]


def test_ingest_batches_hold_to_the_size_limit_and_give_a_huge_document_its_own() -> None:
    # A batch closes once its text reaches 1,024 kB (here with its fourth 300 kB document); a 2 MB
    # document is a batch of its own. The first and last batches are then ramped.
    units = [300, 300, 300, 300, 2000, 300, 300, 300, 300]
    bounds = batch_bounds(units, max_docs=256, max_units=1024)
    assert all(sum(units[a:b]) < 1024 + max(units[a:b]) for a, b in bounds)
    assert [b - a for a, b in bounds] == [1, 1, 2, 1, 2, 1, 1]
    assert batch_bounds([], max_docs=256, max_units=1024) == []
    assert batch_bounds([5], max_docs=256, max_units=1024) == [(0, 1)]


def test_jobs_hand_out_each_number_once_across_threads() -> None:
    jobs = Jobs(500)
    taken: list[int] = []
    lock = threading.Lock()

    def worker() -> None:
        while (k := jobs.take()) is not None:
            with lock:
                taken.append(k)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(taken) == list(range(500))
    closed = Jobs(3)
    closed.close()
    assert closed.take() is None


@pytest.mark.parametrize("cores", [1, 2, 8])
def test_model_stages_run_every_job_once_and_the_extraction_lane_helps(cores: int) -> None:
    calls: list[tuple[int, int, str]] = []
    lane_busy = threading.Event()  # the embedding lane has started a job
    helper_took = threading.Event()  # the extraction lane has taken a job
    drained: list[str] = []

    def embed(k: int, threads: int) -> None:
        name = threading.current_thread().name
        if name.startswith("embed-lane") and not lane_busy.is_set():
            lane_busy.set()
            helper_took.wait(timeout=10)  # hold this job until the extraction lane has helped
        elif not name.startswith("embed-lane"):
            helper_took.set()
        calls.append((k, threads, name))

    def extract(k: int) -> str:
        if cores > 1:
            lane_busy.wait(timeout=10)
        return f"slice {k}"

    run = run_model_stages(6, embed, 3, extract, cores=cores,
                           on_drained=lambda: drained.append(threading.current_thread().name))
    assert run.extracted == ["slice 0", "slice 1", "slice 2"]  # in slice order
    assert sorted(k for k, _, _ in calls) == list(range(6))
    assert run.embed_s >= 0 and run.extract_s >= 0
    helped = [(k, t) for k, t, name in calls if not name.startswith("embed-lane")]
    assert run.embedded_by_extraction_lane == len(helped)
    assert helped and all(t == 1 for _, t in helped)  # a helping lane embeds with one thread
    assert len(drained) == 1  # told once, when everything was handed out
    if cores == 1:
        assert len(helped) == 6
    else:
        assert [t for _, t, name in calls if name.startswith("embed-lane")][:1] == [cores - 1]


def test_the_embedding_lane_takes_slices_left_when_its_jobs_are_done() -> None:
    """Extraction-heavy batches: the embedding lane extracts the slices nobody has taken yet, so
    neither core waits for the other stage."""
    first_slice = threading.Event()
    lanes: dict[int, str] = {}

    def extract(k: int) -> int:
        lanes[k] = threading.current_thread().name
        if k == 0:
            first_slice.set()
            # Hold the extraction lane on slice 0 until the embedding lane has taken the rest.
            for _ in range(1000):
                if len(lanes) == 4:
                    break
                threading.Event().wait(0.01)
        return k * 10

    def embed(k: int, threads: int) -> None:
        first_slice.wait(timeout=10)

    run = run_model_stages(1, embed, 4, extract, cores=2)
    assert run.extracted == [0, 10, 20, 30]
    assert run.extracted_by_embedding_lane == 3
    assert {lanes[k] for k in (1, 2, 3)} == {next(n for n in lanes.values() if n.startswith("embed-lane"))}


def test_model_stages_stop_taking_jobs_when_a_stage_fails() -> None:
    started: list[int] = []

    def embed(k: int, threads: int) -> None:
        started.append(k)
        if k == 1:
            raise ValueError("model broke")

    drained: list[bool] = []
    with pytest.raises(ValueError, match="model broke"):
        run_model_stages(50, embed, 1, lambda k: "x", cores=2, on_drained=lambda: drained.append(True))
    assert len(started) < 50
    assert drained == []  # a failed batch is not drained: the next one must not start on its account

    def broken_extract(k: int) -> Any:
        raise RuntimeError("extractor broke")

    with pytest.raises(RuntimeError, match="extractor broke"):
        run_model_stages(3, lambda k, t: None, 2, broken_extract, cores=1)
