"""Chunk embeddings by OpenVINO (graphrag/ingest/openvino_encoder.py) with the packaged model: the
model's vectors whatever the batching and threads, the ``auto`` choice, the fall-back to PyTorch, and
an ingest into the real stores whose vectors are the model's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag.errors import ConfigurationError
from graphrag.ingest.embed import LocalEmbedder, parse_spec, resolve_runtime
from graphrag.ingest.openvino_encoder import OpenVinoEncoder
from graphrag.ingest.query_encoder import QueryEncoderUnavailable, export_graph
from graphrag.models import Chunk

TEXTS = [
    "Aspirin lowers the risk of stroke in adults with atrial fibrillation.",
    "0-dimensional biomaterials lack inductive properties.",
    "`Arc<Mutex<T>>` shares state between threads (see chapter 16.3).",
    "Ünïcode, punctuation (and brackets) — and a dash",
    "short",
    "word " * 400,  # longer than the model's limit: truncated the same way
] + [f"Sentence {i} about proteins, cells and the genes that code for them. " * (i % 5 + 1) for i in range(30)]


@pytest.fixture(scope="module")
def reference() -> tuple[LocalEmbedder, np.ndarray]:
    """A float32 PyTorch embedder (the model's own vectors) and its vectors of TEXTS."""
    torch_embedder = LocalEmbedder(parse_spec(None), precision="float32", runtime="torch")
    return torch_embedder, torch_embedder.encode(TEXTS)


@pytest.mark.parametrize("precision", ["float32", "bfloat16"])
def test_openvino_chunk_vectors_are_the_models(reference: tuple[LocalEmbedder, np.ndarray], precision: str) -> None:
    _, expected = reference
    embedder = LocalEmbedder(parse_spec(None), precision=precision, runtime="openvino")
    encoder = embedder.chunk_encoder()
    assert isinstance(encoder, OpenVinoEncoder) and embedder.runtime == "openvino"
    assert encoder.agreement >= 0.9995  # checked against the model when it was built
    # float32 reproduces PyTorch; bfloat16 products stay as close as PyTorch's own bfloat16 (0.9999+).
    floor = 0.99999 if precision == "float32" else 0.9995
    for threads in (1, 2):
        got = embedder.encode(TEXTS, threads=threads)
        assert got.dtype == np.float32 and got.shape == expected.shape
        assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
        assert float((got * expected).sum(axis=1).min()) > floor
    alone = np.vstack([embedder.encode([t]) for t in TEXTS[:6]])  # no padding: the same vectors
    assert float((alone * expected[:6]).sum(axis=1).min()) > floor
    assert embedder.encode([]).shape == (0, embedder.dim)


def test_openvino_serves_concurrent_callers(reference: tuple[LocalEmbedder, np.ndarray]) -> None:
    """The ingest's two lanes call encode at once, and the API from many worker threads: each caller
    gets its own texts' vectors, and the encoder keeps one infer request per stream however many
    threads call (a request holds the buffers of the largest batch it ran)."""
    _, expected = reference
    embedder = LocalEmbedder(parse_spec(None), runtime="openvino")
    callers = 6
    shares = [list(range(k, len(TEXTS), callers)) for k in range(callers)]
    results: dict[int, np.ndarray] = {}
    errors: list[str] = []

    def caller(k: int) -> None:
        try:
            for _ in range(4):
                results[k] = embedder.encode([TEXTS[i] for i in shares[k]], threads=1 + k % 2)
        except Exception as exc:  # noqa: BLE001 - asserted below
            errors.append(repr(exc))

    threads = [threading.Thread(target=caller, args=(k,)) for k in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for k, rows in enumerate(shares):
        assert float((results[k] * expected[rows]).sum(axis=1).min()) > 0.9995
    encoder = embedder.chunk_encoder()
    assert encoder._requests.qsize() == encoder.streams  # all returned, none made beyond one per stream


#: Run in a fresh interpreter (``import openvino`` happens once per process): records every call into
#: OpenVINO's telemetry, then imports openvino plainly or embeds through the encoder.
_TELEMETRY_PROBE = """
import json, sys
import openvino_telemetry
calls = []
for name in ("__init__", "send_event", "start_session", "end_session", "send_error", "send_stack_trace"):
    setattr(openvino_telemetry.Telemetry, name, lambda *a, _name=name, **k: calls.append(_name))
if sys.argv[1] == "plain":
    import openvino
else:
    from graphrag.ingest.embed import LocalEmbedder, parse_spec
    embedder = LocalEmbedder(parse_spec(None), runtime="openvino")
    assert embedder.chunk_encoder() is not None
    embedder.encode(["a chunk to embed", "and another one"])
print(json.dumps(calls))
"""


def _telemetry_calls(mode: str) -> list[str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("CI", None)  # OpenVINO's telemetry stays quiet in CI; the probe must see what a user's run does
    done = subprocess.run([sys.executable, "-c", _TELEMETRY_PROBE, mode], capture_output=True, text=True,
                          env=env, cwd=Path(__file__).resolve().parents[2], timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout.strip().splitlines()[-1]))


def test_openvino_is_imported_and_run_without_reporting_to_its_telemetry() -> None:
    """A plain ``import openvino`` reports itself to OpenVINO's usage telemetry unless the user opted
    out, and ``ov.convert_model`` reports every conversion; building and running the encoder reports
    nothing."""
    plain = _telemetry_calls("plain")
    if "send_event" not in plain:
        pytest.skip(f"this openvino no longer reports its import (calls: {plain})")
    assert _telemetry_calls("encoder") == []


def test_auto_runtime_is_openvino_wherever_it_is_installed(monkeypatch: Any) -> None:
    # Whatever the precision: with float32 products as fast and less memory (docs/benchmarks.md).
    assert resolve_runtime("auto") == "openvino"  # openvino is a dependency
    assert LocalEmbedder(parse_spec(None), precision="float32").runtime == "openvino"
    import graphrag.ingest.openvino_encoder as module

    monkeypatch.setattr(module, "openvino_available", lambda: False)
    assert resolve_runtime("auto") == "torch"
    assert resolve_runtime("torch") == "torch"
    assert resolve_runtime("openvino") == "openvino"
    with pytest.raises(ConfigurationError, match="GRAPHRAG_EMBEDDING_RUNTIME"):
        resolve_runtime("onnx")


def test_unsupported_model_keeps_pytorch(reference: tuple[LocalEmbedder, np.ndarray], monkeypatch: Any,
                                         caplog: Any) -> None:
    import graphrag.ingest.query_encoder as module  # the layout check both encoders share

    def refuse(model: Any) -> str:
        raise QueryEncoderUnavailable("unsupported module layout ['Transformer', 'Pooling', 'Dense']")

    monkeypatch.setattr(module, "_pooling_mode", refuse)
    embedder = LocalEmbedder(parse_spec(None), precision="float32", runtime="openvino")
    assert embedder.chunk_encoder() is None and embedder.runtime == "torch"
    assert "keep PyTorch" in caplog.text
    assert np.allclose(embedder.encode(TEXTS[:3]), reference[1][:3], atol=1e-5)


def test_exporting_the_model_leaves_its_vectors_alone(reference: tuple[LocalEmbedder, np.ndarray]) -> None:
    """An export once left the model in training mode (dropout on): later chunk vectors changed."""
    embedder, expected = reference
    export_graph(embedder.model)
    assert not embedder.model.training and not embedder.model[0].auto_model.training
    assert np.allclose(embedder.encode(TEXTS), expected, atol=1e-5)


async def test_ingested_vectors_are_the_models(runtime: Any, tmp_path: Path,
                                               reference: tuple[LocalEmbedder, np.ndarray]) -> None:
    """Ingest through OpenVINO into the real stores: the stored vectors are the model's."""
    from graphrag.ingest.ingest_models import IngestModels, embedding_text
    from graphrag.ingest.pipeline import Ingestor

    settings = runtime.settings.model_copy(update={"embedding_runtime": "openvino"})
    models = IngestModels(settings)
    assert models.embedder.runtime == "openvino"
    assert models.embedder._chunk_encoder is not None  # built while spaCy loaded, not in the first batch
    (tmp_path / "cells.md").write_text("# Cells\n\n" + " ".join(TEXTS[6:20]) + "\n")
    ingestor = Ingestor(settings, runtime.postgres, runtime.neo4j, models)
    report = await ingestor.ingest_paths([tmp_path], collection="openvino_chunks")
    assert report.ingested == 1 and not report.failed
    assert models.embedder.chunk_encoder() is not None
    rows = await runtime.postgres.pool.fetch(
        "SELECT chunk_index, content, heading_path, token_count, embedding FROM chunks WHERE collection = $1 "
        "ORDER BY chunk_index", "openvino_chunks")
    assert rows
    texts = [embedding_text(Chunk(index=r["chunk_index"], text=r["content"], char_start=0, char_end=len(r["content"]),
                                  heading_path=tuple(r["heading_path"]), token_count=r["token_count"]),
                            models.counter) for r in rows]
    stored = np.vstack([r["embedding"].to_numpy() for r in rows]).astype(np.float32)
    assert float((stored * reference[0].encode(texts)).sum(axis=1).min()) > 0.9995
