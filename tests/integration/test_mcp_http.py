"""The agent tools over MCP Streamable HTTP at ``/mcp`` of the REST API: the official MCP client over
real HTTP, the API's keys (a scoped key's tools see only its collections), and ``graphrag serve
--workers 2`` (stateless: one session's requests may reach different worker processes)."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import psutil
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.types import CallToolResult
from pydantic import SecretStr

from graphrag.api.auth import digest
from graphrag.api.running import read_record, record_path
from graphrag.config import Settings
from tests.conftest import ApiServer
from tests.serving import serve_process

REPO = Path(__file__).resolve().parents[2]
TOOLS = {"search", "vector_search", "hybrid_search", "graph_search", "global_search", "get_entity", "get_document",
         "list_documents"}
KEYS = {"admin": "mcp-admin-secret-1", "reader_a": "mcp-reader-a-secret-2"}
# The same people in both collections, so an unscoped search or graph walk would cross between them.
TEXT = {
    "A": {"curie.md": "# Marie Curie\n\nMarie Curie worked with Pierre Curie in Paris on radium.",
          "bohr.md": "# Niels Bohr\n\nNiels Bohr met Marie Curie in Copenhagen and Paris."},
    "B": {"secret.md": "# Project Falcon\n\nMarie Curie funded Project Falcon in Paris with Niels Bohr. "
                       "The codename is BLUEHERON."},
}
QUESTION = "Who funded Project Falcon with Marie Curie in Paris?"
#: An access-log line of an MCP request: the worker's process id and the request id.
ACCESS = re.compile(r"^INFO - [^\n]+? - (\d+) - graphrag\.api\.access - \w+ - POST /mcp 200 [\d.]+ms id=(\S+)", re.M)


def key_entries(a: str) -> str:
    return json.dumps([
        {"name": "admin", "sha256": digest(KEYS["admin"]).hex()},
        {"name": "reader-a", "sha256": digest(KEYS["reader_a"]).hex(), "collections": [a], "access": "read"},
    ])


@asynccontextmanager
async def mcp_session(url: str, key: str | None, **client: Any) -> AsyncIterator[ClientSession]:
    """An initialised MCP client session on ``url``/mcp, sending ``key`` as a bearer token; ``client``
    goes to the httpx2 client."""
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    headers.update(client.pop("headers", {}))
    async with httpx2.AsyncClient(headers=headers, timeout=180, **client) as http, \
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


def payload(result: CallToolResult) -> Any:
    assert not result.is_error, result.content
    return json.loads(result.content[0].text)  # type: ignore[union-attr]


def error_text(result: CallToolResult) -> str:
    assert result.is_error, result.content
    return " ".join(getattr(c, "text", "") for c in result.content)


@pytest.fixture(scope="module")
def scoped(settings: Settings, services: object, models: object) -> Iterator[dict[str, Any]]:
    """The API with an admin key and a read key scoped to collection A; documents in A and B."""
    a, b = f"mcp_a_{uuid.uuid4().hex[:8]}", f"mcp_b_{uuid.uuid4().hex[:8]}"
    locked = settings.model_copy(update={"api_keys": SecretStr(key_entries(a))})
    with ApiServer(locked, models) as server:
        ids: dict[str, str] = {}
        with httpx.Client(base_url=server.url, timeout=120, headers={"X-API-Key": KEYS["admin"]}) as c:
            for name, coll in (("A", a), ("B", b)):
                for source, text in TEXT[name].items():
                    r = c.post("/documents", json={"text": text, "source": source, "collection": coll})
                    assert r.status_code == 201, r.text
                    ids[f"{name}:{source}"] = r.json()["id"]
        yield {"url": server.url, "a": a, "b": b, "ids": ids}


@pytest.mark.timeout(300)
async def test_scoped_key_sees_only_its_collections_through_every_tool(scoped: dict[str, Any]) -> None:
    a, b = scoped["a"], scoped["b"]
    async with mcp_session(scoped["url"], KEYS["admin"]) as admin:
        # Unscoped, the question does reach collection B: the scoped runs below are real tests.
        everything = payload(await admin.call_tool("search", {"query": QUESTION, "collections": [a, b], "limit": 10}))
        assert b in {h["collection"] for h in everything["hits"]}
        assert payload(await admin.call_tool("list_documents", {}))["total"] >= 3

    async with mcp_session(scoped["url"], KEYS["reader_a"]) as session:
        tools = (await session.list_tools()).tools
        assert {t.name for t in tools} == TOOLS
        # The per-request search options are listed over HTTP as over stdio.
        options = {"highlight", "full_document_threshold", "token_limit", "format", "extended", "expand"}
        for t in tools:
            if t.name in ("search", "hybrid_search"):
                assert options <= set(t.input_schema["properties"]), t.name
        scoped_ext = payload(await session.call_tool("search", {"query": QUESTION, "limit": 10, "extended": True,
                                                                "expand": True}))
        assert {h["collection"] for h in scoped_ext["hits"]} == {a}
        for tool in ("search", "vector_search", "hybrid_search", "graph_search"):
            found = await session.call_tool(tool, {"query": QUESTION, "limit": 10})
            data = payload(found)
            assert data["hits"], f"{tool}: collection A answers"
            assert {h["collection"] for h in data["hits"]} == {a}, tool
            assert "BLUEHERON" not in found.content[0].text, tool  # type: ignore[union-attr]

        listed = payload(await session.call_tool("list_documents", {}))
        assert {d["collection"] for d in listed["documents"]} == {a}
        assert listed["total"] == len(TEXT["A"])
        assert payload(await session.call_tool("list_documents", {"collection": a}))["total"] == len(TEXT["A"])

        # Naming another collection is refused; its objects look like missing ones.
        assert "outside" in error_text(await session.call_tool("search", {"query": QUESTION, "collections": [b]}))
        assert "outside" in error_text(await session.call_tool("list_documents", {"collection": b}))
        secret_id = scoped["ids"]["B:secret.md"]
        assert f"no document with id {secret_id!r}" in error_text(
            await session.call_tool("get_document", {"document_id": secret_id}))
        assert "no entity named" in error_text(await session.call_tool("get_entity", {"entity": "Project Falcon"}))
        own = payload(await session.call_tool("get_document", {"document_id": scoped["ids"]["A:curie.md"]}))
        assert own["collection"] == a and "radium" in own["chunks"][0]["text"]
        curie = payload(await session.call_tool("get_entity", {"entity": "Marie Curie"}))
        assert curie["collection"] == a

    async with mcp_session(scoped["url"], KEYS["admin"]) as admin:
        other = payload(await admin.call_tool("get_entity", {"entity": "Marie Curie", "collections": [b]}))
        assert other["collection"] == b and other["id"] != curie["id"]
    async with mcp_session(scoped["url"], KEYS["reader_a"]) as session:
        # The id of the same name's entity in another collection is unknown to the scoped key.
        assert "no entity with id" in error_text(await session.call_tool("get_entity", {"entity": other["id"]}))


def test_mcp_needs_a_key_and_a_known_origin(scoped: dict[str, Any]) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    with httpx.Client(base_url=scoped["url"], timeout=60, headers=headers) as c:
        for sent in ({}, {"Authorization": "Bearer wrong-key"}):
            r = c.post("/mcp", json=initialize, headers=sent)
            assert r.status_code == 401, r.text
            assert r.headers["content-type"].startswith("application/problem+json")
            assert r.headers["www-authenticate"].startswith("Bearer")
        ok = c.post("/mcp", json=initialize, headers={"X-API-Key": KEYS["reader_a"]})
        assert ok.status_code == 200, ok.text
        assert ok.json()["result"]["serverInfo"]["name"] == "graphrag"
        # A browser page of another origin (DNS rebinding) is refused even with a key.
        evil = c.post("/mcp", json=initialize, headers={"X-API-Key": KEYS["reader_a"], "Origin": "http://evil.example"})
        assert evil.status_code == 403 and "GRAPHRAG_CORS_ORIGINS" in evil.json()["detail"]


async def test_mcp_client_without_a_key_is_refused(scoped: dict[str, Any]) -> None:
    statuses: list[int] = []

    async def seen(response: httpx2.Response) -> None:
        statuses.append(response.status_code)

    with pytest.raises(Exception):  # noqa: PT011, B017 - the SDK wraps the refusal in exception groups
        async with mcp_session(scoped["url"], None, event_hooks={"response": [seen]}):
            pass
    assert statuses == [401]


# --- graphrag serve --workers 2 ------------------------------------------------------------------
@pytest.fixture
def two_workers(settings: Settings, services: Any, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """``graphrag serve --workers 2`` with keys, as a child process on a free port; stopped after."""
    a = f"mcp_w_{uuid.uuid4().hex[:8]}"
    with serve_process(settings, tmp_path / "serve.log", workers=2, env={"GRAPHRAG_API_KEYS": key_entries(a)},
                       ready_headers={"X-API-Key": KEYS["admin"]}) as served:
        yield {"url": served.url, "proc": served.proc, "log": served.log, "a": a}
    left = read_record(record_path(settings))
    assert left is None or left.pid != served.proc.pid, "the server's record goes when it stops"


@pytest.mark.timeout(600)
async def test_a_session_works_across_worker_processes(settings: Settings, two_workers: dict[str, Any]) -> None:
    url, log, a = two_workers["url"], two_workers["log"], two_workers["a"]
    # The supervisor recorded itself for the home's commands, with the fact that it wants keys.
    record = read_record(record_path(settings))
    assert record is not None and record.url == url and record.pid == two_workers["proc"].pid and record.keys
    with httpx.Client(base_url=url, timeout=120, headers={"X-API-Key": KEYS["admin"]}) as c:
        for source, text in TEXT["A"].items():
            assert c.post("/documents", json={"text": text, "source": source, "collection": a}).status_code == 201
    workers = {p.pid for p in psutil.Process(two_workers["proc"].pid).children(recursive=True)}
    spread: set[int] = set()
    for n in range(12):
        session_id = f"mcp-session-{n}-{uuid.uuid4().hex[:8]}"
        # No kept-alive connection: each request of the session is a new connection, which the kernel
        # may hand to either worker. A worker holding session state would answer "session not found".
        async with mcp_session(url, KEYS["reader_a"], headers={"X-Request-ID": session_id},
                               limits=httpx2.Limits(max_keepalive_connections=0)) as session:
            assert {t.name for t in (await session.list_tools()).tools} == TOOLS
            for _ in range(3):
                hits = payload(await session.call_tool("search", {"query": "Who worked on radium?", "limit": 3}))["hits"]
                assert hits and {h["collection"] for h in hits} == {a}
        spread = {int(pid) for pid, rid in ACCESS.findall(log.read_text(errors="replace")) if rid == session_id}
        if len(spread) == 2:
            break
    # One session's requests were answered by both worker processes, and every one of them succeeded.
    assert len(spread) == 2 and spread <= workers, (spread, workers, log.read_text(errors="replace")[-3000:])
