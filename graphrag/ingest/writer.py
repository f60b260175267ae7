"""Writing a batch's graph work: the collection-model check inside the write's transaction and the outbox
entry that carries the graph payload (shared by ingestion and graph rebuilds)."""

from __future__ import annotations

from graphrag.errors import Conflict, ServiceUnavailable
from graphrag.ingest.outbox import GraphOutbox
from graphrag.ingest.payload import GraphPayload
from graphrag.stores.repo import UnitOfWork


async def check_collection_model(uow: UnitOfWork, collection: str, model: str) -> None:
    """Inside the write's transaction, under the collection's shared lock: the collection still exists
    (a drop may have deleted it meanwhile) and uses the model these chunks were embedded with (a
    re-embed may have switched it)."""
    await uow.collections.lock_shared(collection)
    row = await uow.collections.current_model(collection)
    if row is None:  # every write's collection is recorded first (Embedders.for_write): this one was deleted
        raise Conflict(f"collection {collection!r} was deleted during this ingest; ingest again to create it anew")
    if row["embedding_model"] != model:
        raise ServiceUnavailable(f"collection {collection!r} moved to the embedding model {row['embedding_model']} "
                                 "during this ingest; run the ingest again")


async def record_graph(uow: UnitOfWork, payload: GraphPayload) -> None:
    """Record the payload's graph write in the outbox, in the caller's transaction. Applying it first
    removes every listed document's graph, so updates take back their old graph and a replayed entry
    never doubles up."""
    await GraphOutbox.enqueue_replace(uow, payload.collection, payload.document_ids, payload.docs, payload.next_pairs,
                                      payload.entity_list(), payload.mentions, payload.relations)
