"""The agent tools against the real stores, driven by pydantic-ai's test models (no real model is called)."""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.tools import RunContext, ToolDefinition

from graphrag import documents
from graphrag.agent import TOOLS, AgentDeps, build_agent, build_toolset
from graphrag.agent import tools as agent_tools
from graphrag.errors import InvalidInput, NotFound
from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime
from tests.helpers import ingest_docs

DOCS = {
    "apex.md": ("# Apex Logistics Inc.\n\n"
                "Apex Logistics Inc. was founded by Sarah Johnson in Oslo. The company builds warehouse robots."),
    "johnson.md": ("# Sarah Johnson\n\n"
                   "Sarah Johnson grew up in Bergen, Norway, where she studied mechanical engineering."),
    "rivers.md": "# Rivers\n\nThe Danube flows through Vienna, Budapest and Belgrade.",
}
QUESTION = "Who founded Apex Logistics?"



@pytest.fixture
async def corpus(tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> dict[str, str]:
    """The three documents ingested into the test's collection; title -> source."""
    await ingest_docs(ingestor, tmp_path, collection, DOCS)
    listed = await documents.list_documents(runtime, collection=collection)
    return {d["title"]: d["source"] for d in listed["documents"]}


@pytest.fixture
def deps(rt: Runtime, collection: str) -> AgentDeps:
    return AgentDeps(rt, collections=[collection])


def tool_returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]


def as_json(part: ToolReturnPart) -> Any:
    """A tool return as the model reads it (serialized), not as the Python object."""
    return json.loads(part.model_response_str())


async def test_every_tool_answers_from_the_stores(deps: AgentDeps, corpus: dict[str, str]) -> None:
    apex, johnson = corpus["Apex Logistics Inc."], corpus["Sarah Johnson"]
    listing = await agent_tools.list_documents(deps)
    apex_id = next(d.id for d in listing.documents if d.source == apex)
    # TestModel fills required arguments from a schema's examples; give it values the corpus can answer.
    examples = {"query": [QUESTION], "entity": ["Sarah Johnson"], "document_id": [apex_id]}

    def with_examples(ctx: RunContext[AgentDeps], defs: list[ToolDefinition]) -> list[ToolDefinition]:
        out = []
        for d in defs:
            schema = copy.deepcopy(d.parameters_json_schema)
            for name, values in examples.items():
                if name in schema.get("properties", {}):
                    schema["properties"][name]["examples"] = values
            out.append(dataclasses.replace(d, parameters_json_schema=schema))
        return out

    agent = build_agent(TestModel(call_tools="all"), toolset=build_toolset().prepared(with_examples))
    result = await agent.run(QUESTION, deps=deps)

    returns = {p.tool_name: p for p in tool_returns(result.all_messages())}
    assert set(returns) == set(TOOLS)
    assert all(p.outcome == "success" for p in returns.values()), [p.content for p in returns.values()]
    out = {name: as_json(p) for name, p in returns.items()}
    for name in ("search", "vector_search", "hybrid_search", "graph_search"):
        hits = out[name]["hits"]
        assert hits and hits[0]["source"] == apex, (name, hits)
        assert {"source", "title", "heading_path", "score", "text", "chunk_id", "document_id", "found_by"} <= set(
            hits[0])
        assert len(hits) <= deps.limit
    assert set(out["search"]["hits"][0]["found_by"]) >= {"vector", "keyword"}
    assert set(out["hybrid_search"]["hits"][0]["found_by"]) <= {"vector", "keyword"}
    graph = out["graph_search"]
    assert "Apex Logistics Inc." in [e["name"] for e in graph["entities"]]
    assert all(f["evidence_chunk_id"] for f in graph["facts"])

    entity = out["get_entity"]
    assert entity["name"] == "Sarah Johnson" and entity["collection"] == deps.collections[0]
    assert johnson in [p["source"] for p in entity["passages"]]
    related = {name for r in entity["relations"] for name in (r["source"], r["target"])}
    assert "Apex Logistics Inc." in related

    doc = out["get_document"]
    assert doc["id"] == apex_id and doc["source"] == apex and doc["chunk_count"] >= 1
    assert "Sarah Johnson" in " ".join(c["text"] for c in doc["chunks"])

    listed = out["list_documents"]
    assert listed["total"] == len(DOCS) and {d["source"] for d in listed["documents"]} == set(corpus.values())


async def test_scripted_agent_searches_reads_and_cites(deps: AgentDeps, corpus: dict[str, str]) -> None:
    """search -> get_document -> an answer that cites the source the tools returned."""
    seen: dict[str, Any] = {}

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.setdefault("instructions", info.instructions)
        returns = tool_returns(messages)
        if not returns:
            return ModelResponse(parts=[ToolCallPart("search", {"query": QUESTION, "limit": 3})])
        last = returns[-1]
        if last.tool_name == "search":
            hit = as_json(last)["hits"][0]
            return ModelResponse(parts=[ToolCallPart("get_document", {"document_id": hit["document_id"]})])
        doc = as_json(last)
        text = " ".join(c["text"] for c in doc["chunks"])
        founder = "Sarah Johnson" if "founded by Sarah Johnson" in text else "unknown"
        return ModelResponse(parts=[TextPart(f"Apex Logistics Inc. was founded by {founder} [{doc['source']}].")])

    agent = build_agent(FunctionModel(script))
    result = await agent.run(QUESTION, deps=deps)

    calls = [p.tool_name for m in result.all_messages() for p in m.parts if isinstance(p, ToolCallPart)]
    assert calls == ["search", "get_document"]
    search_return = next(p for p in tool_returns(result.all_messages()) if p.tool_name == "search")
    cited = as_json(search_return)["hits"][0]["source"]
    assert f"[{cited}]" in result.output
    assert "Sarah Johnson" in result.output
    assert cited == corpus["Apex Logistics Inc."]
    assert "[source]" in seen["instructions"] and deps.collections[0] in seen["instructions"]


async def test_bad_arguments_go_back_to_the_model_as_retries(deps: AgentDeps, corpus: dict[str, str]) -> None:
    bad = [
        ToolCallPart("search", {"query": "   "}, tool_call_id="empty"),
        ToolCallPart("vector_search", {"query": QUESTION, "limit": 0}, tool_call_id="limit"),
        ToolCallPart("get_document", {"document_id": "not-a-document"}, tool_call_id="unknown"),
        ToolCallPart("get_entity", {"entity": "Zebulon Quixotic"}, tool_call_id="nobody"),
        ToolCallPart("hybrid_search", {"query": QUESTION, "filters": {"year": {"$near": 3}}}, tool_call_id="filter"),
    ]

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if not tool_returns(messages):
            return ModelResponse(parts=bad)
        return ModelResponse(parts=[TextPart("I could not find that.")])

    agent = build_agent(FunctionModel(script))
    result = await agent.run(QUESTION, deps=deps)

    retried = {p.tool_call_id: p for p in tool_returns(result.all_messages()) if p.outcome == "retried"}
    assert set(retried) == {c.tool_call_id for c in bad}
    assert retried["limit"].retry is not None and retried["limit"].retry.cause == "validation_error"
    for call_id in ("empty", "unknown", "nobody", "filter"):
        assert retried[call_id].retry is not None and retried[call_id].retry.cause == "model_retry", call_id
    assert "query is empty" in retried["empty"].model_response_str()
    assert "no document with id 'not-a-document'" in retried["unknown"].model_response_str()
    assert "no entity named 'Zebulon Quixotic'" in retried["nobody"].model_response_str()
    assert "$near" in retried["filter"].model_response_str()
    assert result.output == "I could not find that."


async def test_build_agent_collections_scope_the_tools(rt: Runtime, corpus: dict[str, str], collection: str) -> None:
    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = tool_returns(messages)
        if not returns:
            return ModelResponse(parts=[ToolCallPart("list_documents", {})])
        return ModelResponse(parts=[TextPart(returns[-1].model_response_str())])

    agent = build_agent(FunctionModel(script), collections=[collection])
    result = await agent.run("What is in the knowledge base?", deps=AgentDeps(rt))
    listed = json.loads(result.output)
    assert listed["total"] == len(DOCS) and {d["collection"] for d in listed["documents"]} == {collection}


async def test_tool_functions_are_plain_async_functions(deps: AgentDeps, corpus: dict[str, str]) -> None:
    found = await agent_tools.get_entity(deps, "Apex Logistics")
    assert found.name == "Apex Logistics Inc."
    by_id = await agent_tools.get_entity(deps, found.id)
    assert by_id.id == found.id and not by_id.other_matches
    page = await agent_tools.list_documents(deps, limit=2)
    assert len(page.documents) == 2 and page.next_offset == 2
    rest = await agent_tools.list_documents(deps, limit=2, offset=2)
    assert len(rest.documents) == 1 and rest.next_offset is None
    with pytest.raises(NotFound):
        await agent_tools.get_document(deps, "3f0c8a47-0000-4000-8000-000000000000")
    with pytest.raises(InvalidInput):
        await agent_tools.get_document(deps, page.documents[0].id, first_chunk=99)
    with pytest.raises(InvalidInput):
        AgentDeps(deps.runtime, limit=0)


async def test_pdf_hits_and_passages_carry_their_page(tmp_path: Path, ingestor: Ingestor, deps: AgentDeps,
                                                      collection: str) -> None:
    """A PDF passage is cited with its page, in the tools' results and in what the model reads."""
    pdf = tmp_path / "eniac.pdf"
    pdf.write_bytes((Path(__file__).resolve().parents[2] / "samples" / "eniac.pdf").read_bytes())
    (tmp_path / "notes.md").write_text("# Notes\n\nBetty Holberton later wrote a sort-merge generator.")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 2, report.failed
    question = "Who were the first programmers of ENIAC?"

    found = await agent_tools.hybrid_search(deps, question, limit=3)
    top = found.hits[0]
    assert top.source == str(pdf) and top.page == 2 and top.citation == f"{pdf} p. 2"
    assert all(h.page is None and h.citation == h.source for h in found.hits if h.source.endswith("notes.md"))

    entity = await agent_tools.get_entity(deps, "Jean Bartik")
    assert [(p.page, p.citation) for p in entity.passages] == [(2, f"{pdf} p. 2")]
    doc = await agent_tools.get_document(deps, top.document_id)
    assert [c.page for c in doc.chunks] == [1, 2]

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = tool_returns(messages)
        if not returns:
            return ModelResponse(parts=[ToolCallPart("search", {"query": question, "limit": 3})])
        hit = as_json(returns[-1])["hits"][0]
        return ModelResponse(parts=[TextPart(f"Jean Bartik was one of them [{hit['citation']}].")])

    result = await build_agent(FunctionModel(script)).run(question, deps=deps)
    assert result.output.endswith(f"[{pdf} p. 2].")
