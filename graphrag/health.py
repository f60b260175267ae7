"""Store counts, drift between the stores, and readiness: shared by ``graphrag status`` and the REST API."""

from __future__ import annotations

import asyncio
from typing import Any

from graphrag.errors import one_line
from graphrag.runtime import Runtime
from graphrag.stores.neo4j import GraphWrites


async def collect_status(rt: Runtime) -> dict[str, Any]:
    """Counts per collection in both stores, drift between them, and service health."""
    graph = GraphWrites(rt.neo4j)
    pg_counts = await rt.postgres.collection_counts()
    try:
        graph_counts = await graph.collection_counts()
        graph_error = None
    except Exception as exc:  # noqa: BLE001 - Neo4j away: report what PostgreSQL knows
        graph_counts, graph_error = {}, one_line(exc)
    records = await rt.postgres.collection_info(None)
    collections: dict[str, dict[str, Any]] = {}
    drift: list[dict[str, Any]] = []
    for name in sorted(set(pg_counts) | set(graph_counts)):
        pg = pg_counts.get(name, {"documents": 0, "chunks": 0})
        gr = graph_counts.get(name, {"graph_documents": 0, "graph_chunks": 0, "entities": 0, "relations": 0})
        collections[name] = {**pg, **gr}
        record = records.get(name)
        if record is not None:
            # The model and dimension its vectors have, its text-search configuration, and the model a
            # re-embed is moving it to (null when none is under way).
            collections[name].update({
                "embedding_model": record.model.name, "embedding_dim": record.model.dim,
                "text_config": record.text_config,
                "reembed_model": record.reembed.name if record.reembed else None,
                # The collection's own HNSW index (graphrag/ingest/vector_index.py), null: the shared one.
                "vector_index": record.vector_index,
            })
        if graph_error is None and (pg["documents"] != gr["graph_documents"] or pg["chunks"] != gr["graph_chunks"]):
            pg_ids = await rt.postgres.document_ids(name)
            graph_ids = await graph.document_ids(name)
            pending = await rt.postgres.q.outbox.pending_documents(name)
            drift.append({
                "collection": name,
                "awaiting_graph_writes": len(pending),  # drift the outbox will close by itself
                "documents": {"postgres": pg["documents"], "neo4j": gr["graph_documents"]},
                "chunks": {"postgres": pg["chunks"], "neo4j": gr["graph_chunks"]},
                "missing_in_neo4j": sorted(pg_ids - graph_ids)[:50],
                "missing_in_postgres": sorted(graph_ids - pg_ids)[:50],
            })
    pg_health = await rt.postgres.health()
    neo_health = await rt.neo4j.health()
    services: dict[str, Any] = {
        "postgres": {"ok": pg_health.ok, "version": pg_health.version, "pgvector": pg_health.pgvector},
        "neo4j": {"ok": neo_health.ok, "version": neo_health.version, "edition": neo_health.edition},
    }
    if not neo_health.ok:
        services["neo4j"]["error"] = graph_error or "unreachable"
    return {
        "collections": collections,
        "drift": drift,
        "graph_outbox": await rt.outbox.summary(),
        "services": services,
    }


async def readiness(rt: Runtime, timeout: float = 3.0) -> dict[str, Any]:
    """Both stores reachable and their schema current. ``ready`` is False otherwise, with the reasons."""

    async def postgres() -> dict[str, Any]:
        health = await rt.postgres.health()
        if not health.ok:
            return {"ok": False, "error": "PostgreSQL unreachable"}
        pending = await rt.postgres.pending_migrations()
        if pending:
            return {"ok": False, "error": f"migrations not applied: {', '.join(pending)}"}
        return {"ok": True, "version": health.version}

    async def neo4j() -> dict[str, Any]:
        health = await rt.neo4j.health()
        if not health.ok:
            return {"ok": False, "error": "Neo4j unreachable"}
        missing = await rt.neo4j.missing_schema()
        if missing:
            return {"ok": False, "error": f"schema incomplete: {', '.join(missing)}"}
        return {"ok": True, "version": health.version}

    async def bounded(check: Any, name: str) -> dict[str, Any]:
        try:
            return await asyncio.wait_for(check(), timeout)
        except TimeoutError:
            return {"ok": False, "error": f"{name} did not answer within {timeout}s"}
        except Exception as exc:  # noqa: BLE001 - readiness reports, it never raises
            return {"ok": False, "error": f"{name}: {type(exc).__name__}"}

    pg, neo = await asyncio.gather(bounded(postgres, "PostgreSQL"), bounded(neo4j, "Neo4j"))
    return {"ready": pg["ok"] and neo["ok"], "postgres": pg, "neo4j": neo}
