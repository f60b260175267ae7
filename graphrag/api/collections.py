"""``DELETE /collections/{name}``: a whole collection out of both stores (graphrag/ingest/drop.py).

Scopes: like deleting a document, it needs a read-write key that may write to the collection; a key
that may not see it gets the 404 of an unknown collection.
"""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, delete
from litestar.params import Parameter

from graphrag import documents
from graphrag.api.openapi import problems
from graphrag.api.portable import COLLECTION_PATTERN
from graphrag.api.routes import Caller, Rt, checked
from graphrag.api.schemas import CollectionDeleted


class CollectionController(Controller):
    path = "/collections"
    tags = ["collections"]

    @delete("/{name:str}", status_code=200, summary="Delete a collection",
            responses=problems(400, 401, 403, 404, 409, 429, 503))
    async def remove(
        self,
        rt: Rt,
        caller: Caller,
        name: Annotated[str, Parameter(description="The collection.", pattern=COLLECTION_PATTERN, max_length=64)],
    ) -> CollectionDeleted:
        """Remove the collection and everything in it from both stores: documents, chunks, vectors (and
        its own vector index), keyword statistics, suggestions, entities, relations and communities.
        PostgreSQL's part is one transaction; the graph's follows through the outbox (`graph_pending`:
        Neo4j was away, and the API's outbox worker finishes it). 409 while an ingestion job runs in it."""
        caller.check_visible(name, f"unknown collection {name!r}")
        caller.check_write(name)
        return checked(CollectionDeleted, await documents.delete_collection(rt, name))
