"""Schemas and stores against the real PostgreSQL+pgvector and Neo4j servers."""

from __future__ import annotations

import json
import math
import uuid

from graphrag.runtime import Runtime
from graphrag.stores import queries

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
    rows = await runtime.postgres.fetch("migrations", "applied_migrations")
    assert [r["version"] for r in rows] == [v for v, _ in queries.migrations()]


async def test_health_reports_postgres_18_and_pgvector_08(runtime: Runtime) -> None:
    health = await runtime.postgres.health()
    assert health.ok
    assert health.version.startswith("18.")
    assert health.pgvector.startswith("0.8.")


async def test_hnsw_cosine_query_returns_nearest_and_uses_index(runtime: Runtime, collection: str) -> None:
    pool = runtime.postgres.pool
    async with pool.acquire() as conn:
        doc_id = await conn.fetchval(
            queries.sql("documents", "insert_document"), collection, "src.md", "T", "h", json.dumps({}), []
        )
        rows = [
            (doc_id, collection, i, f"chunk {i}", [], 0, 7, 2, False, "{}", _basis(i), MODEL) for i in range(20)
        ]
        await conn.executemany(queries.sql("documents", "insert_chunk"), rows)
    try:
        query = _unit([v + (0.2 if i == 7 else 0.0) for i, v in enumerate(_basis(7))])
        async with pool.acquire() as conn:
            nearest = await conn.fetch(queries.with_dimension(queries.sql("chunks", "nearest_chunks"), 384),
                                       query, collection, MODEL, 3)
        assert nearest[0]["content"] == "chunk 7"
        assert nearest[0]["similarity"] > nearest[1]["similarity"]
        async with pool.acquire() as conn, conn.transaction():
            # On 20 rows a scan + sort is cheapest; forbid both so the plan shows what large tables get.
            await conn.execute("SET LOCAL enable_seqscan = off")
            await conn.execute("SET LOCAL enable_sort = off")
            plan = await conn.fetch(queries.with_dimension(queries.sql("chunks", "explain_nearest_chunks"), 384),
                                    query, collection, MODEL, 3)
        text = "\n".join(r[0] for r in plan)
        assert "chunks_embedding_hnsw" in text, text
    finally:
        async with pool.acquire() as conn:
            await conn.execute(queries.sql("documents", "delete_collection"), collection)


async def test_neo4j_constraints_and_indexes_exist(runtime: Runtime) -> None:
    indexes = {r["name"]: r for r in await runtime.neo4j.run("admin", "list_indexes")}
    assert indexes["entity_embedding"]["type"] == "VECTOR"
    assert indexes["entity_name"]["type"] == "FULLTEXT"
    assert all(indexes[n]["state"] == "ONLINE" for n in ("entity_embedding", "entity_name"))
    constraints = {r["name"]: r for r in await runtime.neo4j.run("admin", "list_constraints")}
    for name, label in (("document_id", "Document"), ("chunk_id", "Chunk"), ("entity_id", "Entity")):
        assert constraints[name]["type"] == "UNIQUENESS"
        assert constraints[name]["labelsOrTypes"] == [label]


async def test_neo4j_vector_and_fulltext_indexes_answer(runtime: Runtime, collection: str) -> None:
    entities = [
        {"id": str(uuid.uuid4()), "collection": collection, "name": name, "label": "ORG",
         "key": name.lower(), "vectors": {"embedding": _basis(i)}}
        for i, name in enumerate(["Acme Rockets", "Globex Corporation", "Initech Software"])
    ]
    await runtime.neo4j.run("entities", "upsert_entities", entities=entities)
    try:
        await runtime.neo4j.run("admin", "await_indexes", seconds=60)
        by_vector = await runtime.neo4j.run(
            "entities", "entities_by_vector", k=10, embedding=_basis(1), collections=[collection],
            index="entity_embedding",
        )
        assert by_vector[0]["name"] == "Globex Corporation"
        by_name = await runtime.neo4j.run(
            "entities", "entities_by_name", query="initech", k=5, collections=[collection]
        )
        assert [r["name"] for r in by_name] == ["Initech Software"]
    finally:
        await runtime.neo4j.run("entities", "delete_collection", collection=collection)


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
