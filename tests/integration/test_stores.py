"""Schemas and stores against the real PostgreSQL+pgvector and Neo4j servers."""

from __future__ import annotations

import json
import math
import uuid

import numpy as np

from graphrag.runtime import Runtime
from graphrag.search.config import SearchConfig
from graphrag.search.legs import vector_leg
from graphrag.stores import queries
from graphrag.stores.neo4j import GraphWrites

MODEL = "test-model"


def _unit(vec: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


def _basis(i: int, dim: int = 384) -> list[float]:
    vec = [0.01] * dim
    vec[i] = 1.0
    return _unit(vec)


async def test_migrations_apply_once_and_rerun_cleanly(runtime: Runtime) -> None:
    assert await runtime.postgres.migrate() == []  # already applied by open_services
    assert await runtime.postgres.migrate() == []
    assert await runtime.postgres.pending_migrations() == []
    assert await runtime.postgres.applied_migrations() == [v for v, _ in queries.migrations()]


async def test_health_reports_postgres_18_and_pgvector_08(runtime: Runtime) -> None:
    health = await runtime.postgres.health()
    assert health.ok
    assert health.version.startswith("18.")
    assert health.pgvector.startswith("0.8.")


def _vector_leg(dim: int) -> queries.Statement:
    """The product's vector leg statement with no filter, as graphrag/search/legs.py runs it."""
    return queries.variant("search", "vector_leg", "TRUE", dim)


async def test_hnsw_cosine_query_returns_nearest_and_uses_index(runtime: Runtime, collection: str) -> None:
    # Written and read through the product's own statements (the write path and the vector leg).
    async with runtime.postgres.unit_of_work() as uow:
        doc_id, inserted = await uow.documents.upsert(collection=collection, source="src.md", title="T",
                                                      content_hash="h", metadata=json.dumps({}), tags=[])
        assert inserted
        await uow.documents.replace_chunks([doc_id], [
            (uuid.uuid4(), doc_id, collection, i, f"chunk {i}", [], 0, 7, 2, False, "{}", _basis(i), MODEL, "english")
            for i in range(20)
        ])
        await uow.documents.stats_add([doc_id])
    try:
        query = _unit([v + (0.2 if i == 7 else 0.0) for i, v in enumerate(_basis(7))])
        # Through the product's leg (its ef_search and iterative scan): the shared index also holds the
        # other tests' chunks, and a plain HNSW scan could return fewer than 3 rows of this collection.
        config = SearchConfig(collections=(collection,), overfetch=3)
        leg = await vector_leg(runtime.postgres, np.asarray(query, dtype=np.float32), config, MODEL)
        ids = {cid: score for cid, score, _ in leg.hits}
        by_id = {str(r["id"]): r["content"] for r in await runtime.postgres.q.documents.chunks_of(doc_id)}
        assert len(ids) == 3
        ranked = [cid for cid, _, _ in leg.hits]
        assert by_id[ranked[0]] == "chunk 7"
        assert ids[ranked[0]] > ids[ranked[1]]
        async with runtime.postgres.pool.acquire() as conn, conn.transaction():
            # On 20 rows a scan + sort is cheapest; forbid both so the plan shows what large tables get.
            await conn.execute("SET LOCAL enable_seqscan = off")
            await conn.execute("SET LOCAL enable_sort = off")
            st = _vector_leg(384)
            values = st.bind({"embedding": query, "collections": [collection], "model": MODEL, "limit": 3})
            plan = await conn.fetch("EXPLAIN (FORMAT TEXT) " + st.text, *values)
        text = "\n".join(r[0] for r in plan)
        assert "chunks_embedding_hnsw" in text, text
    finally:
        async with runtime.postgres.unit_of_work() as uow:
            await uow.documents.delete([doc_id])


async def test_neo4j_constraints_and_indexes_exist(runtime: Runtime) -> None:
    # Everything cypher/schema.cypher creates is there and online (the readiness check's own look-up).
    assert await runtime.neo4j.missing_schema() == []
    indexes = {r["name"]: r for r in await runtime.neo4j.q.admin.indexes()}
    assert indexes["entity_embedding"]["type"] == "VECTOR"
    assert indexes["entity_name"]["type"] == "FULLTEXT"
    # A uniqueness constraint is backed by a range index of the same name.
    for name, label in (("document_id", "Document"), ("chunk_id", "Chunk"), ("entity_id", "Entity")):
        assert indexes[name]["type"] == "RANGE" and indexes[name]["labelsOrTypes"] == [label]


async def test_neo4j_vector_and_fulltext_indexes_answer(runtime: Runtime, collection: str) -> None:
    # Entities written by the product's graph write (the outbox's), read by the product's name search.
    entities = [
        {"id": str(uuid.uuid4()), "collection": collection, "name": name, "label": "ORG", "key": name.lower(),
         "norm": name.lower(), "aliases": [], "vectors": {"embedding": _basis(i)}}
        for i, name in enumerate(["Acme Rockets", "Globex Corporation", "Initech Software"])
    ]
    await GraphWrites(runtime.neo4j).replace_documents([], [], [], entities, [], [])
    try:
        await runtime.neo4j.q.admin.await_indexes(60)
        by_name = await runtime.neo4j.q.entities.search("initech", [collection], 5)
        assert [r["name"] for r in by_name] == ["Initech Software"]
        # The vector index the entity vectors go to answers too (a test's own query: search reads it
        # through graph_leg's statements).
        nearest = await runtime.neo4j.driver.execute_query(
            "CALL db.index.vector.queryNodes('entity_embedding', 10, $embedding) YIELD node, score "
            "WHERE node.collection = $collection RETURN node.name AS name ORDER BY score DESC",
            {"embedding": _basis(1), "collection": collection}, database_=runtime.neo4j.database)
        assert nearest.records[0]["name"] == "Globex Corporation"
    finally:
        await runtime.neo4j.driver.execute_query("MATCH (n) WHERE n.collection = $collection DETACH DELETE n",
                                                 {"collection": collection}, database_=runtime.neo4j.database)


async def test_a_named_advisory_lock_admits_one_holder_at_a_time(runtime: Runtime) -> None:
    """Processes starting together (API workers, replicas) apply the graph schema under such a lock."""
    import asyncio

    order: list[str] = []

    async def hold(tag: str, seconds: float) -> None:
        async with runtime.postgres.advisory_lock("graphrag.test_lock"):
            order.append(f"{tag} in")
            await asyncio.sleep(seconds)
            order.append(f"{tag} out")

    await asyncio.gather(hold("a", 0.3), hold("b", 0.0), hold("c", 0.1))
    assert [order[i].split()[0] for i in range(0, 6, 2)] == [order[i].split()[0] for i in range(1, 6, 2)]
    assert all(order[i].endswith("in") and order[i + 1].endswith("out") for i in range(0, 6, 2))


async def test_pooled_plain_reads_skip_the_reset_and_statement_settings_never_leak(runtime: Runtime,
                                                                                     monkeypatch: object) -> None:
    """A checkout that only ran a plain read goes back without asyncpg's reset round trip; settings for
    one statement, and a read that failed, still get the full reset."""
    import asyncpg
    import pytest

    from graphrag.stores.postgres import PostgresStore
    from graphrag.stores.repo.base import Condition, Sql

    resets: list[int] = []
    original = asyncpg.Connection.reset

    ours: set[int] = set()

    async def counted(self: asyncpg.Connection, *, timeout: float | None = None) -> None:
        if id(self) in ours:  # the patch is on the class: other pools' connections (other tests' work) pass
            resets.append(1)
        await original(self, timeout=timeout)

    monkeypatch.setattr(asyncpg.Connection, "reset", counted)  # type: ignore[attr-defined]
    store = await PostgresStore.connect(runtime.postgres._dsn, min_size=1, max_size=1)  # one connection
    try:
        async with store.pool.acquire() as proxy:
            ours.add(id(proxy._con))  # type: ignore[attr-defined]
        resets.clear()
        sql = Sql(store.pool)
        default = await sql._read("fetchval", "SHOW work_mem", [])
        assert resets == [1]  # SHOW is not a plain read (as SET is not): full reset
        resets.clear()
        assert await sql.fetchval("search", "collection_chunk_count", collections=None) is not None
        assert await sql.fetch_where("search", "chunk_rows", where=Condition(), ids=[], collections=None,
                                     vectors=False) == []
        assert resets == []  # plain reads: no reset
        await sql.fetch_where("search", "chunk_rows", where=Condition(), ids=[], collections=None, vectors=False,
                              settings={"work_mem": "77kB"})
        assert resets == [1]
        async with store.pool.acquire() as conn:  # the same (only) connection: the setting was taken back
            assert await conn.fetchval("SHOW work_mem") == default
            # Generic plans are the session's own setting, so the reset keeps them.
            assert await conn.fetchval("SHOW plan_cache_mode") == "force_generic_plan"
        await sql.fetch_where("search", "chunk_rows", where=Condition(), ids=[], collections=None, vectors=False,
                              settings={"plan_cache_mode": "force_custom_plan"})
        async with store.pool.acquire() as conn:
            assert await conn.fetchval("SHOW plan_cache_mode") == "force_generic_plan"
        resets.clear()  # that checkout was reset too (not a plain read through Sql)
        with pytest.raises(asyncpg.DivisionByZeroError):
            await sql._read("fetchval", "SELECT 1 / 0", [])
        assert resets == [1]
    finally:
        await store.close()


async def test_one_request_reads_the_collections_records_once(runtime: Runtime, monkeypatch: object) -> None:
    """Inside ``one_request`` (a search: the existence check, then the model lookup) the collections'
    records are read once per set of names; outside it every call reads them."""
    store = runtime.postgres
    area = store.q.collections
    reads: list[object] = []
    original = area.info

    async def counted(names: list[str] | None) -> object:
        reads.append(names)
        return await original(names)

    monkeypatch.setattr(area, "info", counted)  # type: ignore[attr-defined]
    await store.collection_info(None)
    await store.collection_info(None)
    assert len(reads) == 2
    reads.clear()
    with store.one_request():
        first = await store.collection_info(None)
        assert await store.collection_info(None) is first
        await store.collection_info(["nothing_here"])  # other names: read on their own
    assert len(reads) == 2
    await store.collection_info(None)  # the request is over: read again
    assert len(reads) == 3
