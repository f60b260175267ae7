"""A large collection's own HNSW index (graphrag/ingest/vector_index.py) on the real PostgreSQL."""

from __future__ import annotations

import json
import uuid

import numpy as np

from graphrag.health import collect_status
from graphrag.ingest.vector_index import index_large_collections
from graphrag.runtime import Runtime
from graphrag.search.config import SearchConfig
from graphrag.search.legs import hnsw_settings, vector_leg
from graphrag.stores import queries

MODEL = "test-vector-index-model"
DIM = 384


async def _write(runtime: Runtime, collection: str, vectors: np.ndarray) -> uuid.UUID:
    """One document of ``len(vectors)`` chunks, written through the product's own statements."""
    await runtime.postgres.q.collections.create(collection, MODEL, "english")
    async with runtime.postgres.unit_of_work() as uow:
        doc_id, _ = await uow.documents.upsert(collection=collection, source="src.md", title="T",
                                               content_hash="h", metadata=json.dumps({}), tags=[])
        await uow.documents.replace_chunks([doc_id], [
            (uuid.uuid4(), doc_id, collection, i, f"chunk {i}", [], 0, 7, 2, False, "{}", vectors[i].tolist(), MODEL,
             "english")
            for i in range(len(vectors))
        ])
        await uow.documents.stats_add([doc_id])
    return doc_id


def _unit_rows(rng: np.random.Generator, n: int, centre: np.ndarray, spread: float) -> np.ndarray:
    rows = centre + spread * rng.standard_normal((n, DIM)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


async def test_large_collection_gets_its_own_index_which_its_searches_use(runtime: Runtime) -> None:
    await runtime.postgres.q.collections.register_model(name=MODEL, provider="test", spec="test:x", dim=DIM,
                                                        base_url=None)
    rng = np.random.default_rng(7)
    centre = rng.standard_normal(DIM).astype(np.float32)
    big, small = f"test_big_{uuid.uuid4().hex[:8]}", f"test_small_{uuid.uuid4().hex[:8]}"
    # The small collection sits right on the query, the big one around it: a scan of the shared
    # index meets the small collection's chunks first, which a search of the big one filters out.
    big_rows = _unit_rows(rng, 60, centre, 0.08)
    small_rows = _unit_rows(rng, 10, centre, 0.01)
    docs = [await _write(runtime, big, big_rows), await _write(runtime, small, small_rows)]
    try:
        built = await index_large_collections(runtime.postgres, min_chunks=50)
        own = await runtime.postgres.q.collections.vector_indexes([big, small])
        assert [(r["collection"], r["dim"]) for r in own] == [(big, DIM)]  # the small one is under the threshold
        assert own[0]["index_name"] in built
        # `graphrag status` and GET /stats name it.
        status = (await collect_status(runtime))["collections"]
        assert status[big]["vector_index"] == own[0]["index_name"] and status[small]["vector_index"] is None
        # Built once: the next ingest finds nothing due for it.
        assert own[0]["index_name"] not in await index_large_collections(runtime.postgres, min_chunks=50)

        query = centre / np.linalg.norm(centre)
        config = SearchConfig(collections=(big,), overfetch=10)
        space = await runtime.postgres.collection_info([big])
        assert space[big].vector_index is not None and (await runtime.postgres.collection_info([small]))[small].vector_index is None
        leg = await vector_leg(runtime.postgres, query.astype(np.float32), config, MODEL, DIM)
        exact = np.argsort(-(big_rows @ query))[:10]
        by_content = {r["id"]: r["content"] for r in await runtime.postgres.q.documents.chunks_of(docs[0])}
        assert [by_content[uuid.UUID(cid)] for cid, _, _ in leg.hits] == [f"chunk {i}" for i in exact]

        # The leg's plan (its settings: a custom plan for the collection) reads the collection's index.
        settings, limit = hnsw_settings(config)
        # Named collections are always planned for (a generic plan could only walk the shared index);
        # a search of every collection keeps PostgreSQL's own choice.
        assert settings["plan_cache_mode"] == "force_custom_plan"
        assert hnsw_settings(SearchConfig(overfetch=10))[0]["plan_cache_mode"] == "auto"
        st = queries.variant("search", "vector_leg", "TRUE", DIM)
        async with runtime.postgres.pool.acquire() as conn, conn.transaction():
            for name, value in settings.items():
                await conn.execute("SELECT set_config($1, $2, true)", name, value)
            await conn.execute("SET LOCAL enable_seqscan = off")  # 70 rows: make the plan what large tables get
            await conn.execute("SET LOCAL enable_sort = off")
            values = st.bind({"embedding": query.tolist(), "collections": [big], "model": MODEL, "limit": limit})
            plan = "\n".join(r[0] for r in await conn.fetch("EXPLAIN (FORMAT TEXT) " + st.text, *values))
        assert own[0]["index_name"] in plan, plan
    finally:
        async with runtime.postgres.unit_of_work() as uow:
            await uow.documents.delete(docs)


async def test_no_index_of_its_own_when_alone_in_its_dimension_or_turned_off(runtime: Runtime) -> None:
    # A dimension no other test uses: the collection is the only one its shared index serves, so an
    # index of its own would duplicate that one.
    dim = 17 + uuid.uuid4().int % 300
    model = f"test-alone-{dim}"
    await runtime.postgres.q.collections.register_model(name=model, provider="test", spec="test:x", dim=dim,
                                                        base_url=None)
    await runtime.postgres.q.collections.ensure_vector_index(dim)
    alone = f"test_alone_{uuid.uuid4().hex[:8]}"
    await runtime.postgres.q.collections.create(alone, model, "english")
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((30, dim)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    async with runtime.postgres.unit_of_work() as uow:
        doc_id, _ = await uow.documents.upsert(collection=alone, source="a.md", title="A", content_hash="h",
                                               metadata=json.dumps({}), tags=[])
        await uow.documents.replace_chunks([doc_id], [
            (uuid.uuid4(), doc_id, alone, i, f"chunk {i}", [], 0, 7, 2, False, "{}", rows[i].tolist(), model, "english")
            for i in range(len(rows))])
        await uow.documents.stats_add([doc_id])
    try:
        due = {r["collection"] for r in await runtime.postgres.q.collections.due_vector_indexes(10)}
        assert alone not in due
        assert await index_large_collections(runtime.postgres, min_chunks=0) == []  # 0 turns it off
        assert await runtime.postgres.q.collections.vector_indexes([alone]) == []
    finally:
        async with runtime.postgres.unit_of_work() as uow:
            await uow.documents.delete([doc_id])


async def test_sql_match_chunks_finds_a_collection_behind_other_collections_neighbours(runtime: Runtime) -> None:
    """The psql functions scan the shared index past other collections' nearer chunks."""
    await runtime.postgres.q.collections.register_model(name=MODEL, provider="test", spec="test:x", dim=DIM,
                                                        base_url=None)
    # A new place each run: the chunks of earlier runs stay in the index until a vacuum.
    rng = np.random.default_rng(uuid.uuid4().int % 2**32)
    centre = rng.standard_normal(DIM).astype(np.float32)
    query = centre / np.linalg.norm(centre)
    near, far = f"test_near_{uuid.uuid4().hex[:8]}", f"test_far_{uuid.uuid4().hex[:8]}"
    # More near chunks than one index pass returns (ef_search 40), all nearer than the far collection's.
    near_rows = _unit_rows(rng, 120, centre, 0.01)
    far_rows = _unit_rows(rng, 3, centre, 0.08)
    docs = [await _write(runtime, near, near_rows), await _write(runtime, far, far_rows)]
    try:
        async with runtime.postgres.pool.acquire() as conn, conn.transaction():
            # The plan a large table gets: the ordering read from the HNSW index.
            await conn.execute("SET LOCAL enable_seqscan = off")
            await conn.execute("SET LOCAL enable_sort = off")
            await conn.execute("SET LOCAL hnsw.ef_search = 40")
            rows = await conn.fetch("SELECT * FROM match_chunks($1, 3, $2::text[])", query.tolist(), [far])
            # All of that collection's rows, nearest first.
            assert [r["content"] for r in rows] == [f"chunk {i}" for i in np.argsort(-(far_rows @ query))]
            # More rows than ef_search, nearest first, of the one collection asked for.
            many = await conn.fetch("SELECT * FROM match_chunks($1, 60, $2::text[])", query.tolist(), [near])
            assert len(many) == 60 and {r["document_id"] for r in many} == {docs[0]}
            similarities = [r["similarity"] for r in many]
            assert similarities == sorted(similarities, reverse=True)
            # hybrid_search's semantic side is the same scan.
            fused = await conn.fetch("SELECT * FROM hybrid_search($1, 'nothing matches', 3, 1.0, 1.0, 60, $2::text[])",
                                     query.tolist(), [far])
            assert sorted(r["content"] for r in fused) == sorted(f"chunk {i}" for i in range(3))
            # The setting held for the calls only.
            assert await conn.fetchval("SELECT current_setting('hnsw.iterative_scan')") == "off"
    finally:
        async with runtime.postgres.unit_of_work() as uow:
            await uow.documents.delete(docs)
