"""Query embeddings by ONNX Runtime (graphrag/ingest/query_encoder.py) with the packaged model: the same
vectors as the model's PyTorch path, and the switch back to PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from graphrag.ingest.embed import LocalEmbedder, parse_spec
from graphrag.search.router import SearchRouter
from tests.helpers import rest_search

TEXTS = [
    "What does the graph leg add to a hybrid search?",
    "0-dimensional biomaterials lack inductive properties.",
    "Ünïcode, punctuation (and brackets) — and a dash",
    "word " * 400,  # longer than the model's limit: truncated the same way
]


def test_onnx_query_vectors_match_the_model(models: Any) -> None:
    embedder = models.embedder
    assert isinstance(embedder, LocalEmbedder)
    assert embedder.query_encoder() is not None  # the packaged model's layout is supported
    # One intra-op thread: the legs run beside the embedding, and a second thread only costs CPU under load.
    assert embedder.query_encoder()._session.get_session_options().intra_op_num_threads == 1
    reference = embedder.encode(TEXTS)
    fast = embedder.encode_queries(TEXTS)
    assert fast.dtype == np.float32 and fast.shape == reference.shape
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)
    assert float((fast * reference).sum(axis=1).min()) > 0.9999
    one_by_one = np.vstack([embedder.encode_queries([t]) for t in TEXTS])  # padding does not change a vector
    assert float((one_by_one * reference).sum(axis=1).min()) > 0.9999
    assert embedder.encode_queries([]).shape == (0, embedder.dim)


def test_torch_setting_keeps_queries_on_pytorch() -> None:
    embedder = LocalEmbedder(parse_spec(None), query_runtime="torch")
    assert embedder.query_encoder() is None
    assert np.array_equal(embedder.encode_queries(TEXTS[:2]), embedder.encode(TEXTS[:2]))


async def test_search_embeds_queries_with_the_fast_encoder(runtime: Any, models: Any, monkeypatch: Any) -> None:
    """The router embeds the query through encode_queries (the ONNX path), not the chunk path."""
    calls: list[list[str]] = []
    embedder = models.embedder
    original = embedder.encode_queries

    def spy(texts: list[str]) -> Any:
        calls.append(list(texts))
        return original(texts)

    monkeypatch.setattr(embedder, "encode_queries", spy)
    router = SearchRouter(runtime.postgres, runtime.neo4j, embedder)
    router.query_cache_size = 0
    response = await rest_search(router, "tides and the moon", mode="vector", limit=3, collections=["no_such_collection_q"])
    assert response["legs"]["vector"]["status"] in ("ok", "skipped")
    assert calls == [["tides and the moon"]]


@pytest.mark.parametrize("layout", [["Transformer", "Pooling", "Dense", "Normalize"], ["Transformer"]])
def test_unsupported_layouts_are_refused(layout: list[str]) -> None:
    from graphrag.ingest.query_encoder import QueryEncoderUnavailable, _pooling_mode

    modules = [type(name, (), {"get_config_dict": lambda self: {"pooling_mode": "mean"}})() for name in layout]
    with pytest.raises(QueryEncoderUnavailable):
        _pooling_mode(modules)
