"""Grounded answers against the real stores: ``POST /answer`` (JSON and Server-Sent Events) over real
HTTP, the answer service with pydantic-ai's ``FunctionModel``, the MCP ``answer`` tool and ``graphrag ask``.
No real model is called (``ALLOW_MODEL_REQUESTS = False``; ``test`` is pydantic-ai's ``TestModel``); the
OpenAI-compatible path talks to a loopback stand-in for such a server."""

from __future__ import annotations

import json
import os
import re
import subprocess
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from pydantic_ai import models
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from graphrag.agent import mcp
from graphrag.agent.deps import AgentDeps
from graphrag.answer import service
from graphrag.answer.model import AnswerModel
from graphrag.api.auth import digest
from graphrag.config import Settings
from graphrag.runtime import Runtime
from tests.conftest import REPO, InProcessApi
from tests.helpers import run_cli

KEYS = {"admin": "answer-admin-1", "reader_a": "answer-reader-a-2"}
TEXT = {
    "A": {"apex.md": "# Apex Logistics Inc.\n\nApex Logistics Inc. was founded by Sarah Johnson in Oslo. "
                     "The company builds warehouse robots.",
          "johnson.md": "# Sarah Johnson\n\nSarah Johnson grew up in Bergen, Norway, where she studied "
                        "mechanical engineering.",
          "rivers.md": "# Rivers\n\nThe Danube flows through Vienna, Budapest and Belgrade."},
    # The same question is answerable from collection B too, with a word only B holds.
    "B": {"rival.md": "# Apex Logistics rumours\n\nApex Logistics was secretly founded by Victor Quillfeather "
                      "in Tromso."},
}
QUESTION = "Who founded Apex Logistics?"



@pytest.fixture(scope="module")
def served(settings: Settings, services: object, models: object) -> Iterator[dict[str, Any]]:
    """An API with the test answer model and keys (an admin, a reader scoped to collection A), and the
    corpus posted into two collections of this module's own."""
    a, b = f"answer_a_{uuid.uuid4().hex[:8]}", f"answer_b_{uuid.uuid4().hex[:8]}"
    keys = [{"name": "admin", "key": KEYS["admin"]},
            {"name": "reader-a", "sha256": digest(KEYS["reader_a"]).hex(), "collections": [a], "access": "read"}]
    configured = settings.model_copy(update={"answer_model": "test", "api_keys": SecretStr(json.dumps(keys))})
    with InProcessApi(configured, models) as server:
        with server.client(timeout=120, headers={"X-API-Key": KEYS["admin"]}) as c:
            for name, coll in (("A", a), ("B", b)):
                for source, text in TEXT[name].items():
                    r = c.post("/documents", json={"text": text, "source": source, "collection": coll})
                    assert r.status_code == 201, r.text
        yield {"url": server.url, "api": server, "a": a, "b": b}


def _client(env: dict[str, Any], who: str = "admin") -> httpx.Client:
    return env["api"].client(timeout=180, headers={"Authorization": f"Bearer {KEYS[who]}"})


def _events(response: httpx.Response) -> list[tuple[str, dict[str, Any]]]:
    """The Server-Sent Events of a response, as (event, data) pairs."""
    events, name, data = [], None, []
    for line in response.iter_lines():
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and name is not None:
            events.append((name, json.loads("\n".join(data))))
            name, data = None, []
    return events


def _assert_citations_resolve(client: httpx.Client, body: dict[str, Any], hits: list[dict[str, Any]]) -> None:
    """Every citation names a hit by its number, and that hit is a chunk stored in its document."""
    assert body["citations"], body
    numbers = {int(n) for n in re.findall(r"\[(\d+)\]", body["answer"])}
    assert {c["n"] for c in body["citations"]} == numbers
    for c in body["citations"]:
        hit = hits[c["n"] - 1]
        assert (c["chunk_id"], c["document_id"], c["source"]) == (hit["chunk_id"], hit["document_id"], hit["source"])
        doc = client.get(f"/documents/{hit['document_id']}")
        assert doc.status_code == 200, doc.text
        stored = {ch["id"]: ch["content"] for ch in doc.json()["chunks"]}
        assert stored[hit["chunk_id"]] == hit["content"]


# --- REST ------------------------------------------------------------------------------------------
def test_answer_cites_real_hits(served: dict[str, Any]) -> None:
    with _client(served) as c:
        r = c.post("/answer", json={"query": QUESTION, "collections": [served["a"]]})
        assert r.status_code == 200, r.text
        body = r.json()
        hits = body["hits"]
        # The hits are /search results: the same shape, from the same router.
        search = c.post("/search", json={"query": QUESTION, "collections": [served["a"]], "limit": 5}).json()
        assert set(hits[0]) >= set(search["results"][0]) - {"timings"}
        assert len(hits) <= 5 and all(h["collection"] == served["a"] for h in hits)
        _assert_citations_resolve(c, body, hits)
        apex = next(n for n, h in enumerate(hits, 1) if h["source"] == "apex.md")
        assert f"Sarah Johnson in Oslo [{apex}]" in body["answer"]
        assert body["unsupported"] == [] and body["dropped"] is False
        assert body["model"] == "test"
        assert body["usage"]["requests"] == 1 and body["usage"]["output_tokens"] > 0
        assert body["usage"]["total_tokens"] == body["usage"]["input_tokens"] + body["usage"]["output_tokens"]
        assert set(body["legs"]) == {"vector", "keyword", "graph"}


def test_answer_streams_server_sent_events(served: dict[str, Any]) -> None:
    request = {"query": QUESTION, "collections": [served["a"]], "limit": 3}
    with _client(served) as c:
        whole = c.post("/answer", json=request).json()
        with c.stream("POST", "/answer", json=request, headers={"Accept": "text/event-stream"}) as r:
            assert r.status_code == 200
            assert r.headers["content-type"].startswith("text/event-stream")
            events = _events(r)
    names = [name for name, _ in events]
    assert names[0] == "hits" and names[-1] == "done" and set(names[1:-1]) == {"delta"} and len(names) > 3
    hits = events[0][1]["hits"]
    assert [h["chunk_id"] for h in hits] == [h["chunk_id"] for h in whole["hits"]]
    done = events[-1][1]
    text = "".join(data["text"] for name, data in events if name == "delta")
    assert text == done["answer"] == whole["answer"]
    assert done["citations"] == whole["citations"] and done["unsupported"] == [] and "hits" not in done
    assert done["usage"]["requests"] == 1 and done["model"] == "test"


def test_answer_without_hits_asks_no_model(served: dict[str, Any]) -> None:
    with _client(served) as c:
        r = c.post("/answer", json={"query": "Apex", "collections": [served["a"]],
                                    "filters": {"source": "nothing-has-this-source"}})
    body = r.json()
    assert r.status_code == 200 and body["hits"] == [] and body["citations"] == []
    assert body["answer"] == "The sources do not answer this question."
    assert body["model"] is None and body["usage"]["requests"] == 0


def test_scoped_key_answers_only_from_its_collections(served: dict[str, Any]) -> None:
    with _client(served) as admin:
        both = admin.post("/answer", json={"query": QUESTION, "collections": [served["a"], served["b"]]}).json()
        assert any(h["collection"] == served["b"] for h in both["hits"]), "unscoped, collection B answers too"
    with _client(served, "reader_a") as c:
        r = c.post("/answer", json={"query": QUESTION})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["hits"] and {h["collection"] for h in body["hits"]} == {served["a"]}
        assert "Quillfeather" not in json.dumps(body)
        with c.stream("POST", "/answer", json={"query": QUESTION}, headers={"Accept": "text/event-stream"}) as s:
            events = _events(s)
        assert {h["collection"] for h in events[0][1]["hits"]} == {served["a"]}
        assert "Quillfeather" not in json.dumps(events)
        for extra in ([served["b"]], [served["a"], served["b"]]):
            r = c.post("/answer", json={"query": QUESTION, "collections": extra})
            assert r.status_code == 403 and served["b"] in r.json()["detail"], r.text
        # Refused before anything streams.
        r = c.post("/answer", json={"query": QUESTION, "collections": [served["b"]]},
                   headers={"Accept": "text/event-stream"})
        assert r.status_code == 403 and r.headers["content-type"].startswith("application/problem+json")


def test_answer_without_a_model_is_501_naming_the_setting(settings: Settings, services: object,
                                                         models: object) -> None:
    with InProcessApi(settings.model_copy(update={"answer_model": None}), models) as server, \
            server.client(timeout=60) as c:
        for headers in ({}, {"Accept": "text/event-stream"}):
            r = c.post("/answer", json={"query": QUESTION}, headers=headers)
            assert r.status_code == 501, r.text
            assert r.headers["content-type"].startswith("application/problem+json")
            problem = r.json()
            assert problem["status"] == 501 and "GRAPHRAG_ANSWER_MODEL" in problem["detail"]
            assert "answer" not in problem
        assert c.post("/answer", json={"query": ""}).status_code == 400  # bad input is still a 400


# --- the service with scripted models --------------------------------------------------------------
@pytest.fixture
def rt(runtime: Runtime, models: Any) -> Runtime:
    return Runtime(settings=runtime.settings.model_copy(update={"answer_model": "test"}), postgres=runtime.postgres,
                   neo4j=runtime.neo4j, _models=models)


def _numbered(messages: list[ModelMessage]) -> dict[str, int]:
    """Source name -> its number, read from the prompt the model was given."""
    text = next(p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart))
    return {m.group(2): int(m.group(1)) for m in re.finditer(r"^\[(\d+)\] .*\((\S+)\)$", str(text), re.MULTILINE)}


async def test_citation_check_catches_a_sentence_citing_an_unrelated_hit(rt: Runtime, served: dict[str, Any]) -> None:
    def writer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = _numbered(messages)
        return ModelResponse(parts=[TextPart(
            f"Apex Logistics was founded by Sarah Johnson in Oslo [{n['apex.md']}]. "
            f"The Danube flows through Vienna and Budapest [{n['apex.md']}]. "
            f"Sarah Johnson studied mechanical engineering [{n['johnson.md']}][9].")])

    scripted = AnswerModel(FunctionModel(writer), "function:writer")
    options = service.AnswerOptions(collections=[served["a"]], limit=5)
    prepared = await service.prepare(rt, QUESTION, options, model=scripted)
    by_source = {h["source"]: n for n, h in enumerate(prepared.hits, 1)}
    assert {"apex.md", "johnson.md", "rivers.md"} <= set(by_source)
    result = await service.complete(rt, prepared)

    flagged = {u["sentence"]: u for u in result["unsupported"]}
    danube = f"The Danube flows through Vienna and Budapest [{by_source['apex.md']}]."
    assert flagged[danube]["reason"] == "not_supported" and flagged[danube]["support"] < 0.5
    assert flagged[danube]["cited"] == [by_source["apex.md"]]
    stray = next(u for u in result["unsupported"] if 9 in u["cited"])
    assert stray["reason"] == "unknown_citation"
    assert len(flagged) == 2, "the sentence its hit supports is not flagged"
    assert [c["n"] for c in result["citations"]] == [by_source["apex.md"], by_source["johnson.md"]]
    assert result["model"] == "function:writer" and not result["dropped"]

    dropping = await service.prepare(rt, QUESTION, service.AnswerOptions(collections=[served["a"]], limit=5,
                                                                         drop_unsupported=True), model=scripted)
    dropped = await service.complete(rt, dropping)
    assert dropped["dropped"] and "Danube" not in dropped["answer"] and "[9]" not in dropped["answer"]
    assert dropped["answer"].startswith("Apex Logistics was founded by Sarah Johnson in Oslo")
    assert len(dropped["unsupported"]) == 2


async def test_a_model_failing_mid_stream_ends_with_an_error_event(rt: Runtime, served: dict[str, Any]) -> None:
    def never(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise AssertionError("the stream path must not call the non-streaming function")

    async def breaks(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield "Apex Logistics was founded "
        raise ConnectionError("the endpoint went away")

    prepared = await service.prepare(rt, QUESTION, service.AnswerOptions(collections=[served["a"]]),
                                     model=AnswerModel(FunctionModel(never, stream_function=breaks), "function:breaks"))
    events = [event async for event in service.stream(rt, prepared)]
    assert [name for name, _ in events] == ["hits", "delta", "error"]
    error = events[-1][1]
    assert error["status"] == 503 and "function:breaks" in error["detail"] and "ConnectionError" in error["detail"]


# --- agent tool (MCP) --------------------------------------------------------------------------------
async def test_mcp_answer_tool(rt: Runtime, served: dict[str, Any]) -> None:
    assert "answer" in {t.name for t in mcp.list_tools(answer=True)}
    assert "answer" not in {t.name for t in mcp.list_tools()}
    result = await mcp.call_tool(AgentDeps(rt), "answer", {"question": QUESTION, "collections": [served["a"]]})
    assert not result.is_error, result.content
    data = result.structured_content
    assert data is not None and data["model"] == "test" and data["unsupported"] == []
    cited = {c["n"]: c for c in data["citations"]}
    assert cited and all(f"[{n}]" in data["answer"] for n in cited)
    assert any(c["source"] == "apex.md" and c["citation"] == "apex.md" for c in cited.values())

    off = Runtime(settings=rt.settings.model_copy(update={"answer_model": None}), postgres=rt.postgres,
                  neo4j=rt.neo4j, _models=rt._models)
    refused = await mcp.call_tool(AgentDeps(off), "answer", {"question": QUESTION})
    assert refused.is_error and "GRAPHRAG_ANSWER_MODEL" in refused.content[0].text  # type: ignore[union-attr]


# --- CLI ---------------------------------------------------------------------------------------------
def _ask(settings: Settings, tmp_path: Path, *args: str, model: str | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHRAG_ANSWER_")}
    env.update(GRAPHRAG_HOME=str(settings.home_dir), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               PYTHONPATH=str(REPO))
    if model:
        env["GRAPHRAG_ANSWER_MODEL"] = model
    return run_cli("ask", *args, env=env, replace_env=True, cwd=tmp_path)


def test_cli_ask_with_the_test_model(settings: Settings, served: dict[str, Any], tmp_path: Path) -> None:
    done = _ask(settings, tmp_path, QUESTION, "--collection", served["a"], model="test")
    assert done.returncode == 0, done.stderr
    answer, _, sources = done.stdout.partition("\nSources:\n")
    assert re.search(r"founded by Sarah Johnson in Oslo \[\d\]\.", answer), done.stdout
    cited = re.findall(r"^  \[(\d+)\] (.+) \((.+)\)$", sources, re.MULTILINE)
    assert ("Apex Logistics Inc.", "apex.md") in {(title, source) for _, title, source in cited}
    assert {n for n, _, _ in cited} == set(re.findall(r"\[(\d+)\]", answer))


def test_cli_ask_without_a_model_fails_in_one_line(settings: Settings, tmp_path: Path) -> None:
    done = _ask(settings, tmp_path, QUESTION, model=None)
    assert done.returncode != 0 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "GRAPHRAG_ANSWER_MODEL" in lines[0], done.stderr


# --- an OpenAI-compatible endpoint (the Ollama / vLLM path) ------------------------------------------
class _ChatCompletions:
    """A loopback stand-in for an OpenAI-compatible server (no such server runs here): it answers
    ``POST /v1/chat/completions`` like one, citing the prompt's apex.md source, and keeps the requests."""

    def __init__(self) -> None:
        import http.server
        import threading

        outer = self
        self.requests: list[dict[str, Any]] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
                prompt = body["messages"][-1]["content"]
                n = re.search(r"^\[(\d+)\] .*\(apex\.md\)$", prompt, re.MULTILINE)
                text = f"Apex Logistics was founded by Sarah Johnson in Oslo [{n.group(1) if n else 0}]."
                usage = {"prompt_tokens": 100, "completion_tokens": 12, "total_tokens": 112}
                head = {"id": "c1", "created": 0, "model": body["model"]}
                if body.get("stream"):
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.end_headers()
                    words = text.split(" ")
                    for i, word in enumerate(words):
                        delta = {"content": word + (" " if i + 1 < len(words) else "")}
                        chunk = {**head, "object": "chat.completion.chunk",
                                 "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    last = {**head, "object": "chat.completion.chunk", "usage": usage,
                            "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                    self.wfile.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
                    return
                data = json.dumps({**head, "object": "chat.completion", "usage": usage, "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _ChatCompletions:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


async def test_an_openai_compatible_endpoint_answers_with_citations(rt: Runtime, served: dict[str, Any]) -> None:
    models.ALLOW_MODEL_REQUESTS = True  # only the loopback endpoint below is reached
    with _ChatCompletions() as endpoint:
        local = Runtime(settings=rt.settings.model_copy(update={
            "answer_model": "llama3.2", "answer_base_url": endpoint.url, "answer_api_key": SecretStr("local-key")}),
            postgres=rt.postgres, neo4j=rt.neo4j, _models=rt._models)
        options = service.AnswerOptions(collections=[served["a"]], limit=3)
        whole = await service.complete(local, await service.prepare(local, QUESTION, options))
        events = [e async for e in service.stream(local, await service.prepare(local, QUESTION, options))]
    apex = next(n for n, h in enumerate(whole["hits"], 1) if h["source"] == "apex.md")
    assert whole["answer"] == f"Apex Logistics was founded by Sarah Johnson in Oslo [{apex}]."
    assert whole["model"] == "openai:llama3.2" and whole["unsupported"] == []
    assert [c["n"] for c in whole["citations"]] == [apex]
    assert whole["usage"] == {"requests": 1, "input_tokens": 100, "output_tokens": 12, "total_tokens": 112}
    sent = endpoint.requests[0]
    assert sent["path"] == "/v1/chat/completions" and sent["auth"] == "Bearer local-key"
    assert sent["body"]["model"] == "llama3.2" and "[1] " in sent["body"]["messages"][-1]["content"]
    assert any("cite" in m["content"] for m in sent["body"]["messages"] if m["role"] == "system")
    done = events[-1][1]
    assert "".join(d["text"] for name, d in events if name == "delta") == done["answer"] == whole["answer"]
    assert endpoint.requests[1]["body"]["stream"] is True and done["usage"]["output_tokens"] == 12
