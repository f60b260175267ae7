"""``graphrag repair``: reconcile the graph in Neo4j with PostgreSQL, the source of truth.

Applies pending graph writes first, then per collection: removes documents (and stray chunks) that
exist only in the graph, rebuilds the graph of documents that are missing from it, whose chunks
differ, or whose graph write was set aside, and prunes entities nothing mentions any more.
"""

from __future__ import annotations

import uuid
from typing import Any

from graphrag.errors import ServiceUnavailable
from graphrag.runtime import Runtime
from graphrag.stores.neo4j import GraphWrites


async def repair(rt: Runtime, collection: str | None = None) -> dict[str, Any]:
    """Reconcile the stores; returns what was fixed per collection."""
    drained = await rt.outbox.drain()
    if drained.error and drained.pending:
        raise ServiceUnavailable(f"Neo4j is not accepting writes ({drained.error}); repair needs it")
    graph = GraphWrites(rt.neo4j)
    pg_names = await rt.postgres.q.documents.collections()
    names = [collection] if collection else list(pg_names)
    graph_names = {r["collection"] for r in await rt.neo4j.q.ingest.collection_counts()}
    if not collection:
        names = sorted(set(names) | graph_names)
    report: dict[str, Any] = {"applied_pending": drained.applied, "collections": {}}
    # A collection the graph holds but PostgreSQL does not know (its drop set aside, or cut short):
    # the whole of it goes from the graph, communities included.
    known = {r["name"] for r in await rt.postgres.q.collections.info(None)} | set(pg_names)
    for name in sorted(n for n in graph_names if n not in known and n in names):
        deleted = await graph.drop_collection(name)
        await rt.postgres.q.outbox.clear_failed(name)
        report["collections"][name] = {"dropped_from_graph": sum(deleted.values())}
        names.remove(name)
    for name in names:
        pg = await rt.postgres.q.documents.chunk_ids(name)
        pg_docs = await rt.postgres.document_ids(name)
        gr = await rt.neo4j.q.ingest.chunk_ids(name)
        extra = sorted(set(gr) - pg_docs)
        set_aside = await rt.postgres.q.outbox.failed_documents(name)
        rebuild = sorted(d for d in pg if d not in gr or sorted(pg[d]) != gr[d] or d in set_aside)
        if extra:
            await graph.remove_documents(extra)
        stray = await rt.neo4j.q.ingest.stray_chunks(name)
        if stray:
            await rt.neo4j.q.ingest.delete_stray_chunks(stray)
        rebuilt = 0
        if rebuild:
            # Set-aside entries are superseded by the rebuild (which sets aside anew if Neo4j refuses again).
            await rt.postgres.q.outbox.clear_failed(name)
            ingestor = await rt.ingestor()
            rebuilt = await ingestor.rebuild_graph([uuid.UUID(d) for d in rebuild])
        orphans = await rt.neo4j.q.ingest.prune_orphan_entities(name)
        recounted = await rt.neo4j.q.ingest.recount_entity_mentions(name)
        fixed = {"removed_from_graph": len(extra), "stray_chunks": len(stray), "rebuilt": rebuilt,
                 "orphan_entities": orphans, "recounted_entities": recounted}
        if any(fixed.values()):
            report["collections"][name] = fixed
    report["outbox"] = await rt.outbox.summary()
    return report


def describe(report: dict[str, Any]) -> str:
    """The repair report as lines for a terminal."""
    lines = []
    if report["applied_pending"]:
        lines.append(f"applied {report['applied_pending']} pending graph write(s)")
    for name, fixed in report["collections"].items():
        parts = [f"{v} {k.replace('_', ' ')}" for k, v in fixed.items() if v]
        lines.append(f"{name}: " + ", ".join(parts))
    if not lines:
        lines.append("nothing to repair: both stores agree")
    box = report["outbox"]
    if box["pending"] or box["failed"]:
        lines.append(f"graph writes still pending: {box['pending']}, set aside: {box['failed']} ({box['last_error']})")
    return "\n".join(lines)

