"""Entity look-ups shared by the REST API and the agent tools: name search and an entity's neighbourhood."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from graphrag.errors import InvalidInput, NotFound
from graphrag.models import chunk_page, is_collection_name
from graphrag.runtime import Runtime
from graphrag.search.linking import lucene_query



def check_collection(collection: str | None) -> str | None:
    """``None`` or a valid collection name (else :class:`InvalidInput`)."""
    if collection is not None and not is_collection_name(collection):
        raise InvalidInput(f"invalid collection name {collection!r}")
    return collection


async def search_entities(rt: Runtime, q: str, *, collection: str | None = None, limit: int = 20,
                          collections: Sequence[str] | None = None) -> dict[str, Any]:
    """Entities whose name matches ``q`` (fulltext index; any word, the whole name ranked first), in
    ``collection`` or any of ``collections`` (an API key's scope) when given."""
    if not isinstance(q, str) or not q.strip():
        raise InvalidInput("q is empty: give a name or part of one")
    if len(q) > 200:
        raise InvalidInput(f"q is {len(q)} characters; the limit is 200")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 100:
        raise InvalidInput("limit must be an integer from 1 to 100")
    check_collection(collection)
    scope = list(collections) if collections is not None else ([collection] if collection else None)
    query = lucene_query(q)
    if not query:
        return {"query": q, "entities": []}
    rows = await rt.neo4j.run("entities", "search_entities", query=query, collections=scope, k=limit)
    return {"query": q, "entities": [{**r, "score": round(float(r["score"]), 4)} for r in rows]}


async def get_entity(rt: Runtime, entity_id: str, *, relations: int = 25, mentions: int = 10,
                     visible: Callable[[str], bool] = lambda collection: True) -> dict[str, Any]:
    """An entity with its strongest relations (each with evidence chunks) and the chunks that mention it.
    An entity whose collection is not ``visible`` (an API key's scope) is reported as not found."""
    try:
        uuid.UUID(str(entity_id))
    except ValueError:
        raise NotFound(f"no entity with id {entity_id!r}") from None
    found = await rt.neo4j.run("entities", "entity_detail", id=str(entity_id))
    if not found or not visible(found[0]["collection"]):
        raise NotFound(f"no entity with id {entity_id!r}")
    entity = found[0]
    rels = await rt.neo4j.run("entities", "entity_relations", id=str(entity_id), k=relations, evidence=3)
    ments = await rt.neo4j.run("entities", "entity_mentions", id=str(entity_id), k=mentions)
    chunk_ids = list({m["chunk_id"] for m in ments} | {c for r in rels for c in r["evidence_chunk_ids"]})
    texts = await _chunk_texts(rt, chunk_ids, entity["collection"])
    return {
        **entity,
        "relations": [
            {
                "source": entity["name"] if r["outgoing"] else r["name"],
                "type": "RELATED_TO",
                "target": r["name"] if r["outgoing"] else entity["name"],
                "entity": {"id": r["id"], "name": r["name"], "label": r["label"]},
                "weight": r["weight"],
                "predicates": list(r["predicates"] or []),
                "evidence": [texts[c] for c in r["evidence_chunk_ids"] if c in texts],
            }
            for r in rels
        ],
        "chunks": [{**texts[m["chunk_id"]], "count": m["count"]} for m in ments if m["chunk_id"] in texts],
    }


async def _chunk_texts(rt: Runtime, chunk_ids: list[str], collection: str) -> dict[str, dict[str, Any]]:
    """Chunk provenance from PostgreSQL (the source of truth), limited to the entity's collection."""
    if not chunk_ids:
        return {}
    rows = await rt.postgres.fetch("documents", "chunks_by_id", [uuid.UUID(c) for c in chunk_ids], [collection])
    return {
        str(r["id"]): {
            "chunk_id": str(r["id"]),
            "document_id": str(r["document_id"]),
            "source": r["source"],
            "title": r["title"],
            "heading_path": list(r["heading_path"] or []),
            "content": r["content"],
            "page": chunk_page(json.loads(r["metadata"]) if isinstance(r["metadata"], str) else r["metadata"]),
        }
        for r in rows
    }
