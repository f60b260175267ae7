"""``graphrag mcp`` as a real subprocess, driven by the official MCP client over stdio."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.types import CallToolResult

from graphrag.config import Settings
from graphrag.ingest.pipeline import Ingestor

REPO = Path(__file__).resolve().parents[2]
TOOLS = {"search", "vector_search", "hybrid_search", "graph_search", "global_search", "get_entity", "get_document",
         "list_documents"}
DOCS = {
    "apex.md": "# Apex Logistics Inc.\n\nApex Logistics Inc. was founded by Sarah Johnson. It builds warehouse robots.",
    "tea.md": "# Tea\n\nGreen tea is produced in China and Japan from unoxidised leaves.",
}


def server_params(settings: Settings) -> StdioServerParameters:
    # The client passes only a minimal environment on; hand over this session's store settings.
    env = {k: v for k, v in os.environ.items() if k.startswith("GRAPHRAG_")}
    env.update(GRAPHRAG_HOME=str(settings.home_dir), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    return StdioServerParameters(command=sys.executable, args=["-m", "graphrag.cli", "mcp"], env=env, cwd=REPO)


def payload(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


def error_text(result: CallToolResult) -> str:
    assert result.is_error
    return " ".join(getattr(c, "text", "") for c in result.content)


@pytest.mark.timeout(300)
async def test_mcp_server_serves_the_tools(settings: Settings, services: object, ingestor: Ingestor,
                                           collection: str, tmp_path: Path) -> None:
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "eniac.pdf").write_bytes((REPO / "samples" / "eniac.pdf").read_bytes())
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == len(DOCS) + 1, report.failed

    with anyio.fail_after(240):  # the server loads its own models (tens of seconds on a small machine)
        async with stdio_client(server_params(settings)) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.server_info.name == "graphrag" and "[source]" in (init.instructions or "")

            listed = await session.list_tools()
            assert {t.name for t in listed.tools} == TOOLS
            search_tool = next(t for t in listed.tools if t.name == "search")
            assert "query" in search_tool.input_schema["required"]
            assert search_tool.input_schema["properties"]["limit"]["description"]

            result = await session.call_tool(
                "search", {"query": "Who founded Apex Logistics?", "collections": [collection], "limit": 3},
                read_timeout_seconds=180)
            hits = payload(result)["hits"]
            assert hits[0]["source"].endswith("apex.md") and hits[0]["collection"] == collection
            assert result.structured_content is not None and result.structured_content["hits"] == hits

            doc = payload(await session.call_tool("get_document", {"document_id": hits[0]["document_id"]}))
            assert "Sarah Johnson" in doc["chunks"][0]["text"]

            # A PDF passage comes with its page.
            pdf_hits = payload(await session.call_tool(
                "hybrid_search", {"query": "first programmers of ENIAC", "collections": [collection], "limit": 3}))["hits"]
            assert pdf_hits[0]["source"].endswith("eniac.pdf") and pdf_hits[0]["page"] == 2
            assert pdf_hits[0]["citation"] == pdf_hits[0]["source"] + " p. 2"
            assert hits[0]["page"] is None and hits[0]["citation"] == hits[0]["source"]

            empty = await session.call_tool("search", {"query": "  ", "collections": [collection]})
            assert "query is empty" in error_text(empty)
            too_many = await session.call_tool("search", {"query": "tea", "limit": 0})
            assert "limit" in error_text(too_many)
            unknown = await session.call_tool("get_document", {"document_id": "not-a-document"})
            assert "no document with id 'not-a-document'" in error_text(unknown)
            bad_filter = await session.call_tool("search", {"query": "tea", "filters": {"$bogus": 1}})
            assert "$bogus" in error_text(bad_filter)
            missing = await session.call_tool("get_entity", {})
            assert "entity" in error_text(missing)
            assert "unknown tool" in error_text(await session.call_tool("delete_everything", {}))

            # The session survives the errors.
            again = payload(await session.call_tool("list_documents", {"collection": collection}))
            assert again["total"] == len(DOCS) + 1
