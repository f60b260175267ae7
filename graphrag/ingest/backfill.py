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
        rows = await neo4j.q.ingest.documents_without_title_norm(batch)
        if not rows:
            break
        await neo4j.q.ingest.set_title_norms([{"id": r["id"], "title_norm": title_key(r["title"])} for r in rows])
        done += len(rows)
    if done:
        log.info("graph backfill: title keys set on %d documents", done)
    return done


async def backfill_entity_lists(neo4j: Neo4jStore, batch: int = 1000) -> int:
    """Give every entity its chunk and neighbour lists (and a fresh mention count and label): graphs
    written before the writer kept them, or written in bulk around it (``bench/generate.py``). Idempotent; returns the
    count refreshed."""
    done = 0
    while ids := await neo4j.q.ingest.entities_without_lists(batch):
        await neo4j.q.ingest.refresh_entities(ids)
        done += len(ids)
    if done:
        log.info("graph backfill: chunk and neighbour lists set on %d entities", done)
    return done


async def run_backfills(neo4j: Neo4jStore) -> None:
    """Run each backfill this graph has not finished yet, then mark it finished.

    Called when the services open: once marked, a backfill costs one lookup instead of a scan of
    every document. Documents written later get their keys at ingestion.
    """
    for name, backfill in (("document_title_norm", backfill_title_keys),
                           # The lists with their title flags (a graph whose lists predate them runs it again).
                           ("entity_lists_titled", backfill_entity_lists)):
        if await neo4j.q.ingest.backfill_done(name):
            continue
        await backfill(neo4j)
        await neo4j.q.ingest.mark_backfill_done(name)
