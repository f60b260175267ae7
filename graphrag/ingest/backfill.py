"""Backfills of graph properties that newer code writes at ingestion, for graphs written before."""

from __future__ import annotations

import logging

from graphrag.ingest.extract import title_key
from graphrag.stores.neo4j import Neo4jStore

log = logging.getLogger(__name__)


async def backfill_title_keys(neo4j: Neo4jStore, batch: int = 5000) -> int:
    """Give every Document node its ``title_norm`` (the graph leg finds documents named after a
    query's entities by it). Idempotent and cheap when nothing is missing; returns the count set."""
    done = 0
    while True:
        rows = await neo4j.run("ingest", "documents_without_title_norm", limit=batch)
        if not rows:
            break
        await neo4j.run("ingest", "set_title_norms",
                        rows=[{"id": r["id"], "title_norm": title_key(r["title"])} for r in rows])
        done += len(rows)
    if done:
        log.info("graph backfill: title keys set on %d documents", done)
    return done
