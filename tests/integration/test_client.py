"""``graphrag.client`` against the real API on the real stores, and ``graphrag search`` answered by a
running ``graphrag serve`` of the same home (the same hits as a local search)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from graphrag.api.running import find_server, read_record, record_path
from graphrag.api.schemas import DocumentDetail, Hit, IngestedDocument, SearchResponse
from graphrag.client import APIError, GraphRAGClient
from graphrag.config import Settings
from tests.conftest import InProcessApi
from tests.serving import serve_process
from tests.helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
APEX = "# Apex Logistics Inc.\n\nApex Logistics Inc. was founded by Sarah Johnson. It builds warehouse robots."
TEA = "# Tea\n\nGreen tea is produced in China and Japan from unoxidised leaves."


async def test_client_round_trip(api: InProcessApi, collection: str, tmp_path: Path) -> None:
    async with GraphRAGClient(api.url, transport=api.transport) as client:
        assert (await client.health()).status == "ok"
        assert (await client.ready()).ready

        added = await client.add_document(APEX, source="apex.md", collection=collection, tags=["robots"],
                                          metadata={"year": 2021})
        assert isinstance(added, IngestedDocument) and added.status == "created" and added.chunks >= 1
        again = await client.add_document(APEX, source="apex.md", collection=collection, tags=["robots"],
                                          metadata={"year": 2021})
        assert again.status == "unchanged" and again.id == added.id

        (tmp_path / "tea.md").write_text(TEA)
        uploaded = await client.upload(tmp_path / "tea.md", collection=collection, tags=["drinks"])
        assert uploaded.status == "created" and uploaded.source == "tea.md"
        from_bytes = await client.upload(b"Turing proposed the imitation game in 1950.", filename="turing.txt",
                                         collection=collection, metadata={"year": 1950})
        assert from_bytes.source == "turing.txt"

        found = await client.search("Who founded Apex Logistics?", collections=[collection], limit=3)
        assert isinstance(found, SearchResponse) and isinstance(found.results[0], Hit)
        assert found.results[0].source == "apex.md" and found.results[0].collection == collection
        assert {h.source for h in (await client.search("imitation game", mode="keyword", collections=[collection],
                                                       filters={"year": {"$gte": 1900}})).results} == {"turing.txt"}

        page = await client.list_documents(collection=collection, limit=2)
        assert page.total == 3 and len(page.documents) == 2
        doc = await client.get_document(added.id)
        assert isinstance(doc, DocumentDetail) and "Sarah Johnson" in doc.chunks[0].content
        assert doc.tags == ["robots"] and doc.metadata["year"] == 2021

        people = await client.search_entities("Sarah Johnson", collection=collection)
        assert people.entities and people.entities[0].name == "Sarah Johnson"
        person = await client.get_entity(people.entities[0].id)
        assert person.collection == collection and any(c.document_id == added.id for c in person.chunks)

        stats = await client.stats()
        assert stats.collections[collection].documents == 3

        assert (await client.delete_document(added.id)).deleted
        with pytest.raises(APIError) as missing:
            await client.get_document(added.id)
        assert missing.value.status_code == 404 and missing.value.problem.status == 404
        assert missing.value.detail == f"no document with id {added.id!r}"
        assert missing.value.request_id

        dropped = await client.delete_collection(collection)
        assert (dropped.collection, dropped.deleted, dropped.documents, dropped.graph_pending) == (
            collection, True, 2, False)
        assert collection not in (await client.stats()).collections
        with pytest.raises(APIError) as gone:
            await client.delete_collection(collection)
        assert gone.value.status_code == 404 and gone.value.detail == f"unknown collection {collection!r}"


async def test_client_raises_problem_details(api: InProcessApi, collection: str) -> None:
    async with GraphRAGClient(api.url, transport=api.transport) as client:
        with pytest.raises(APIError) as bad:
            await client.search("   ")
        assert bad.value.status_code == 400 and "query" in bad.value.detail
        with pytest.raises(APIError) as limit:
            await client.search("tea", limit=0)
        assert limit.value.status_code == 400 and limit.value.problem.errors
        assert limit.value.problem.errors[0]["field"] == "limit"
        with pytest.raises(APIError) as unknown:
            await client.search("tea", collections=[collection])
        assert unknown.value.status_code == 404 and collection in unknown.value.detail
        with pytest.raises(APIError) as bad_filter:
            await client.search("tea", filters={"$bogus": 1})
        assert bad_filter.value.status_code == 400 and "$bogus" in bad_filter.value.detail
        # Endpoints without a typed method: the same errors.
        with pytest.raises(APIError) as nowhere:
            await client.request("GET", "/no-such-endpoint")
        assert nowhere.value.status_code == 404 and nowhere.value.problem.title == "Not found"


async def test_client_keys(settings: Settings, services: object, models: object, collection: str) -> None:
    keys = json.dumps([{"name": "reader", "key": "client-reader-key", "collections": [collection], "access": "read"}])
    with InProcessApi(settings.model_copy(update={"api_keys": SecretStr(keys)}), models) as server:
        async with GraphRAGClient(server.url, transport=server.transport) as anonymous:
            assert (await anonymous.health()).status == "ok"  # open without a key
            with pytest.raises(APIError) as refused:
                await anonymous.stats()
            assert refused.value.status_code == 401 and "API key is required" in refused.value.detail
        async with GraphRAGClient(server.url, api_key="client-reader-key", transport=server.transport) as reader:
            assert set((await reader.stats()).collections) <= {collection}
            with pytest.raises(APIError) as forbidden:
                await reader.add_document("some text", collection=collection)
            assert forbidden.value.status_code == 403 and "read-only" in forbidden.value.detail


# --- graphrag search through graphrag serve ------------------------------------------------------
SERVE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONPATH": str(REPO),
             # Both sides wait for slow legs on a busy machine, so a timeout cannot make the answers differ.
             "GRAPHRAG_LEG_TIMEOUT_S": "120"}
SEARCHES = re.compile(r"graphrag\.api\.access - \w+ - POST /search 200", re.M)


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env=env, replace_env=True)


@pytest.fixture
def serve(settings: Settings, services: Any, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """``graphrag serve`` of the test home as a child process on a free port; stopped after."""
    with serve_process(settings, tmp_path / "serve.log", workers=1, env=SERVE_ENV, host="127.0.0.1") as served:
        yield {"url": served.url, "proc": served.proc, "log": served.log, "env": served.env}


def searches(log: Path, at_least: int = 0) -> int:
    """The searches the server's access log holds; with ``at_least``, once it holds that many (the
    server writes the line after it sends the response, so a client can read the log before it is
    there), or after 30 s, whichever comes first."""
    deadline = time.monotonic() + 30
    while True:
        found = len(SEARCHES.findall(log.read_text(errors="replace")))
        if found >= at_least or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def without_timings(response: dict[str, Any]) -> dict[str, Any]:
    """A search response without its time measurements (they differ between any two runs)."""
    response = json.loads(json.dumps(response))
    response.pop("took_ms")
    for leg in response["legs"].values():
        leg.pop("took_ms")
    return response


@pytest.mark.timeout(900)
def test_cli_search_goes_through_a_running_serve(settings: Settings, serve: dict[str, Any], collection: str) -> None:
    url, log, env = serve["url"], serve["log"], serve["env"]
    record = read_record(record_path(settings))
    assert record is not None and record.url == url and record.pid == serve["proc"].pid and not record.keys
    with httpx.Client(base_url=url, timeout=300) as c:
        for source, text in (("apex.md", APEX), ("tea.md", TEA)):
            assert c.post("/documents", json={"text": text, "source": source, "collection": collection}).status_code == 201
    args = ["search", "Who founded Apex Logistics?", "--mode", "hybrid", "--collection", collection, "-k", "5"]

    before = searches(log)
    remote = cli(*args, "--json", env=env)
    assert remote.returncode == 0, remote.stderr
    assert searches(log, at_least=before + 1) == before + 1, "the search went through the server"
    local = cli(*args, "--json", "--local", env=env)
    assert local.returncode == 0, local.stderr
    assert searches(log) == before + 1, "--local searched in its own process"
    remote_body, local_body = json.loads(remote.stdout), json.loads(local.stdout)
    assert remote_body["results"] and remote_body["results"][0]["source"] == "apex.md"
    assert without_timings(remote_body) == without_timings(local_body)

    # The readable output too: the same lines after the first, which carries the timings.
    remote_text = cli(*args, env=env)
    local_text = cli(*args, "--local", env=env)
    assert remote_text.returncode == local_text.returncode == 0, remote_text.stderr + local_text.stderr
    assert searches(log, at_least=before + 2) == before + 2
    assert remote_text.stdout.splitlines()[1:] == local_text.stdout.splitlines()[1:]
    assert "Apex" in remote_text.stdout

    # A mistake in the request is reported as the local command reports it.
    unknown = cli("search", "tea", "--collection", "no_such_collection_here", env=env)
    assert unknown.returncode == 2 and unknown.stderr.startswith("graphrag: error: "), unknown.stderr
    assert unknown.stderr == cli("search", "tea", "--collection", "no_such_collection_here", "--local",
                                 env=env).stderr

    # Settings that shape answers otherwise than the server's (its leg timeout, another reranker): not its caller.
    same = settings.model_copy(update={"leg_timeout_s": float(SERVE_ENV["GRAPHRAG_LEG_TIMEOUT_S"])})
    assert find_server(same) is not None
    assert find_server(settings) is None
    assert find_server(same.model_copy(update={"reranker_model": "some-other-reranker"})) is None

    serve["proc"].terminate()
    serve["proc"].wait(timeout=60)
    assert not record_path(settings).exists(), "the record goes when the server stops"


def test_stale_record_is_ignored(settings: Settings, tmp_path: Path) -> None:
    home = settings.model_copy(update={"home": tmp_path})
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    from graphrag.api.running import fingerprint

    record_path(home).write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": int(dead.stdout), "keys": False,
                                             "fingerprint": fingerprint(home)}))
    assert find_server(home) is None  # that process is gone
    record_path(home).write_text(json.dumps({"url": "http://127.0.0.1:9", "pid": os.getpid(), "keys": False,
                                             "fingerprint": fingerprint(home)}))
    assert find_server(home) is not None
    record_path(home).write_text("{not json")
    assert find_server(home) is None
