"""Chunk embeddings by ONNX Runtime int8 (graphrag/ingest/chunk_encoder.py, GRAPHRAG_CHUNK_ENCODER=onnx-int8)
with the packaged model: vectors close to the model's, queries untouched, the fallback to PyTorch, and
ingestion through it writing chunks that a vector search finds in the real stores."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from graphrag.config import Settings
from graphrag.ingest import chunk_encoder
from graphrag.ingest.embed import LocalEmbedder, parse_spec
from graphrag.ingest.ingest_models import IngestModels
from graphrag.ingest.pipeline import Ingestor
from graphrag.models import Document
from graphrag.search.router import SearchRouter

TEXTS = [
    "0-dimensional biomaterials lack inductive properties.",
    "Alterations of the architecture of cerebral white matter in the developing human brain can affect cortical "
    "development and result in functional disabilities. Diffusion tensor imaging measured the apparent diffusion "
    "coefficient and relative anisotropy in preterm and full-term infants.",
    "Ünïcode, punctuation (and brackets) — and a dash",
    "word " * 400,  # longer than the model's limit: truncated the same way
]
DOCS = {
    "Rivers": "The Danube flows through Vienna and Budapest before it reaches the Black Sea.",
    "Pasta": "Carbonara is a Roman pasta dish made with eggs, guanciale and pecorino cheese.",
    "Robots": "Apex Logistics builds warehouse robots that sort parcels for shipping companies.",
    "Tea": "Green tea is produced in China and Japan from unoxidised leaves of the tea plant.",
}


@pytest.fixture(scope="module")
def int8_embedder() -> LocalEmbedder:
    return LocalEmbedder(parse_spec(None), chunk_runtime="onnx-int8")


def test_int8_chunk_vectors_agree_with_the_model(int8_embedder: LocalEmbedder) -> None:
    assert int8_embedder.chunk_encoder() is not None and int8_embedder.chunk_runtime == "onnx-int8"
    reference = int8_embedder._encode_torch(TEXTS)
    for threads in (1, 2):
        fast = int8_embedder.encode(TEXTS, threads=threads)
        assert fast.dtype == np.float32 and fast.shape == reference.shape
        assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
        assert float((fast * reference).sum(axis=1).min()) > chunk_encoder.INT8_AGREEMENT
        assert not np.allclose(fast, reference, atol=1e-6)  # the int8 path did run
    # Activations are quantised per batch, so a text's vector depends a little on its batch-mates:
    # alone, it still agrees with the model's.
    one_by_one = np.vstack([int8_embedder.encode([t]) for t in TEXTS])
    assert float((one_by_one * reference).sum(axis=1).min()) > chunk_encoder.INT8_AGREEMENT
    assert int8_embedder.encode([]).shape == (0, int8_embedder.dim)


def test_queries_stay_on_the_full_precision_model(int8_embedder: LocalEmbedder) -> None:
    queries = TEXTS[:2]
    reference = int8_embedder._encode_torch(queries)
    assert float((int8_embedder.encode_queries(queries) * reference).sum(axis=1).min()) > 0.9999


def test_a_failed_agreement_check_keeps_pytorch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(chunk_encoder, "INT8_AGREEMENT", 1.5)  # no encoder can reach it
    embedder = LocalEmbedder(parse_spec(None), chunk_runtime="onnx-int8")
    assert embedder.chunk_encoder() is None
    assert embedder.chunk_runtime == "torch"
    assert np.array_equal(embedder.encode(TEXTS[:2]), embedder._encode_torch(TEXTS[:2]))


@pytest.fixture(scope="module")
def int8_models(settings: Settings) -> IngestModels:
    return IngestModels(settings.model_copy(update={"chunk_encoder": "onnx-int8"}))


async def test_ingestion_through_int8_writes_chunks_vector_search_finds(runtime: Any, int8_models: IngestModels,
                                                                       collection: str) -> None:
    embedder = int8_models.embedder
    assert isinstance(embedder, LocalEmbedder) and embedder.chunk_runtime == "onnx-int8"
    docs = [(Document(source=f"{t.lower()}.txt", title=t, text=text, kind="text"), t) for t, text in DOCS.items()]
    report = await Ingestor(runtime.settings, runtime.postgres, runtime.neo4j, int8_models).ingest_documents(
        docs, collection=collection)
    assert report.chunks >= len(DOCS)
    rows = await runtime.postgres.pool.fetch(
        "SELECT content, heading_path, embedding, embedding_model FROM chunks WHERE collection = $1", collection)
    assert {r["embedding_model"] for r in rows} == {embedder.name}  # the model's name, as before
    stored = np.vstack([np.asarray(r["embedding"].to_numpy(), dtype=np.float32) for r in rows])
    # A chunk is embedded alone or under its heading path (ingest_models.embedding_text): either way,
    # its stored vector is the model's within the int8 tolerance.
    alone = embedder._encode_torch([r["content"] for r in rows])
    headed = embedder._encode_torch([" > ".join(r["heading_path"] or []) + "\n" + r["content"] for r in rows])
    cosines = np.maximum((stored * alone).sum(axis=1), (stored * headed).sum(axis=1))
    assert float(cosines.min()) > chunk_encoder.INT8_AGREEMENT
    router = SearchRouter(runtime.postgres, runtime.neo4j, embedder)
    for title, query in (("Pasta", "an Italian dish with eggs and cheese"), ("Rivers", "which river reaches the Black Sea"),
                         ("Robots", "machines sorting parcels in warehouses")):
        response = await router.search(query, mode="vector", limit=3, collections=[collection])
        assert response["results"], response["legs"]
        assert response["results"][0]["title"] == title
