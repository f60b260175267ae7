"""The embedding model and the token counter are used from several threads at once in the API
(ingest and search side by side). A shared fast tokenizer broke batches under that load: a token
count (no padding) switched padding off under a batch encode ("Unable to create tensor ...")."""

from __future__ import annotations

import threading

import numpy as np

SHORT, LONG = "a b c", "a much longer text with many words in it, so a batch needs padding " * 3


def test_encode_and_count_from_many_threads(models: object) -> None:
    embedder, counter = models.embedder, models.counter  # type: ignore[attr-defined]
    expected = embedder.encode([SHORT, LONG])
    expected_counts = counter.count(["one two three four", "x"])
    errors: list[str] = []
    wrong: list[str] = []

    def encoder() -> None:
        for _ in range(150):
            try:
                got = embedder.encode([SHORT, LONG])
                if not np.allclose(got, expected, atol=1e-5):
                    wrong.append("embedding differs from the sequential one")
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(repr(exc)[:200])

    def count() -> None:
        for _ in range(3000):
            if counter.count(["one two three four", "x"]) != expected_counts:
                wrong.append("token count differs")

    threads = [threading.Thread(target=encoder) for _ in range(2)] + [threading.Thread(target=count) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and wrong == [], (errors[:3], wrong[:3])
