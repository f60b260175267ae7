"""Compute a collection's communities and store them, with their reports, in Neo4j.

``compute_communities`` reads the collection's entity graph, detects communities (seeded
hierarchical Leiden), gathers each community's report material (central entities, key relations,
representative sentences from the chunks that mention its central entities, read from PostgreSQL),
writes a report (extractive, or by a model when one is given), embeds it with the collection's
embedding model, and replaces the collection's ``Community`` nodes in one transaction. Re-running it
replaces them: the same graph gives the same communities, ids and reports.

Each community records the collection's *signature* (its number of documents and the time of the
last write, from PostgreSQL) at computation time; when an ingest changes the collection, the
signatures differ and the reports are reported ``stale`` until the next computation.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import math
import re
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from graphrag.communities.detect import Cluster, DetectOptions, detect_communities
from graphrag.communities.reports import (
    LIST_ENTITIES,
    EntityInfo,
    Material,
    Report,
    extractive_report,
    pick_sentences,
    written_reports,
)
from graphrag.errors import ConfigurationError
from graphrag.ingest.embedders import Embedders
from graphrag.models import entity_vector_slot
from graphrag.stores import queries
from graphrag.stores.neo4j import Neo4jStore
from graphrag.stores.postgres import PostgresStore

log = logging.getLogger(__name__)

COMMUNITY_NAMESPACE = uuid.UUID("5d0c6a52-6f0e-4d33-9a7f-3c1f0b7e2c41")
MATERIAL_ENTITIES = 6  # central entities whose chunks are read for a report
CHUNKS_PER_ENTITY = 5
CHUNKS_PER_COMMUNITY = 3
WRITE_BATCH = 1000


def community_vector_slot(model: str) -> tuple[str, str]:
    """``(property, vector index)`` of community report embeddings by ``model``: the packaged
    model's are ``embedding`` / ``community_embedding``; every other model has its own pair."""
    prop, entity_index = entity_vector_slot(model)
    return prop, "community_" + entity_index.removeprefix("entity_")


def community_id(collection: str, level: int, members: Sequence[str]) -> str:
    """Deterministic: the same members at the same level of a collection get the same id."""
    digest = hashlib.sha1("\x1f".join(sorted(members)).encode()).hexdigest()
    return str(uuid.uuid5(COMMUNITY_NAMESPACE, f"{collection}\x1f{level}\x1f{digest}"))


async def collection_signatures(postgres: PostgresStore, collections: Sequence[str]) -> dict[str, str]:
    """Each collection's signature now (``"0@"`` for one without documents)."""
    rows = await postgres.fetch("communities", "collection_signatures", list(collections))
    found = {r["collection"]: r["signature"] for r in rows}
    return {c: found.get(c, "0@") for c in collections}


async def ensure_schema(neo4j: Neo4jStore, model: str, dim: int) -> str:
    """The Community constraint, indexes and the model's vector index (idempotent); returns the
    vector index name."""
    for name in ("schema_constraint", "schema_collection_index", "schema_fulltext"):
        await neo4j.run("communities", name)
    prop, index = community_vector_slot(model)
    existing = {r["name"]: r["dim"] for r in await neo4j.run("communities", "vector_indexes")}
    if index in existing:
        if existing[index] is not None and int(existing[index]) != dim:
            raise ConfigurationError(f"Neo4j index {index} holds {existing[index]}-dim vectors, not {dim} for {model}")
    else:
        if not re.fullmatch(r"[a-z0-9_]+", prop):
            raise ValueError(f"not a property name: {prop!r}")
        statement = queries.cypher("communities", "create_vector_index").replace("/*PROPERTY*/", prop)
        options = {"indexConfig": {"vector.dimensions": dim, "vector.similarity_function": "cosine"}}
        await neo4j.driver.execute_query(statement, parameters_={"index": index, "options": options},
                                         database_=neo4j.database)
    await neo4j.run("admin", "await_indexes", seconds=120)
    return index


def _materials(clusters: list[Cluster], info: dict[str, EntityInfo],
               edges: dict[tuple[str, str], tuple[float, list[str]]], adjacency: dict[str, list[str]],
               entity_chunks: dict[str, list[tuple[str, int]]]) -> tuple[list[Material], list[list[str]]]:
    """Each cluster's material without sentences, and the chunks to read for its sentences."""
    materials: list[Material] = []
    chunk_choice: list[list[str]] = []
    for cluster in clusters:
        members = set(cluster.members)
        central = cluster.central()
        top = max((cluster.centrality.get(m, 0.0) for m in central[:1]), default=0.0) or 1.0
        entities = [info[m] for m in central[:LIST_ENTITIES] if m in info]
        inner: list[tuple[float, str, str, list[str]]] = []
        for a in cluster.members:
            for b in adjacency.get(a, ()):
                if a < b and b in members:
                    weight, predicates = edges[(a, b)]
                    inner.append((weight, info[a].name if a in info else a, info[b].name if b in info else b,
                                  predicates))
        inner.sort(key=lambda r: (-r[0], r[1], r[2]))
        scores: dict[str, float] = defaultdict(float)
        for m in central[:MATERIAL_ENTITIES]:
            weight = cluster.centrality.get(m, 0.0) / top
            for chunk, count in entity_chunks.get(m, ()):
                scores[chunk] += weight * (1.0 + math.log(max(int(count or 1), 1)))
        chunk_choice.append([c for c, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))]
                            [:CHUNKS_PER_COMMUNITY])
        materials.append(Material(entities=entities, size=cluster.size,
                                  relations=[(a, b, w, p) for w, a, b, p in inner]))
    return materials, chunk_choice


async def _chunk_texts(postgres: PostgresStore, collection: str, ids: list[str]) -> dict[str, str]:
    texts: dict[str, str] = {}
    for k in range(0, len(ids), 5000):
        rows = await postgres.fetch("documents", "chunks_by_id", [uuid.UUID(i) for i in ids[k:k + 5000]], [collection])
        texts.update({str(r["id"]): r["content"] for r in rows})
    return texts


async def compute_communities(postgres: PostgresStore, neo4j: Neo4jStore, embedders: Embedders, collection: str, *,
                              options: DetectOptions | None = None, report_model: Any = None,
                              report_limit: int = 200) -> dict[str, Any]:
    """Detect, report, embed and store the communities of ``collection`` (replacing its previous ones).

    Args:
        postgres, neo4j, embedders: The opened stores and the embedding models (``Runtime``'s).
        collection: An existing collection.
        options: Detection parameters (levels, resolution, seed, minimum size).
        report_model: A pydantic-ai model (or model string) that writes the reports of the
            ``report_limit`` highest-ranked communities; ``None``: every report is extractive.

    Returns the summary ``graphrag communities --json`` prints.
    """
    options = options or DetectOptions()
    await postgres.require_collections([collection])
    started = time.perf_counter()
    stages: dict[str, float] = {}

    def lap(stage: str, since: float) -> float:
        now = time.perf_counter()
        stages[stage] = round(now - since, 3)
        return now

    async with postgres.advisory_lock(f"graphrag.communities:{collection}"):
        t = time.perf_counter()
        signature = (await collection_signatures(postgres, [collection]))[collection]
        rows = await neo4j.run("communities", "entity_graph", collection=collection)
        edges: dict[tuple[str, str], tuple[float, list[str]]] = {}
        for r in rows:
            a, b = sorted((r["source"], r["target"]))
            weight, predicates = edges.get((a, b), (0.0, []))
            edges[(a, b)] = (weight + float(r["weight"] or 0.0), predicates + [p for p in r["predicates"]
                                                                                 if p not in predicates])
        t = lap("read_graph_s", t)
        clusters = await asyncio.to_thread(detect_communities, [(a, b, w) for (a, b), (w, _) in edges.items()],
                                           options)
        t = lap("detect_s", t)

        adjacency: dict[str, list[str]] = defaultdict(list)
        for a, b in edges:
            adjacency[a].append(b)
            adjacency[b].append(a)
        member_ids = sorted({m for c in clusters for m in c.members})
        info: dict[str, EntityInfo] = {}
        for k in range(0, len(member_ids), 10000):
            for r in await neo4j.run("communities", "entity_info", ids=member_ids[k:k + 10000]):
                info[r["id"]] = EntityInfo(r["id"], r["name"] or "", r["label"] or "", int(r["mentions"] or 0))
        wanted = sorted({m for c in clusters for m in c.central(MATERIAL_ENTITIES)})
        entity_chunks: dict[str, list[tuple[str, int]]] = {}
        for k in range(0, len(wanted), 5000):
            for r in await neo4j.run("communities", "entity_chunks", ids=wanted[k:k + 5000],
                                     per_entity=CHUNKS_PER_ENTITY):
                entity_chunks[r["id"]] = [(c, n) for c, n in r["chunks"]]
        materials, chunk_choice = _materials(clusters, info, edges, adjacency, entity_chunks)
        texts = await _chunk_texts(postgres, collection, sorted({c for cs in chunk_choice for c in cs}))
        for cluster, material, chosen in zip(clusters, materials, chunk_choice, strict=True):
            weights = {info[m].name.lower(): cluster.centrality.get(m, 0.0)
                       for m in cluster.central(LIST_ENTITIES) if m in info}
            material.sentences = pick_sentences([(c, texts[c]) for c in chosen if c in texts], weights)
        t = lap("material_s", t)

        reports: list[Report] = [extractive_report(m) for m in materials]
        generated = 0
        if report_model is not None and clusters:
            order = sorted(range(len(clusters)), key=lambda i: (-clusters[i].internal_weight, i))[:report_limit]
            written = await written_reports(report_model, [materials[i] for i in order])
            for i, report in zip(order, written, strict=True):
                if report is not None:
                    reports[i] = report
                    generated += 1
        t = lap("reports_s", t)

        space = await embedders.for_search(postgres, (collection,))
        vectors: Any = (await asyncio.to_thread(space.embedder.encode, [r.embedding_text for r in reports])
                   if reports else [])
        t = lap("embed_s", t)

        index = await ensure_schema(neo4j, space.name, space.dim)
        prop, _ = community_vector_slot(space.name)
        ids = [community_id(collection, c.level, c.members) for c in clusters]
        computed_at = datetime.now(UTC).isoformat()
        rows_out = []
        for i, (cluster, report, material) in enumerate(zip(clusters, reports, materials, strict=True)):
            evidence = list(dict.fromkeys([c for _, c in material.sentences] + chunk_choice[i]))
            rows_out.append({"props": {
                "id": ids[i], "collection": collection, "level": cluster.level, "title": report.title,
                "report": report.text, "size": cluster.size, "rank": round(cluster.internal_weight, 3),
                "signature": signature, "chunk_ids": evidence, "generated": report.generated,
                "parent": ids[cluster.parent] if cluster.parent is not None else None,
            }, "embedding": [float(x) for x in vectors[i]]})
        links = [[m, ids[i], round(c.centrality.get(m, 0.0), 3)] for i, c in enumerate(clusters) for m in c.members]
        parents = [[ids[c.parent], ids[i]] for i, c in enumerate(clusters) if c.parent is not None]
        await _replace(neo4j, collection, prop, rows_out, links, parents, computed_at)
        lap("write_s", t)

    levels: dict[int, int] = defaultdict(int)
    for c in clusters:
        levels[c.level] += 1
    return {
        "collection": collection,
        "communities": len(clusters),
        "levels": {str(k): v for k, v in sorted(levels.items())},
        "entities": len(member_ids),
        "graph_entities": len({n for pair in edges for n in pair}),
        "relations": len(edges),
        "generated_reports": generated,
        "embedding_model": space.name,
        "vector_index": index,
        "signature": signature,
        "options": {"levels": options.levels, "resolution": options.resolution, "seed": options.seed,
                    "min_size": options.min_size},
        "seconds": round(time.perf_counter() - started, 3),
        "stages": stages,
    }


async def _replace(neo4j: Neo4jStore, collection: str, prop: str, rows: list[dict[str, Any]],
                   links: list[list[Any]], parents: list[list[str]], computed_at: str) -> None:
    """The collection's communities replaced by ``rows`` in one transaction: all or nothing."""
    q = queries.cypher

    async def work(tx: Any) -> None:
        while True:
            result = await tx.run(q("communities", "delete_communities"), collection=collection, batch=5000)
            record = await result.single()
            if not record or not record["deleted"]:
                break
        for k in range(0, len(rows), WRITE_BATCH):
            await (await tx.run(q("communities", "create_communities"), rows=rows[k:k + WRITE_BATCH],
                                property=prop, computed_at=computed_at)).consume()
        for k in range(0, len(links), 10 * WRITE_BATCH):
            await (await tx.run(q("communities", "link_members"), links=links[k:k + 10 * WRITE_BATCH])).consume()
        for k in range(0, len(parents), 10 * WRITE_BATCH):
            await (await tx.run(q("communities", "link_parents"), pairs=parents[k:k + 10 * WRITE_BATCH])).consume()

    async with neo4j.driver.session(database=neo4j.database) as session:
        await session.execute_write(work)


async def list_communities(postgres: PostgresStore, neo4j: Neo4jStore, collections: Sequence[str] | None, *,
                           level: int | None = None, limit: int = 100) -> list[dict[str, Any]]:
    """Stored communities (most important first within a level), each marked ``stale`` when its
    collection changed after it was computed."""
    rows = await neo4j.run("communities", "list_communities",
                           collections=list(collections) if collections is not None else None, level=level,
                           limit=limit)
    current = await collection_signatures(postgres, sorted({r["collection"] for r in rows}))
    return [{**{k: v for k, v in r.items() if k != "signature"},
             "stale": r["signature"] != current.get(r["collection"])} for r in rows]
