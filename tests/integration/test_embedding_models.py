"""Bring-your-own embedding models, against the real stores and a fake OpenAI-compatible endpoint on
loopback (64-dim deterministic vectors): providers, collections on different models side by side,
retries, wrong dimensions, re-embedding in place while searches run, and text-search configurations."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from graphrag.config import Settings
from graphrag.errors import ConfigurationError, InvalidInput, NotFound, ServiceUnavailable
from graphrag.ingest.embed import PACKAGED_NAME, parse_spec
from graphrag.ingest.ingest_models import IngestModels
from graphrag.ingest.pipeline import Ingestor
from graphrag.ingest.reembed import reembed
from graphrag.models import Document
from graphrag.runtime import Runtime
from graphrag.search.router import SearchRouter
from tests.fake_embeddings import FakeEmbeddings
from tests.helpers import run_cli, rest_search

DOCS = {
    "Rivers": "The Danube flows through Vienna and Budapest before it reaches the Black Sea.",
    "Pasta": "Carbonara is a Roman pasta dish made with eggs, guanciale and pecorino cheese.",
    "Robots": "Apex Logistics builds warehouse robots that sort parcels for shipping companies.",
    "Tea": "Green tea is produced in China and Japan from unoxidised leaves of the tea plant.",
}
FAKE_MODEL = "openai:fake-64"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeEmbeddings]:
    with FakeEmbeddings(dim=64, api_key="sk-test") as server:
        yield server


def fake_settings(settings: Settings, fake: FakeEmbeddings, **extra: Any) -> Settings:
    return settings.model_copy(update={
        "embedding_model": FAKE_MODEL, "embedding_base_url": fake.base_url, "embedding_api_key": SecretStr("sk-test"),
        "embedding_max_retries": 4, **extra})


@pytest.fixture(scope="module")
def fake_models(settings: Settings, fake: FakeEmbeddings) -> IngestModels:
    return IngestModels(fake_settings(settings, fake))


def docs() -> list[tuple[Document, str]]:
    return [(Document(source=f"{t.lower()}.txt", title=t, text=text, kind="text"), t) for t, text in DOCS.items()]


async def ingest(runtime: Runtime, models: IngestModels, collection: str, **kw: Any) -> Any:
    ingestor = Ingestor(runtime.settings, runtime.postgres, runtime.neo4j, models)
    return await ingestor.ingest_documents(docs(), collection=collection, **kw)


async def top_title(router: SearchRouter, query: str, collection: str, mode: str) -> str:
    response = await rest_search(router, query, mode=mode, limit=3, collections=[collection])
    assert response["results"], (mode, response["legs"])
    return response["results"][0]["title"]


async def chunk_models(runtime: Runtime, collection: str) -> set[tuple[str, int]]:
    rows = await runtime.postgres.pool.fetch(
        "SELECT DISTINCT embedding_model, vector_dims(embedding) AS dim FROM chunks WHERE collection = $1", collection)
    return {(r["embedding_model"], r["dim"]) for r in rows}


def test_model_specs_parse() -> None:
    assert parse_spec(None).name == PACKAGED_NAME
    assert parse_spec("all-MiniLM-L6-v2").target == PACKAGED_NAME
    openai = parse_spec("openai:nomic-embed-text", "http://localhost:11434/v1/")
    assert (openai.provider, openai.target, openai.name, openai.base_url) == (
        "openai", "nomic-embed-text", "openai:nomic-embed-text", "http://localhost:11434/v1")
    assert parse_spec("openai:text-embedding-3-small").base_url == "https://api.openai.com/v1"
    with pytest.raises(ConfigurationError, match="unknown provider"):
        parse_spec("cohere:embed-v3")
    with pytest.raises(ConfigurationError, match="needs a model name"):
        parse_spec("openai:")


async def test_ingest_and_search_every_mode_through_the_endpoint(
        runtime: Runtime, fake_models: IngestModels, collection: str, fake: FakeEmbeddings) -> None:
    report = await ingest(runtime, fake_models, collection)
    assert report.ingested == len(DOCS), report.failed
    assert await chunk_models(runtime, collection) == {(FAKE_MODEL, 64)}
    info = (await runtime.postgres.collection_info([collection]))[collection]
    assert (info.model.name, info.model.dim, info.text_config) == (FAKE_MODEL, 64, "english")
    router = SearchRouter(runtime.postgres, runtime.neo4j, fake_models.embedders, fake_models.nlp)
    for mode in ("vector", "keyword", "hybrid", "graph", "auto"):
        assert await top_title(router, "Danube Vienna Budapest", collection, mode) == "Rivers", mode
    # The vector leg's plan uses the 64-dim index (the partial HNSW index of that dimension).
    rows = await runtime.postgres.pool.fetch("SELECT indexname FROM pg_indexes WHERE indexname = 'chunks_embedding_hnsw_64'")
    assert rows
    # Entity names are embedded by the collection's model, into that model's own property and index.
    entities = await runtime.neo4j.q.entities.without_vector(collection, "embedding", 1)
    assert entities, "entities of a fake-model collection carry no MiniLM vector"
    indexes = {r["name"]: r for r in await runtime.neo4j.q.entities.vector_indexes()}
    fake_index = (await router.space((collection,))).entity_index
    assert indexes[fake_index]["dim"] == 64


async def test_collections_on_two_models_live_side_by_side(
        runtime: Runtime, models: Any, fake_models: IngestModels, fake: FakeEmbeddings) -> None:
    mini, other = f"mini_{id(runtime):x}"[:20], f"fake_{id(runtime):x}"[:20]
    try:
        assert (await ingest(runtime, models, mini)).ingested == len(DOCS)
        assert (await ingest(runtime, fake_models, other)).ingested == len(DOCS)
        assert await chunk_models(runtime, mini) == {(PACKAGED_NAME, 384)}
        assert await chunk_models(runtime, other) == {(FAKE_MODEL, 64)}
        # One router (configured with the fake model) searches each collection with its own model.
        router = SearchRouter(runtime.postgres, runtime.neo4j, fake_models.embedders, fake_models.nlp)
        assert (await router.space((mini,))).name == PACKAGED_NAME
        assert (await router.space((other,))).name == FAKE_MODEL
        for name in (mini, other):
            assert await top_title(router, "pasta with eggs and cheese", name, "vector") == "Pasta"
            assert await top_title(router, "warehouse robots parcels", name, "auto") == "Robots"
        # Vectors of different models are never compared: searching both at once is a clear error.
        with pytest.raises(InvalidInput, match="different embedding models"):
            await rest_search(router, "tea", mode="vector", collections=[mini, other])
        # Naming no collection searches everything: the vector side covers the configured model's
        # collections and says so; keyword and graph cover all.
        everything = await rest_search(router, "tea leaves", mode="hybrid", limit=50)
        assert "other collection(s) use another model" in everything["legs"]["vector"]["note"]
        assert FAKE_MODEL in everything["legs"]["vector"]["note"]
        # MMR compares result vectors with the query's: those of another model (another dimension
        # here) take no part, rather than failing the search.
        diverse = await rest_search(router, "tea leaves", mode="hybrid", limit=10, mmr_lambda=0.5)
        assert diverse["results"] and mini not in {h["collection"] for h in diverse["results"]}
        # Keyword search needs no model, so it may span them.
        both = await rest_search(router, "tea leaves", mode="keyword", collections=[mini, other])
        assert {h["collection"] for h in both["results"]} == {mini, other}
        # Ingesting into a collection uses the model it records, whatever this process is configured with.
        extra = (Document(source="extra.txt", title="Extra", text="Budapest has thermal baths.", kind="text"), "x")
        await Ingestor(runtime.settings, runtime.postgres, runtime.neo4j, fake_models).ingest_documents(
            [extra], collection=mini)
        assert await chunk_models(runtime, mini) == {(PACKAGED_NAME, 384)}
    finally:
        for name in (mini, other):
            await _drop(runtime, name)


async def _drop(runtime: Runtime, collection: str) -> None:
    ids = await runtime.postgres.q.documents.ids(collection)
    if ids:
        await runtime.deleter()._delete_ids(ids)


async def test_endpoint_errors_are_retried_then_clear(
        runtime: Runtime, settings: Settings, fake_models: IngestModels, fake: FakeEmbeddings, collection: str) -> None:
    # 500s, then recovery: the retries carry the ingest through.
    before = fake.requests
    fake.fail_next = 2
    report = await ingest(runtime, fake_models, collection)
    assert report.ingested == len(DOCS) and not report.failed
    assert fake.requests - before >= 3 and fake.fail_next == 0
    # Down for good: one clear error naming the endpoint, and nothing of the batch written.
    down = f"{collection}_down"
    fake.fail_after = fake.texts
    try:
        with pytest.raises(ServiceUnavailable, match=r"embedding endpoint http://127\.0\.0\.1:\d+/v1/embeddings failed after 5 attempts"):
            await ingest(runtime, fake_models, down)
    finally:
        fake.fail_after = None
    assert not await runtime.postgres.q.documents.ids(down)
    assert not await runtime.neo4j.q.entities.search("Danube", [down], 5)


async def test_wrong_dimension_is_a_clear_error_and_writes_nothing(
        runtime: Runtime, settings: Settings, fake: FakeEmbeddings, fake_models: IngestModels, collection: str) -> None:
    # Configured for 32 dimensions, the endpoint answers 64: refused at the first answer.
    wrong = IngestModels(fake_settings(settings, fake, embedding_model="openai:fake-32", embedding_dim=32))
    with pytest.raises(ConfigurationError, match="answered 64-dim vectors for openai:fake-32, expected 32"):
        await ingest(runtime, wrong, collection)
    assert not await runtime.postgres.q.documents.ids(collection)
    # A model whose answers change dimension after it was recorded: refused, nothing written.
    other = f"{collection}_b"
    assert (await ingest(runtime, fake_models, other)).ingested == len(DOCS)
    fake.answer_dim = 48
    try:
        more = [(Document(source="new.txt", title="New", text="A brand new document about ferries.", kind="text"), "n")]
        report = await Ingestor(runtime.settings, runtime.postgres, runtime.neo4j, fake_models).ingest_documents(
            more, collection=other)
    except ConfigurationError as exc:
        assert "expected 64" in exc.message
    else:
        assert report.ingested == 0 and "expected 64" in report.failed[0]["error"]
    finally:
        fake.answer_dim = None
    assert await runtime.postgres.q.documents.by_source(other, "new.txt") is None


async def test_reembed_switches_atomically_while_searches_run(
        runtime: Runtime, models: Any, fake_models: IngestModels, fake: FakeEmbeddings, collection: str) -> None:
    assert (await ingest(runtime, models, collection)).ingested == len(DOCS)
    router = SearchRouter(runtime.postgres, runtime.neo4j, fake_models.embedders, fake_models.nlp)
    seen: list[str] = []
    errors: list[str] = []
    stop = asyncio.Event()

    async def searching() -> None:
        while not stop.is_set():
            try:
                response = await rest_search(router, "Roman pasta with eggs", mode="auto", limit=2, collections=[collection])
                seen.append(response["results"][0]["title"] if response["results"] else "")
                vector = response["legs"]["vector"]
                if vector["status"] != "ok":
                    errors.append(str(vector))
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                errors.append(repr(exc))
            await asyncio.sleep(0)

    task = asyncio.create_task(searching())
    try:
        report = await reembed(runtime.postgres, runtime.neo4j, fake_models, collection=collection, model=FAKE_MODEL)
        for _ in range(3):  # a few searches after the switch too
            await asyncio.sleep(0.05)
    finally:
        stop.set()
        await task
    assert errors == []
    assert seen and set(seen) == {"Pasta"}, seen
    assert report.switched and (report.from_model, report.to_model, report.dim) == (PACKAGED_NAME, FAKE_MODEL, 64)
    assert report.chunks == len(DOCS) and report.entities > 0
    assert await chunk_models(runtime, collection) == {(FAKE_MODEL, 64)}
    info = (await runtime.postgres.collection_info([collection]))[collection]
    assert info.model.name == FAKE_MODEL and info.reembed is None
    assert await top_title(router, "warehouse robots", collection, "vector") == "Robots"
    # Every entity has the new model's vector, and none keeps the old model's.
    assert await runtime.neo4j.q.entities.drop_vectors(collection, "embedding") == 0
    space = await router.space((collection,))
    missing = await runtime.neo4j.q.entities.without_vector(collection, space.entity_property, 5)
    assert missing == []
    # Again: nothing to do.
    again = await reembed(runtime.postgres, runtime.neo4j, fake_models, collection=collection, model=FAKE_MODEL)
    assert not again.switched and again.chunks == 0


async def test_reembed_resumes_after_a_crash(
        runtime: Runtime, models: Any, fake_models: IngestModels, fake: FakeEmbeddings, collection: str) -> None:
    many = [(Document(source=f"d{i}.txt", title=f"D{i}", text=f"Document number {i} about topic {i % 7}.",
                      kind="text"), str(i)) for i in range(300)]
    ingestor = Ingestor(runtime.settings, runtime.postgres, runtime.neo4j, models)
    assert (await ingestor.ingest_documents(many, collection=collection)).ingested == 300
    fake.fail_after = fake.texts + 256  # the first batch of chunks goes through, then the endpoint dies
    try:
        with pytest.raises(ServiceUnavailable):
            await reembed(runtime.postgres, runtime.neo4j, fake_models, collection=collection, model=FAKE_MODEL)
    finally:
        fake.fail_after = None
    info = (await runtime.postgres.collection_info([collection]))[collection]
    assert info.model.name == PACKAGED_NAME and info.reembed is not None and info.reembed.name == FAKE_MODEL
    assert await chunk_models(runtime, collection) == {(PACKAGED_NAME, 384)}  # search still on the old vectors
    report = await reembed(runtime.postgres, runtime.neo4j, fake_models, collection=collection, model=FAKE_MODEL)
    assert report.resumed and report.switched
    assert report.chunks == 300 - 256
    assert await chunk_models(runtime, collection) == {(FAKE_MODEL, 64)}


async def test_reembed_errors(runtime: Runtime, fake_models: IngestModels) -> None:
    with pytest.raises(NotFound, match="no collection"):
        await reembed(runtime.postgres, runtime.neo4j, fake_models, collection="no_such_collection_x", model=FAKE_MODEL)
    with pytest.raises(InvalidInput, match="invalid collection"):
        await reembed(runtime.postgres, runtime.neo4j, fake_models, collection="bad name", model=FAKE_MODEL)


async def test_text_search_configuration_per_collection(runtime: Runtime, models: Any, collection: str) -> None:
    german_text = "Die Katzen schlafen auf dem Sofa. Im Garten spielen die Kinder mit den Hunden."
    doc = [(Document(source="katzen.txt", title="Haustiere", text=german_text, kind="text"), "k")]
    ingestor = Ingestor(runtime.settings, runtime.postgres, runtime.neo4j, models)
    simple, german = f"{collection}_simple", f"{collection}_de"
    await ingestor.ingest_documents(doc, collection=simple, text_config="simple")
    await ingestor.ingest_documents(doc, collection=german, text_config="german")
    info = await runtime.postgres.collection_info([simple, german])
    assert info[simple].text_config == "simple" and info[german].text_config == "german"
    # The stored tsvector follows the collection's configuration: `simple` keeps every word as written.
    rows = await runtime.postgres.pool.fetch(
        "SELECT collection, tsvector_to_array(tsv) AS lexemes FROM chunks WHERE collection = ANY($1::text[])",
        [simple, german])
    lexemes = {r["collection"]: set(r["lexemes"]) for r in rows}
    assert {"die", "katzen", "hunden"} <= lexemes[simple]
    assert "katz" in lexemes[german] and "die" not in lexemes[german]  # stemmed, stop words dropped
    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    found = await rest_search(router, "Katzen", mode="keyword", collections=[simple])
    assert [h["title"] for h in found["results"]] == ["Haustiere"]
    # German stemming: "Katze" finds "Katzen" in the german collection only.
    assert [h["title"] for h in (await rest_search(router, "Katze", mode="keyword", collections=[german]))["results"]] == ["Haustiere"]
    assert (await rest_search(router, "Katze", mode="keyword", collections=[simple]))["results"] == []
    # The configuration is chosen at creation: another one later is a clear error, as is an unknown one.
    with pytest.raises(InvalidInput, match="uses the text-search configuration 'simple'"):
        await ingestor.ingest_documents(doc, collection=simple, text_config="english")
    with pytest.raises(InvalidInput, match="unknown text-search configuration 'klingon'"):
        await ingestor.ingest_documents(doc, collection=f"{collection}_x", text_config="klingon")


def test_cli_reembed_and_status_show_the_model(tmp_path: Path, settings: Settings, services: Any,
                                              fake: FakeEmbeddings) -> None:
    import json
    import os
    import uuid

    collection = f"cli_{uuid.uuid4().hex[:10]}"
    (tmp_path / "a.md").write_text("# Ferries\n\nFerries cross the lake every hour in summer.\n")
    env = {**os.environ, "GRAPHRAG_HOME": str(settings.home_dir), "GRAPHRAG_EMBEDDING_BASE_URL": fake.base_url,
           "GRAPHRAG_EMBEDDING_API_KEY": "sk-test"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env=env)

    assert cli("ingest", str(tmp_path), "--collection", collection, "--text-config", "simple", "--json").returncode == 0
    moved = cli("reembed", "--collection", collection, "--model", FAKE_MODEL, "--json")
    assert moved.returncode == 0, moved.stderr
    assert json.loads(moved.stdout)["to_model"] == FAKE_MODEL
    shown = cli("status", "--json")
    assert shown.returncode == 0, shown.stderr
    status = json.loads(shown.stdout)["collections"][collection]
    assert (status["embedding_model"], status["embedding_dim"], status["text_config"]) == (FAKE_MODEL, 64, "simple")
    searched = cli("search", "ferries on the lake", "--collection", collection, "--mode", "vector", "--json")
    assert searched.returncode == 0, searched.stderr
    found = json.loads(searched.stdout)
    assert found["results"][0]["source"].endswith("a.md")
    bad = cli("reembed", "--collection", collection, "--model", "cohere:x")
    assert bad.returncode != 0 and bad.stderr.count("\n") == 1 and "unknown provider" in bad.stderr


async def test_a_collection_whose_model_cannot_be_loaded_is_a_clear_error(
        runtime: Runtime, models: Any, collection: str) -> None:
    assert (await ingest(runtime, models, collection)).ingested == len(DOCS)
    # The collection records a local model folder this machine does not have (another host built it).
    gone = f"gone-model-{collection}"
    await runtime.postgres.register_model(gone, "sentence-transformers", f"sentence-transformers:/nonexistent/{gone}",
                                          384, None)
    await runtime.postgres.pool.execute("UPDATE collections SET embedding_model = $2 WHERE name = $1", collection, gone)
    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedders, models.nlp)
    with pytest.raises(ConfigurationError, match=f"no model folder at /nonexistent/{gone}.*built with {gone}"):
        await rest_search(router, "pasta", mode="vector", collections=[collection])
    # Keyword search does not need the model and still answers.
    assert (await rest_search(router, "pasta", mode="keyword", collections=[collection]))["results"]
