"""Deleting a whole collection from both stores (`graphrag delete --all`, ``DELETE /collections/{name}``).

PostgreSQL is the source of truth, so the drop is one transaction there: the collection's rows go
together with a graph outbox entry that removes its graph, under the collection's lock, which waits
for the writes in flight (ingests, re-embeds). The graph follows when the outbox is applied, at once
if Neo4j answers, else by the API's outbox worker, the next ingest or `graphrag repair`: an outage
loses nothing, and a drop never leaves half a collection in PostgreSQL. The collection's own HNSW
indexes are dropped last, concurrently, so searches of other collections are not held up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from graphrag.errors import Conflict, NotFound, one_line
from graphrag.ingest.outbox import GraphOutbox
from graphrag.stores.postgres import PostgresStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DroppedCollection:
    """What a drop removed. ``graph_pending``: the graph's part waits in the outbox (Neo4j was away)."""

    collection: str
    documents: int
    chunks: int
    graph_pending: bool

    def as_dict(self) -> dict[str, object]:
        return {"collection": self.collection, "deleted": True, "documents": self.documents,
                "chunks": self.chunks, "graph_pending": self.graph_pending}


async def drop_collection(postgres: PostgresStore, outbox: GraphOutbox, collection: str) -> DroppedCollection:
    """Delete ``collection`` with everything in it from both stores. NotFound for a collection that
    does not exist; Conflict while an ingestion job runs in it (its writes would follow the drop)."""
    async with postgres.unit_of_work() as uow:
        await uow.collections.lock(collection)  # waits for the collection's writers, keeps new ones out
        if not await uow.collections.info([collection]):
            raise NotFound(f"unknown collection {collection!r}")
        running = await uow.jobs.count(collections=[collection], status="running")
        if running:
            raise Conflict(f"collection {collection!r} has {running} ingestion job{'s' if running != 1 else ''} "
                           "running; delete it when they are done")
        rows = await uow.collections.drop(collection)
        await GraphOutbox.enqueue_drop(uow, collection)
    for index in rows.indexes:
        try:
            await postgres.q.collections.drop_vector_index(index)
        except Exception as exc:  # noqa: BLE001 - the rows are gone; an empty index left behind harms nothing
            log.warning("index %s of dropped collection %s not dropped: %s", index, collection, one_line(exc))
    result = await outbox.drain_now()
    pending = result is None or bool(result.pending)
    log.info("dropped collection %s: %d documents, %d chunks", collection, rows.documents, rows.chunks)
    return DroppedCollection(collection, rows.documents, rows.chunks, pending)
