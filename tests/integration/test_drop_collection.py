"""Deleting a whole collection (`graphrag delete --all`, ``DELETE /collections/{name}``), against the real
stores: every row and node of it goes, its own vector index too, nothing of another collection does;
an outage of Neo4j leaves the graph's part in the outbox; a running job makes it wait."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from graphrag.api.auth import digest
from graphrag.errors import Conflict, NotFound, ServiceUnavailable
from graphrag.ingest.drop import drop_collection
from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime
from graphrag.stores.neo4j import GraphWrites
from tests.conftest import InProcessApi
from tests.helpers import run_cli

TEXTS = {
    "curie.md": "# Marie Curie\n\nMarie Curie worked with Pierre Curie in Paris on radium and polonium.",
    "bohr.md": "# Niels Bohr\n\nNiels Bohr met Marie Curie in Copenhagen. Bohr founded an institute there.",
}
#: Every PostgreSQL table that holds rows of a collection, and how its rows name the collection.
TABLES = {
    "documents": "collection = $1", "chunks": "collection = $1", "chunk_postings": "collection = $1",
    "lexeme_stats": "collection = $1", "collection_stats": "collection = $1", "suggest_terms": "collection = $1",
    "graph_outbox": "collection = $1", "jobs": "collection = $1", "collection_vector_indexes": "collection = $1",
    "representations": "collection = $1", "collections": "name = $1",
}


async def _pg_rows(rt: Runtime, collection: str) -> dict[str, int]:
    counts = {}
    for table, where in TABLES.items():
        counts[table] = await rt.postgres.pool.fetchval(f"SELECT count(*) FROM {table} WHERE {where}", collection)
    return counts


async def _graph_nodes(rt: Runtime, collection: str) -> dict[str, int]:
    records, _, _ = await rt.neo4j.driver.execute_query(
        "MATCH (n) WHERE n.collection = $c RETURN labels(n)[0] AS label, count(*) AS n", c=collection)
    return {r["label"]: r["n"] for r in records}


async def _fill(tmp_path: Path, ingestor: Ingestor, collection: str, texts: dict[str, str]) -> None:
    folder = tmp_path / collection
    folder.mkdir()
    for name, text in texts.items():
        (folder / name).write_text(text)
    report = await ingestor.ingest_paths([folder], collection=collection)
    assert report.ingested == len(texts) and not report.failed


async def test_cli_drop_removes_every_row_and_node_of_the_collection_and_nothing_else(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, settings: Any) -> None:
    gone, kept = f"drop_{uuid.uuid4().hex[:8]}", f"keep_{uuid.uuid4().hex[:8]}"
    await _fill(tmp_path, ingestor, gone, TEXTS)
    await _fill(tmp_path, ingestor, kept, {"curie.md": TEXTS["curie.md"]})
    index = await runtime.postgres.q.collections.ensure_collection_vector_index(gone, 384)
    env = {"GRAPHRAG_HOME": str(settings.home_dir)}
    communities = run_cli("communities", "--collection", gone, "--min-size", "2", env=env)
    assert communities.returncode == 0, communities.stderr
    before = await _pg_rows(runtime, gone)
    assert before["documents"] == 2 and before["chunks"] >= 2 and before["chunk_postings"] > 0
    assert before["collection_vector_indexes"] == 1 and before["collections"] == 1 and before["suggest_terms"] > 0
    graph = await _graph_nodes(runtime, gone)
    assert graph["Document"] == 2 and graph["Entity"] > 0 and graph.get("Community", 0) > 0
    kept_rows, kept_graph = await _pg_rows(runtime, kept), await _graph_nodes(runtime, kept)

    result = run_cli("delete", "--all", "--collection", gone, "--json", env=env)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"collection": gone, "deleted": True, "documents": 2,
                                         "chunks": before["chunks"], "graph_pending": False}
    assert set((await _pg_rows(runtime, gone)).values()) == {0}
    assert await _graph_nodes(runtime, gone) == {}
    assert not await runtime.postgres.pool.fetchval("SELECT count(*) FROM pg_indexes WHERE indexname = $1", index)
    # The other collection, which shares entity names, is whole, and still searched.
    assert await _pg_rows(runtime, kept) == kept_rows and await _graph_nodes(runtime, kept) == kept_graph
    found = run_cli("search", "radium", "--mode", "keyword", "--collection", kept, env=env)
    assert found.returncode == 0 and "curie.md" in found.stdout, found.stdout + found.stderr

    again = run_cli("delete", "--all", "--collection", gone, env=env)
    assert (again.returncode, again.stderr) == (2, f"graphrag: error: unknown collection {gone!r}\n")
    unnamed = run_cli("delete", "--all", env=env)
    assert unnamed.returncode == 2
    assert unnamed.stderr == "graphrag: error: --all needs --collection: name the collection to delete\n"
    # The same collection name can be used again from scratch.
    (tmp_path / "again").mkdir()
    await _fill(tmp_path / "again", ingestor, gone, {"bohr.md": TEXTS["bohr.md"]})
    assert (await _pg_rows(runtime, gone))["documents"] == 1


async def test_a_neo4j_outage_leaves_the_graph_to_the_outbox(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    collection = f"drop_{uuid.uuid4().hex[:8]}"
    await _fill(tmp_path, ingestor, collection, TEXTS)

    async def away(self: GraphWrites, name: str, **_: Any) -> dict[str, int]:
        raise ServiceUnavailable("Neo4j is unavailable (test)")

    with monkeypatch.context() as patched:
        patched.setattr(GraphWrites, "drop_collection", away)
        dropped = await drop_collection(runtime.postgres, runtime.outbox, collection)
    assert (dropped.documents, dropped.graph_pending) == (2, True)
    rows = await _pg_rows(runtime, collection)
    assert rows.pop("graph_outbox") == 1 and set(rows.values()) == {0}  # only the drop's entry is left
    assert (await _graph_nodes(runtime, collection))["Document"] == 2
    # Neo4j answers again: the entry is applied when its retry falls due (a second, after one failure).
    for _ in range(40):
        drained = await runtime.outbox.drain()
        if not await _graph_nodes(runtime, collection):
            break
        await asyncio.sleep(0.25)
    assert drained.error is None and await _graph_nodes(runtime, collection) == {}
    assert (await _pg_rows(runtime, collection))["graph_outbox"] == 0


async def test_a_running_job_makes_the_drop_wait_and_nothing_is_deleted(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime) -> None:
    collection = f"drop_{uuid.uuid4().hex[:8]}"
    await _fill(tmp_path, ingestor, collection, TEXTS)
    await runtime.postgres.pool.execute(
        "INSERT INTO jobs (kind, collection, status, started_at, heartbeat_at) VALUES ('text', $1, 'running', now(), now())",
        collection)
    before = await _pg_rows(runtime, collection)
    with pytest.raises(Conflict, match=f"collection {collection!r} has 1 ingestion job running"):
        await drop_collection(runtime.postgres, runtime.outbox, collection)
    assert await _pg_rows(runtime, collection) == before
    await runtime.postgres.pool.execute("UPDATE jobs SET status = 'failed', finished_at = now() WHERE collection = $1",
                                        collection)
    dropped = await drop_collection(runtime.postgres, runtime.outbox, collection)
    assert dropped.documents == 2 and set((await _pg_rows(runtime, collection)).values()) == {0}
    with pytest.raises(NotFound, match="unknown collection"):
        await drop_collection(runtime.postgres, runtime.outbox, collection)


def test_rest_delete_follows_the_key_scopes(settings: Any, services: Any, models: Any) -> None:
    a, b = f"drop_a_{uuid.uuid4().hex[:8]}", f"drop_b_{uuid.uuid4().hex[:8]}"
    keys = {"admin": "admin-secret-9", "reader_a": "reader-a-secret-8", "writer_a": "writer-a-secret-7"}
    entries = [{"name": "admin", "key": keys["admin"]},
               {"name": "reader-a", "sha256": digest(keys["reader_a"]).hex(), "collections": [a], "access": "read"},
               {"name": "writer-a", "sha256": digest(keys["writer_a"]).hex(), "collections": [a],
                "access": "read-write"}]
    locked = settings.model_copy(update={"api_keys": SecretStr(json.dumps(entries))})
    with InProcessApi(locked, models) as server:
        def client(who: str) -> Any:
            return server.client(timeout=120, headers={"X-API-Key": keys[who]})

        with client("admin") as admin:
            for coll in (a, b):
                r = admin.post("/documents", json={"text": TEXTS["curie.md"], "source": "curie.md", "collection": coll})
                assert r.status_code == 201, r.text
        with client("reader_a") as reader:
            r = reader.delete(f"/collections/{a}")
            assert r.status_code == 403 and "read-only" in r.json()["detail"], r.text
        with client("writer_a") as writer:
            r = writer.delete(f"/collections/{b}")  # not visible to this key: as if unknown
            assert r.status_code == 404 and r.headers["content-type"].startswith("application/problem+json"), r.text
            r = writer.delete("/collections/not a name")
            assert r.status_code == 400, r.text
            r = writer.delete(f"/collections/{a}")
            assert r.status_code == 200, r.text
            assert r.json() == {"collection": a, "deleted": True, "documents": 1, "chunks": 1, "graph_pending": False}
            r = writer.delete(f"/collections/{a}")
            assert r.status_code == 404 and f"unknown collection {a!r}" in r.json()["detail"], r.text
        with client("admin") as admin:
            assert admin.get("/documents", params={"collection": b}).json()["total"] == 1, "B untouched"
            r = admin.delete(f"/collections/{b}")
            assert r.status_code == 200 and r.json()["documents"] == 1, r.text


async def test_repair_finishes_a_drop_whose_graph_part_was_set_aside(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, settings: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from graphrag.repair import repair

    collection = f"drop_{uuid.uuid4().hex[:8]}"
    await _fill(tmp_path, ingestor, collection, TEXTS)
    communities = run_cli("communities", "--collection", collection, "--min-size", "2",
                          env={"GRAPHRAG_HOME": str(settings.home_dir)})
    assert communities.returncode == 0, communities.stderr

    async def away(self: GraphWrites, name: str, **_: Any) -> dict[str, int]:
        raise ServiceUnavailable("Neo4j is unavailable (test)")

    with monkeypatch.context() as patched:
        patched.setattr(GraphWrites, "drop_collection", away)
        assert (await drop_collection(runtime.postgres, runtime.outbox, collection)).graph_pending
    # Neo4j kept refusing it: the entry was set aside, and the graph still holds the whole collection.
    await runtime.postgres.pool.execute("UPDATE graph_outbox SET state = 'failed' WHERE collection = $1", collection)
    nodes = await _graph_nodes(runtime, collection)
    assert nodes["Document"] == 2 and nodes.get("Community", 0) > 0
    report = await repair(runtime, collection)
    assert report["collections"][collection] == {"dropped_from_graph": sum(nodes.values())}
    assert await _graph_nodes(runtime, collection) == {}
    assert set((await _pg_rows(runtime, collection)).values()) == {0}


async def test_an_ingest_whose_collection_is_deleted_meanwhile_writes_nothing_more(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    collection = f"drop_{uuid.uuid4().hex[:8]}"
    real_write = Ingestor._write

    async def dropped_first(self: Ingestor, batch: list[Any], report: Any) -> None:
        # The drop commits between the batch's model work (which recorded the collection) and its write.
        if (await runtime.postgres.collection_info([collection])).get(collection) is not None:
            await drop_collection(runtime.postgres, runtime.outbox, collection)
        await real_write(self, batch, report)

    monkeypatch.setattr(Ingestor, "_write", dropped_first)
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in TEXTS.items():
        (folder / name).write_text(text)
    report = await ingestor.ingest_paths([folder], collection=collection)
    assert report.ingested == 0 and len(report.failed) == 2
    assert all(f"collection {collection!r} was deleted during this ingest" in f["error"] for f in report.failed)
    assert set((await _pg_rows(runtime, collection)).values()) == {0}
    assert await _graph_nodes(runtime, collection) == {}
