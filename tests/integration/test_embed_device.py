"""Local models on a chosen device (GRAPHRAG_EMBEDDING_DEVICE).

Everywhere: the CPU named outright is the model's device. Without a GPU: an ingest asked to embed on
one stops with a one-line error before it writes anything to either store. With a GPU (the tests marked
``needs_gpu`` run only there; CI has none): the GPU's vectors are the CPU's, in batches of any shape,
for chunks and queries alike.

The GPU tests need no store, so they run with ``--noconftest`` on a machine that has PyTorch and
sentence-transformers (and the search router's Python dependencies) but no servers;
``GRAPHRAG_EMBEDDING_MODEL`` may name a model folder there."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from graphrag.ingest.embed import (
    PACKAGED_NAME,
    PADDED_TOKENS_PER_BATCH,
    LocalEmbedder,
    cuda_device_count,
    packaged_model_path,
    parse_spec,
)

GPUS = cuda_device_count()
needs_gpu = pytest.mark.skipif(GPUS == 0, reason="no CUDA GPU here")

TEXTS = [
    "Aspirin lowers the risk of stroke in adults with atrial fibrillation.",
    "`Arc<Mutex<T>>` shares state between threads (see chapter 16.3).",
    "Ünïcode, punctuation (and brackets) — and a dash",
    "short",
    "word " * 400,  # longer than the model's limit: truncated the same way on either device
    "0-dimensional biomaterials lack inductive properties.",
] + [f"Sentence {i} about proteins, cells and the genes that code for them. " * (i % 7 + 1) for i in range(90)]


def spec() -> Any:
    return parse_spec(os.environ.get("GRAPHRAG_EMBEDDING_MODEL"))


def test_the_cpu_named_outright_holds_the_model() -> None:
    embedder = LocalEmbedder(spec(), device="cpu", runtime="torch", precision="float32")
    assert embedder.device == "cpu" and str(embedder.model.device) == "cpu"
    assert embedder.padded_tokens_per_batch == PADDED_TOKENS_PER_BATCH
    got = embedder.encode(TEXTS[:4])
    assert got.shape == (4, embedder.dim) and np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


@needs_gpu
def test_gpu_vectors_are_the_cpu_vectors() -> None:
    cpu = LocalEmbedder(spec(), device="cpu", runtime="torch", precision="float32")
    gpu = LocalEmbedder(spec(), device="cuda")  # auto precision and runtime
    assert (gpu.device, gpu.runtime, gpu.precision) == ("cuda:0", "torch", "float32")
    assert str(gpu.model.device) == "cuda:0"
    assert gpu.padded_tokens_per_batch > PADDED_TOKENS_PER_BATCH  # a GPU gets full batches
    expected = cpu.encode(TEXTS)
    for threads in (1, 2):
        got = gpu.encode(TEXTS, threads=threads)
        assert got.dtype == np.float32 and got.shape == expected.shape
        assert np.allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
        assert float((got * expected).sum(axis=1).min()) > 0.99999
    alone = np.vstack([gpu.encode([t]) for t in TEXTS[:6]])  # unpadded, one at a time
    assert float((alone * expected[:6]).sum(axis=1).min()) > 0.99999
    # Queries go where the chunks go (ONNX Runtime is the CPU's query runtime).
    assert gpu.query_encoder() is None
    queries = gpu.encode_queries(TEXTS[:3])
    assert float((queries * expected[:3]).sum(axis=1).min()) > 0.99999
    assert gpu.encode([]).shape == (0, gpu.dim)


@needs_gpu
def test_gpu_bfloat16_products_stay_close() -> None:
    cpu = LocalEmbedder(spec(), device="cpu", runtime="torch", precision="float32")
    gpu = LocalEmbedder(spec(), device=f"cuda:{GPUS - 1}", precision="bfloat16")
    assert gpu.precision == "bfloat16" and gpu.device == f"cuda:{GPUS - 1}"
    cosines = (gpu.encode(TEXTS) * cpu.encode(TEXTS)).sum(axis=1)
    assert float(cosines.min()) > 0.999


@needs_gpu
async def test_the_reranker_runs_on_the_gpu_with_the_cpus_scores() -> None:
    """The search router's cross-encoder on the device named (a sentence-transformers folder loads as
    one: an untrained head, enough to compare the devices' scores)."""
    import torch

    from graphrag.search.fusion import Candidate
    from graphrag.search.router import SearchRouter

    path = str(spec().target) if spec().target != PACKAGED_NAME else packaged_model_path()
    scores = {}
    for device in ("cpu", "cuda"):
        router = SearchRouter(None, None, LocalEmbedder(spec(), device="cpu"),  # type: ignore[arg-type]
                              reranker_path=path, reranker_device=device)
        pool = [Candidate(chunk_id=str(i), row={"content": text}) for i, text in enumerate(TEXTS[:8])]
        torch.manual_seed(0)  # the untrained head is drawn at random when the model loads: the same on both
        ranked = await router._rerank("which drug lowers the risk of stroke?", pool)
        assert str(router._reranker.device).startswith(device)
        scores[device] = {c.chunk_id: c.legs["rerank"]["score"] for c in ranked}
    assert scores["cpu"].keys() == scores["cuda"].keys()
    assert max(abs(scores["cpu"][k] - scores["cuda"][k]) for k in scores["cpu"]) < 1e-4


@pytest.mark.skipif(GPUS > 0, reason="this machine has a GPU")
async def test_asking_for_a_gpu_that_is_not_there_writes_nothing(settings: Any, services: Any, runtime: Any,
                                                                tmp_path: Path, collection: str) -> None:
    from graphrag.stores.neo4j import GraphWrites
    from tests.helpers import run_cli

    (tmp_path / "note.md").write_text("# Note\n\nAda Lovelace wrote the first program in London.\n")
    env = {"GRAPHRAG_HOME": str(settings.home_dir), "GRAPHRAG_EMBEDDING_DEVICE": "cuda"}
    result = run_cli("ingest", str(tmp_path), "--collection", collection, env=env)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ("graphrag: error: GRAPHRAG_EMBEDDING_DEVICE=cuda: PyTorch sees no CUDA GPU "
                             "(use cpu or auto)\n"), result.stderr
    assert collection not in await runtime.postgres.collection_info(None)
    assert collection not in await runtime.postgres.collection_counts()
    assert collection not in await GraphWrites(runtime.neo4j).collection_counts()
    # A value that names no device is refused as a setting (exit 2), before any store is opened.
    bad = run_cli("ingest", str(tmp_path), "--collection", collection,
                  env={**env, "GRAPHRAG_EMBEDDING_DEVICE": "gpu"})
    assert bad.returncode == 2 and bad.stderr.startswith("graphrag: error: invalid settings: GRAPHRAG_EMBEDDING_DEVICE")
    # The CPU named outright ingests as before, and the chunk is found.
    good = run_cli("ingest", str(tmp_path), "--collection", collection,
                   env={**env, "GRAPHRAG_EMBEDDING_DEVICE": "cpu"})
    assert good.returncode == 0, good.stderr
    found = run_cli("search", "who wrote the first program", "--mode", "vector", "--collection", collection,
                    env={**env, "GRAPHRAG_EMBEDDING_DEVICE": "cpu"})
    assert found.returncode == 0 and "Ada Lovelace" in found.stdout, found.stdout + found.stderr
    # A search asked to embed its query on the missing GPU says so, without blaming the collection's model.
    missing = run_cli("search", "who wrote the first program", "--mode", "vector", "--collection", collection, env=env)
    assert missing.returncode == 1
    assert missing.stderr.splitlines()[-1] == ("graphrag: error: GRAPHRAG_EMBEDDING_DEVICE=cuda: PyTorch sees no "
                                               "CUDA GPU (use cpu or auto)"), missing.stderr
