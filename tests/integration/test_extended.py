"""Extended search against the real stores: representations written, matched, kept in step, removed."""

from __future__ import annotations

import copy
import uuid
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from graphrag.agent import AgentDeps
from graphrag.agent import mcp as mcp_server
from graphrag.agent import tools as agent_tools
from graphrag.errors import ConfigurationError, InvalidInput
from graphrag.ingest.pipeline import Ingestor
from graphrag.ingest.representations import (
    ExtractiveRepresenter,
    LLMRepresenter,
    central_summary,
    check_mode,
    propositions,
    split_clauses,
)
from graphrag.models import Document
from graphrag.runtime import Runtime
from graphrag.search.router import SearchRouter
from tests.helpers import rest_search


LOGISTICS = Document(
    source="logistics.md", title="Quarterly logistics review", kind="markdown",
    text=("# Quarterly logistics review\n\n## Depots\n\n"
          "Trucks at the Lyon depot were loaded late on most Mondays. Two pallets of spare parts went missing "
          "in March; the driver union asked for new schedules.\n\n"
          "## Costs\n\n"
          "Fuel costs rose by a tenth over the quarter, and the warehouse manager blamed the long heat wave. "
          "Insurance premiums stayed flat.\n\n"
          "## Tools\n\n"
          "A new routing tool cut delivery times for the northern region by eleven minutes per stop. "
          "Drivers were trained on it in two afternoon sessions."))
GARDEN = Document(
    source="garden.md", title="Garden notes", kind="markdown",
    text="# Garden notes\n\nTomatoes need full sun all day. Basil grows well beside them. Water early in the morning "
         "to keep mildew off the leaves.")


async def kinds(runtime: Runtime, document_id: str) -> dict[str, int]:
    rows = await runtime.postgres.pool.fetch(
        "SELECT kind, count(*) AS n FROM representations WHERE document_id = $1 GROUP BY kind", uuid.UUID(document_id))
    return {r["kind"]: int(r["n"]) for r in rows}


async def stored(runtime: Runtime, collection: str, kind: str) -> list[dict[str, Any]]:
    rows = await runtime.postgres.pool.fetch(
        "SELECT document_id, chunk_id, content FROM representations WHERE collection = $1 AND kind = $2",
        collection, kind)
    return [dict(r) for r in rows]


async def ingest(ingestor: Ingestor, collection: str, mode: str | None = "extractive",
                 docs: tuple[Document, ...] = (LOGISTICS, GARDEN)) -> dict[str, str]:
    report = await ingestor.ingest_documents([(d, d.source) for d in docs], collection=collection, extended_mode=mode)
    assert not report.failed, report.failed
    return {d["source"]: d["id"] for d in report.documents}


# --- pure logic ----------------------------------------------------------------------------------

def test_propositions_are_sentences_with_light_clause_splitting() -> None:
    found = propositions("# Heading\n\nThe depot lost two pallets of parts; the driver union asked for new schedules. "
                         "Fuel rose, and we ran. Ok then.\n\n```python\nx = compute(a, b); print(x)\n```")
    assert found == ["The depot lost two pallets of parts", "The driver union asked for new schedules.",
                     "Fuel rose, and we ran."]  # short clauses stay joined; fragments and code are dropped
    assert split_clauses("Costs rose by a tenth this year, and the manager blamed the heat wave.") == [
        "Costs rose by a tenth this year", "The manager blamed the heat wave."]


def test_centroid_summary_keeps_the_most_central_units_in_order() -> None:
    import numpy as np

    units = ["a one", "b two", "c three", "d four", "e five"]
    vectors = np.array([[1, 0], [0.9, 0.1], [0, 1], [0.95, 0.05], [0.8, 0.2]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    summary = central_summary("Title", units, vectors)
    # The three nearest the centroid, in document order; the outlier and the far end are left out.
    assert summary == "Title. b two. d four. e five."


def test_modes_are_checked() -> None:
    assert check_mode("off") is None and check_mode("Extractive") == "extractive"
    with pytest.raises(InvalidInput, match="extended mode"):
        check_mode("abstractive")


# --- real stores ---------------------------------------------------------------------------------

async def test_representations_are_written_per_document_and_chunk(runtime: Runtime, ingestor: Ingestor,
                                                                  collection: str) -> None:
    ids = await ingest(ingestor, collection)
    counts = await kinds(runtime, ids["logistics.md"])
    assert counts["title"] == 1 and counts["summary"] == 1 and counts["proposition"] >= 6
    props = await stored(runtime, collection, "proposition")
    chunk_ids = {r["chunk_id"] for r in props}
    rows = await runtime.postgres.pool.fetch("SELECT id, content FROM chunks WHERE id = ANY($1::uuid[])", list(chunk_ids))
    content = {r["id"]: r["content"] for r in rows}
    # Every proposition points at the chunk it was taken from.
    for r in props:
        assert r["content"].rstrip(".").lower() in " ".join(content[r["chunk_id"]].split()).lower()
    mode = await runtime.postgres.pool.fetchval("SELECT extended FROM collections WHERE name = $1", collection)
    assert mode == "extractive"


async def test_summary_match_returns_the_documents_chunk(runtime: Runtime, ingestor: Ingestor, router: SearchRouter,
                                                         collection: str) -> None:
    ids = await ingest(ingestor, collection)
    [summary] = [r for r in await stored(runtime, collection, "summary") if str(r["document_id"]) == ids["logistics.md"]]
    body = summary["content"].split(". ", 1)[1]  # the central sentences, without the title
    response = await rest_search(router, body, mode="hybrid", collections=[collection], extended=True, limit=3)
    top = response["results"][0]
    assert top["document_id"] == ids["logistics.md"]
    assert top["matched"] == {"kind": "summary", "text": summary["content"]}
    assert top["legs"]["extended"]["rank"] == 1 and top["legs"]["extended"]["kind"] == "summary"
    assert response["legs"]["extended"]["status"] == "ok"
    # The full chunk comes back, not the summary.
    chunk = await runtime.postgres.pool.fetchval("SELECT content FROM chunks WHERE id = $1", uuid.UUID(top["chunk_id"]))
    assert top["content"] == chunk


async def test_proposition_match_points_at_its_chunk(runtime: Runtime, ingestor: Ingestor, router: SearchRouter,
                                                     collection: str) -> None:
    await ingest(ingestor, collection)
    props = await stored(runtime, collection, "proposition")
    target = next(r for r in props if r["content"].startswith("Insurance premiums"))
    response = await rest_search(router, "insurance premiums stayed flat", mode="hybrid", collections=[collection],
                                   extended=True, limit=3)
    top = response["results"][0]
    assert top["chunk_id"] == str(target["chunk_id"])
    assert top["matched"] == {"kind": "proposition", "text": target["content"]}
    # Without extended the shape is as before: no `matched`, no extended leg.
    plain = await rest_search(router, "insurance premiums stayed flat", mode="hybrid", collections=[collection], limit=3)
    assert "matched" not in plain["results"][0] and "extended" not in plain["legs"]


async def test_representations_follow_replace_and_delete(runtime: Runtime, ingestor: Ingestor, collection: str) -> None:
    ids = await ingest(ingestor, collection)
    old_props = {r["content"] for r in await stored(runtime, collection, "proposition")}
    assert any("heat wave" in p for p in old_props)
    # A changed document (no --extended this time: the collection's recorded mode applies) gets new ones only.
    changed = Document(source=LOGISTICS.source, title=LOGISTICS.title, kind="markdown",
                       text="# Quarterly logistics review\n\nThe Lyon depot closed in June after the lease ran out.")
    report = await ingestor.ingest_documents([(changed, changed.source)], collection=collection)
    assert report.updated == 1 and report.representations >= 2
    props = {r["content"] for r in await stored(runtime, collection, "proposition")
             if str(r["document_id"]) == ids["logistics.md"]}
    assert props == {"The Lyon depot closed in June after the lease ran out."}
    [summary] = [r for r in await stored(runtime, collection, "summary") if str(r["document_id"]) == ids["logistics.md"]]
    assert "heat wave" not in summary["content"]
    # Deleting the document removes all of its representations.
    await ingestor.delete(collection=collection, document_id=ids["logistics.md"])
    assert await kinds(runtime, ids["logistics.md"]) == {}
    assert await kinds(runtime, ids["garden.md"])  # the other document keeps its own
    # Turning the mode off removes the collection's representations and records it.
    await ingestor.ingest_documents([(GARDEN, GARDEN.source)], collection=collection, extended_mode="off")
    assert await kinds(runtime, ids["garden.md"]) == {}
    assert await runtime.postgres.pool.fetchval("SELECT extended FROM collections WHERE name = $1", collection) is None


async def test_turning_it_on_represents_documents_already_stored(runtime: Runtime, ingestor: Ingestor,
                                                                 collection: str) -> None:
    ids = await ingest(ingestor, collection, mode=None)
    assert await kinds(runtime, ids["garden.md"]) == {}
    report = await ingestor.ingest_documents([(d, d.source) for d in (LOGISTICS, GARDEN)], collection=collection,
                                             extended_mode="extractive")
    assert report.unchanged == 2 and report.representations > 0  # nothing re-chunked, representations added
    assert (await kinds(runtime, ids["garden.md"]))["summary"] == 1
    again = await ingestor.ingest_documents([(GARDEN, GARDEN.source)], collection=collection,
                                            extended_mode="extractive")
    assert again.representations == 0  # already there: a look-up only


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A model that writes a summary in words the document never uses, and one proposition per chunk."""
    tool = info.output_tools[0]
    prompt = " ".join(str(getattr(p, "content", "")) for m in messages for p in getattr(m, "parts", []))
    if "summary" in tool.parameters_json_schema.get("properties", {}):
        args: dict[str, Any] = {"summary": "An operations memo about zebra migration corridors and freight."
                                if "logistics" in prompt else "Notes on growing vegetables."}
    else:
        args = {"propositions": ["The Lyon depot loaded trucks late.", "The depot lost two pallets."]}
    return ModelResponse(parts=[ToolCallPart(tool.name, args)])


async def test_llm_summary_finds_a_chunk_through_words_only_it_has(runtime: Runtime, models: Any,
                                                                   router: SearchRouter, collection: str) -> None:
    llm_models = copy.copy(models)
    llm_models.representers = {"llm": LLMRepresenter(FunctionModel(scripted, model_name="scripted"))}
    ingestor = Ingestor(runtime.settings, runtime.postgres, runtime.neo4j, llm_models)
    ids = await ingest(ingestor, collection, mode="llm")
    [summary] = [r for r in await stored(runtime, collection, "summary") if str(r["document_id"]) == ids["logistics.md"]]
    assert summary["content"] == "An operations memo about zebra migration corridors and freight."
    generator = await runtime.postgres.pool.fetchval(
        "SELECT DISTINCT generator FROM representations WHERE collection = $1", collection)
    assert generator == "llm:scripted"
    query = "zebra migration corridors"
    plain = await rest_search(router, query, mode="keyword", collections=[collection])
    assert plain["results"] == []  # no chunk has these words
    response = await rest_search(router, query, mode="keyword", collections=[collection], extended=True)
    top = response["results"][0]
    assert top["document_id"] == ids["logistics.md"] and top["matched"]["kind"] == "summary"
    # Found by its words, not only by its vector: words no chunk has are the rarest terms of all.
    from graphrag.search.extended import MEAN_WORDS
    from graphrag.search.legs import BM25_B, BM25_K1
    from graphrag.stores.filters import compile_filter

    rows = await runtime.postgres.q.search.representation_keyword(
        query, collections=[collection], limit=10, k1=BM25_K1, b=BM25_B, mean_words=MEAN_WORDS,
        where=compile_filter(None))
    assert [(str(r["document_id"]), r["kind"]) for r in rows][:1] == [(ids["logistics.md"], "summary")]
    assert rows[0]["score"] > 0


async def test_llm_mode_without_a_model_fails_before_writing(ingestor: Ingestor, runtime: Runtime,
                                                             collection: str) -> None:
    with pytest.raises(ConfigurationError, match="GRAPHRAG_EXTENDED_MODEL"):
        await ingest(ingestor, collection, mode="llm")
    assert not await runtime.postgres.collection_info([collection])


def test_extractive_representer_embeds_propositions_under_the_title(models: Any) -> None:
    [reps] = ExtractiveRepresenter().represent(models.embedder, [("Garden notes", [GARDEN.text])])
    prop = next(r for r in reps if r.kind == "proposition")
    assert prop.embed_text == f"Garden notes: {prop.text}" and prop.vector is not None
    assert [r.kind for r in reps if r.kind != "proposition"] == ["title", "summary"]


async def test_rest_search_reports_what_matched(api: Any, runtime: Runtime, ingestor: Ingestor,
                                               collection: str) -> None:
    await ingest(ingestor, collection)
    async with api.async_client(timeout=120) as client:
        r = await client.post("/search", json={"query": "insurance premiums stayed flat", "extended": True,
                                               "collections": [collection], "limit": 2})
        assert r.status_code == 200, r.text
        hit = r.json()["results"][0]
        assert hit["matched"]["kind"] == "proposition" and hit["matched"]["text"].startswith("Insurance premiums")
        bad = await client.post("/search", json={"query": "x", "extended": "yes"})
        assert bad.status_code == 400
        # The collection recorded its mode: a document added over REST gets representations too.
        added = await client.post("/documents", json={"text": "# Bees\n\nBees pollinate the tomato flowers in June.",
                                                      "collection": collection})
        assert added.status_code == 201, added.text
    assert (await kinds(runtime, added.json()["id"]))["proposition"] == 1


async def test_extended_search_with_highlights_full_documents_formats_and_tools(
        api: Any, runtime: Runtime, models: Any, ingestor: Ingestor, collection: str) -> None:
    """The extended leg beside the other per-request options: highlight offsets still slice the hit's
    content, a full document keeps what matched, the text and voice formats and the agent/MCP tools
    take ``extended`` and ``expand``."""
    ids = await ingest(ingestor, collection)
    query = {"query": "insurance premiums stayed flat", "extended": True, "collections": [collection], "limit": 2}
    async with api.async_client(timeout=120) as client:
        lit = (await client.post("/search", json={**query, "highlight": True})).json()["results"][0]
        whole = (await client.post("/search", json={**query, "full_document_threshold": 0})).json()["results"][0]
        voice = await client.post("/search", json={**query, "format": "voice", "expand": True})
        text = await client.post("/search", json={**query, "format": "text"})
    assert lit["matched"]["kind"] == "proposition" and lit["highlights"]
    assert {lit["content"][h["start"]:h["end"]].lower() for h in lit["highlights"]} <= {
        "insurance", "premiums", "stayed", "flat"}
    assert whole["full_document"] is True and whole["document_id"] == ids["logistics.md"]
    assert whole["matched"]["kind"] == "proposition" and "Insurance premiums stayed flat" in whole["content"]
    assert "Lyon depot" in whole["content"]  # the document's other sections: the whole text
    assert voice.status_code == 200 and voice.headers["content-type"].startswith("text/plain")
    assert "Insurance premiums" in voice.text
    assert text.status_code == 200 and "[1] logistics.md" in text.text

    rt = Runtime(settings=runtime.settings, postgres=runtime.postgres, neo4j=runtime.neo4j, _models=models)
    deps = AgentDeps(rt, collections=[collection])
    found = await agent_tools.search(deps, "insurance premiums stayed flat", extended=True, limit=2)
    assert found.hits[0].matched.startswith("proposition: Insurance premiums")  # type: ignore[union-attr]
    schemas = {t.name: t.input_schema["properties"] for t in mcp_server.list_tools()}
    assert {"extended", "expand"} <= set(schemas["search"]) and {"extended", "expand"} <= set(schemas["hybrid_search"])
    result = await mcp_server.call_tool(deps, "hybrid_search", {"query": "insurance premiums stayed flat",
                                                                 "extended": True, "expand": True, "limit": 2})
    assert not result.is_error, result.content
    assert result.structured_content["hits"][0]["matched"].startswith("proposition:")  # type: ignore[index]


async def test_reembed_moves_representations_with_the_chunks(runtime: Runtime, ingestor: Ingestor,
                                                             settings: Any, collection: str) -> None:
    from pydantic import SecretStr

    from graphrag.ingest.ingest_models import IngestModels
    from graphrag.ingest.reembed import reembed
    from tests.fake_embeddings import FakeEmbeddings

    await ingest(ingestor, collection)
    with FakeEmbeddings(dim=64, api_key="sk-test") as fake:
        fake_models = IngestModels(settings.model_copy(update={
            "embedding_model": "openai:fake-64", "embedding_base_url": fake.base_url,
            "embedding_api_key": SecretStr("sk-test")}))
        report = await reembed(runtime.postgres, runtime.neo4j, fake_models, collection=collection,
                               model="openai:fake-64")
        assert report.switched
        rows = await runtime.postgres.pool.fetch(
            "SELECT DISTINCT embedding_model, vector_dims(embedding) AS dim, embedding_next IS NULL AS done "
            "FROM representations WHERE collection = $1", collection)
        assert [(r["embedding_model"], r["dim"], r["done"]) for r in rows] == [("openai:fake-64", 64, True)]
        router = SearchRouter(runtime.postgres, runtime.neo4j, fake_models.embedders, fake_models.nlp)
        response = await rest_search(router, "insurance premiums stayed flat", mode="vector", collections=[collection],
                                       extended=True, limit=2)
        assert response["legs"]["extended"]["status"] == "ok"
        assert response["results"][0]["matched"]["kind"] == "proposition"
