"""Typed Cypher statements: one method per statement of ``cypher/*.cypher``, grouped by area.

Parameters are the driver's ``$name``; each call is checked against the names the statement uses
(:func:`graphrag.stores.queries.checked_cypher`), so a missing or misspelt one fails before Neo4j
sees it. Rows are the records as dicts, keyed by the statement's ``RETURN`` names.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from graphrag.stores import queries

if TYPE_CHECKING:
    from graphrag.stores.neo4j import Neo4jStore

Row = dict[str, Any]

#: Chunks kept in an entity's chunk list (``refresh_entity_mentions``): the graph leg reads at most
#: this many per entity (its ``PER_ENTITY`` must not exceed it).
ENTITY_CHUNKS = 64
#: Neighbours kept in an entity's neighbour list: the graph leg spreads to at most this many per entity.
ENTITY_NEIGHBOURS = 32


def refresh_parameters(entity_ids: list[str]) -> dict[str, Any]:
    """The parameters of ``refresh_entity_mentions`` for these entities (the writer's transaction and
    :meth:`IngestGraph.refresh_entities` run the same statement)."""
    return {"entity_ids": entity_ids, "keep": ENTITY_CHUNKS, "neighbours": ENTITY_NEIGHBOURS}


class Cypher:
    """Runs ``cypher/<file>.cypher`` statements on one store (circuit breaker, span): ``run`` in a managed
    transaction (the driver retries transient failures), ``read`` as one auto-committed read."""

    def __init__(self, store: Neo4jStore) -> None:
        self.store = store

    async def run(self, file: str, name: str, /, **params: Any) -> list[Row]:
        text = queries.checked_cypher(file, name, params)
        return await self.store.execute(text, f"{file}.{name}", params)

    async def read(self, file: str, name: str, /, **params: Any) -> list[Row]:
        """A read-only statement in one round trip (auto-commit, read mode; no retry): the search path."""
        text = queries.checked_cypher(file, name, params)
        return await self.store.read(text, f"{file}.{name}", params)


class GraphArea:
    """Base of a typed Cypher repository."""

    def __init__(self, cypher: Cypher) -> None:
        self._cypher = cypher


class AdminGraph(GraphArea):
    """Server and schema administration (``cypher/admin.cypher``)."""

    async def components(self) -> list[Row]:
        """``name, version, edition`` of the server's components."""
        return await self._cypher.run("admin", "components")

    async def await_indexes(self, seconds: int) -> None:
        await self._cypher.run("admin", "await_indexes", seconds=seconds)

    async def indexes(self) -> list[Row]:
        """``name, type, state, labelsOrTypes, properties`` of every index."""
        return await self._cypher.run("admin", "list_indexes")


class EntitiesGraph(GraphArea):
    """Entity look-ups and entity vectors (``cypher/entities.cypher``)."""

    async def search(self, query: str, collections: list[str] | None, k: int) -> list[Row]:
        """Entities whose name matches the Lucene ``query`` (fulltext index), best first."""
        return await self._cypher.run("entities", "search_entities", query=query, collections=collections, k=k)

    async def detail(self, entity_id: str) -> Row | None:
        rows = await self._cypher.run("entities", "entity_detail", id=entity_id)
        return rows[0] if rows else None

    async def relations(self, entity_id: str, k: int, evidence: int) -> list[Row]:
        """The entity's strongest relations, each with up to ``evidence`` chunk ids."""
        return await self._cypher.run("entities", "entity_relations", id=entity_id, k=k, evidence=evidence)

    async def mentions(self, entity_id: str, k: int) -> list[Row]:
        """Chunks that mention the entity."""
        return await self._cypher.run("entities", "entity_mentions", id=entity_id, k=k)

    async def vector_indexes(self) -> list[Row]:
        """``name, dim`` of the entity vector indexes."""
        return await self._cypher.run("entities", "entity_vector_indexes")

    async def without_vector(self, collection: str, prop: str, limit: int) -> list[Row]:
        """``id, name`` of entities with no vector in property ``prop``."""
        return await self._cypher.run("entities", "entities_without_vector", collection=collection, property=prop,
                                      limit=limit)

    async def set_vectors(self, prop: str, rows: list[Row]) -> None:
        """Store ``{"id", "vector"}`` rows in property ``prop``."""
        await self._cypher.run("entities", "set_entity_vectors", property=prop, rows=rows)

    async def drop_vectors(self, collection: str, prop: str) -> int:
        """Remove property ``prop`` from one batch of the collection's entities; how many were cleared."""
        rows = await self._cypher.run("entities", "drop_entity_vectors", collection=collection, property=prop)
        return int(rows[0]["cleared"]) if rows else 0


class IngestGraph(GraphArea):
    """What ingestion, status and repair read and fix in the graph (``cypher/ingest.cypher``)."""

    async def collection_counts(self) -> list[Row]:
        """``collection, documents, chunks, entities, relations`` of every collection."""
        return await self._cypher.run("ingest", "collection_counts")

    async def collection_graph_counts(self, collection: str) -> Row:
        """``entities, relations`` of one collection."""
        return (await self._cypher.run("ingest", "collection_graph_counts", collection=collection))[0]

    async def document_ids(self, collection: str) -> set[str]:
        return {r["id"] for r in await self._cypher.run("ingest", "document_ids", collection=collection)}

    async def chunk_ids(self, collection: str) -> dict[str, list[str]]:
        """``document id -> its chunk ids (sorted)`` for the collection."""
        rows = await self._cypher.run("ingest", "chunk_ids_of_collection", collection=collection)
        return {r["document_id"]: sorted(r["chunk_ids"]) for r in rows}

    async def stray_chunks(self, collection: str) -> list[str]:
        return [r["id"] for r in await self._cypher.run("ingest", "stray_chunks", collection=collection)]

    async def delete_stray_chunks(self, ids: list[str]) -> None:
        """Delete the chunks, then refresh the entities they mentioned."""
        rows = await self._cypher.run("ingest", "delete_stray_chunks", ids=ids)
        await self.refresh_entities(list(rows[0]["entities"]) if rows else [])

    async def refresh_entities(self, ids: list[str]) -> None:
        """Recompute the mention counts, labels, chunk and neighbour lists of these entities (the graph writer does
        this for the entities a write touches; backfills and repairs call it for the others)."""
        if ids:
            await self._cypher.run("ingest", "refresh_entity_mentions", **refresh_parameters(ids))

    async def entities_without_lists(self, limit: int) -> list[str]:
        """Ids of entities written before entities carried chunk and neighbour lists."""
        return [r["id"] for r in await self._cypher.run("ingest", "entities_without_lists", limit=limit)]

    async def prune_orphan_entities(self, collection: str) -> int:
        """Delete the collection's entities that nothing mentions, then refresh their neighbours' lists."""
        row = (await self._cypher.run("ingest", "prune_orphan_entities", collection=collection))[0]
        await self.refresh_entities(list(row["neighbours"]))
        return int(row["removed"])

    async def recount_entity_mentions(self, collection: str) -> int:
        """Fix mention counts that drifted (and refresh those entities' lists); returns how many."""
        ids = list((await self._cypher.run("ingest", "recount_entity_mentions", collection=collection))[0]["recounted"])
        await self.refresh_entities(ids)
        return len(ids)

    async def documents_without_title_norm(self, limit: int) -> list[Row]:
        """``id, title`` of documents without a title key."""
        return await self._cypher.run("ingest", "documents_without_title_norm", limit=limit)

    async def set_title_norms(self, rows: list[Row]) -> None:
        await self._cypher.run("ingest", "set_title_norms", rows=rows)

    async def backfill_done(self, backfill: str) -> bool:
        return bool(await self._cypher.run("ingest", "backfill_done", backfill=backfill))

    async def mark_backfill_done(self, backfill: str) -> None:
        await self._cypher.run("ingest", "mark_backfill_done", backfill=backfill)


class CommunitiesGraph(GraphArea):
    """Communities: their schema, the entity graph they are computed from, and global search
    (``cypher/communities.cypher``)."""

    async def apply_schema(self) -> None:
        """The communities' constraint, collection index and fulltext index (idempotent)."""
        for name in ("schema_constraint", "schema_collection_index", "schema_fulltext"):
            await self._cypher.run("communities", name)

    async def vector_indexes(self) -> list[Row]:
        """``name, dim`` of the community vector indexes."""
        return await self._cypher.run("communities", "vector_indexes")

    async def create_vector_index(self, prop: str, index: str, dim: int) -> None:
        """The cosine vector index ``index`` on ``Community.<prop>`` (``prop`` checked: ``[a-z0-9_]+``)."""
        if not re.fullmatch(r"[a-z0-9_]+", prop):
            raise ValueError(f"not a property name: {prop!r}")
        # A property name cannot be a parameter in a schema command: it is checked above and put in the text.
        statement = queries.cypher("communities", "create_vector_index").replace("/*PROPERTY*/", prop)
        options = {"indexConfig": {"vector.dimensions": dim, "vector.similarity_function": "cosine"}}
        store = self._cypher.store
        with store.traced("communities.create_vector_index"):
            await store.driver.execute_query(statement, parameters_={"index": index, "options": options},
                                             database_=store.database)

    async def replace(self, collection: str, prop: str, rows: list[Row], links: list[list[Any]],
                      parents: list[list[str]], computed_at: str, batch: int) -> None:
        """The collection's communities replaced by ``rows`` (members ``links``, ``parents`` pairs) in one
        transaction: all or nothing. Writes go in batches of ``batch`` rows (ten times that for links)."""
        q = queries.cypher

        async def work(tx: Any) -> None:
            while True:
                result = await tx.run(q("communities", "delete_communities"), collection=collection, batch=5000)
                record = await result.single()
                if not record or not record["deleted"]:
                    break
            for k in range(0, len(rows), batch):
                await (await tx.run(q("communities", "create_communities"), rows=rows[k:k + batch],
                                    property=prop, computed_at=computed_at)).consume()
            for k in range(0, len(links), 10 * batch):
                await (await tx.run(q("communities", "link_members"), links=links[k:k + 10 * batch])).consume()
            for k in range(0, len(parents), 10 * batch):
                await (await tx.run(q("communities", "link_parents"), pairs=parents[k:k + 10 * batch])).consume()

        store = self._cypher.store
        with store.traced("communities.replace"):
            async with store.driver.session(database=store.database) as session:
                await session.execute_write(work)

    async def entity_graph(self, collection: str) -> list[Row]:
        """``source, target, weight, predicates`` of the collection's relations."""
        return await self._cypher.run("communities", "entity_graph", collection=collection)

    async def entity_info(self, ids: list[str]) -> list[Row]:
        return await self._cypher.run("communities", "entity_info", ids=ids)

    async def entity_chunks(self, ids: list[str], per_entity: int) -> list[Row]:
        return await self._cypher.run("communities", "entity_chunks", ids=ids, per_entity=per_entity)

    async def listing(self, collections: list[str] | None, level: int | None, limit: int) -> list[Row]:
        return await self._cypher.run("communities", "list_communities", collections=collections, level=level,
                                      limit=limit)

    async def top(self, collections: list[str] | None, prop: str, embedding: list[float], k: int) -> list[Row]:
        return await self._cypher.run("communities", "global_top", collections=collections, property=prop,
                                      embedding=embedding, k=k)

    async def scan(self, collections: list[str] | None, prop: str, embedding: list[float], k: int) -> list[Row]:
        return await self._cypher.run("communities", "global_scan", collections=collections, property=prop,
                                      embedding=embedding, k=k)

    async def by_index(self, index: str, embedding: list[float], k: int) -> list[Row]:
        return await self._cypher.run("communities", "global_index", index=index, embedding=embedding, k=k)

    async def by_text(self, query: str, collections: list[str] | None, prop: str, embedding: list[float],
                      k: int) -> list[Row]:
        return await self._cypher.run("communities", "global_text", query=query, collections=collections,
                                      property=prop, embedding=embedding, k=k)

    async def details(self, ids: list[str], entities: int) -> list[Row]:
        return await self._cypher.run("communities", "community_details", ids=ids, entities=entities)


class PortableGraph(GraphArea):
    """Reads of a collection export (``cypher/portable.cypher``)."""

    async def counts(self, collection: str) -> Row:
        """``documents, chunks`` (and the graph's other counts) of one collection."""
        return (await self._cypher.run("portable", "graph_counts", collection=collection))[0]

    async def mentions(self, chunk_ids: list[str]) -> list[Row]:
        return await self._cypher.run("portable", "export_mentions", chunk_ids=chunk_ids)

    async def open_relations(self, collection: str, fetch_size: int) -> tuple[Any, Any]:
        """``(session, result)`` streaming every relation of the collection in evidence order; the caller
        reads ``result`` and closes ``session``."""
        store = self._cypher.store
        session = store.driver.session(database=store.database, fetch_size=fetch_size)
        try:
            params = {"collection": collection}
            result = await session.run(queries.checked_cypher("portable", "export_relations", params), params)
        except BaseException:
            await session.close()
            raise
        return session, result

    async def entities(self, keys: list[str], collection: str, prop: str) -> list[Row]:
        """The entities of ``keys`` with their vector in property ``prop``."""
        return await self._cypher.run("portable", "export_entities", keys=keys, collection=collection,
                                      property=prop)


class AliasesGraph(GraphArea):
    """The aliases backfill (``cypher/expansion.cypher``)."""

    async def document_entity_keys(self, doc_ids: list[str], collection: str) -> list[Row]:
        return await self._cypher.run("expansion", "document_entity_keys", doc_ids=doc_ids, collection=collection)

    async def add_entity_aliases(self, rows: list[Row]) -> Row:
        """``added, entities``: aliases written and entities that got some."""
        return (await self._cypher.run("expansion", "add_entity_aliases", rows=rows))[0]


class SuggestGraph(GraphArea):
    """The graph side of the suggestion terms (``cypher/suggest.cypher``)."""

    async def document_entities(self, collection: str, document_ids: list[str]) -> list[Row]:
        """``document_id, name, label, mentions`` of the documents' entities."""
        return await self._cypher.run("suggest", "document_entities", collection=collection,
                                      document_ids=document_ids)


class LinkingGraph(GraphArea):
    """Entity linking of a query, shared with the search path (``cypher/search.cypher``)."""

    async def link_fulltext(self, lucene_queries: list[str], collections: list[str] | None, k: int) -> list[Row]:
        """``query, hits`` per Lucene query: the entities whose names match it."""
        return await self._cypher.run("search", "link_entities_fulltext", queries=lucene_queries,
                                      collections=collections, k=k)


class SearchGraph(GraphArea):
    """What one search reads from Neo4j: the graph leg, the hits' entities, the graph prior's measure and
    query expansion's entity names (``cypher/graph_leg.cypher``, ``search.cypher``, ``expansion.cypher``)."""

    async def graph_leg(self, leg: dict[str, Any]) -> Row:
        """The graph leg's one record (linked entities, walk and scored chunks) for its parameter map."""
        return (await self._cypher.read("graph_leg", "graph_leg", leg=leg))[0]

    async def chunk_entities(self, chunk_ids: list[str]) -> dict[str, list[Row]]:
        """``chunk_id -> [{id, name, label, mentions}]``: the entities each chunk mentions most, most first."""
        record = (await self._cypher.read("search", "chunk_entities", chunk_ids=chunk_ids))[0]
        return {chunk_id: [{"id": e[0], "name": e[1], "label": e[2], "mentions": e[3]} for e in entities]
                for chunk_id, entities in record["chunks"]}

    async def entity_named_documents(self, collections: list[str] | None, sample: int) -> Row:
        """``documents, named``: of a sample of the documents, how many are named after an entity they mention."""
        return (await self._cypher.read("search", "entity_named_documents", collections=collections,
                                       sample=sample))[0]

    async def entities_named(self, norms: list[str], collections: list[str]) -> list[Row]:
        """Entities whose normalised name is one of ``norms``, with their aliases and neighbours' names."""
        return await self._cypher.read("expansion", "entities_named", norms=norms, collections=collections)

    async def entities_aliased(self, query: str, collections: list[str]) -> list[Row]:
        """Entities whose aliases match the Lucene ``query``."""
        return await self._cypher.read("expansion", "entities_aliased", query=query, collections=collections)


class GraphQueries:
    """Every area's typed Cypher statements, bound to one store."""

    def __init__(self, store: Neo4jStore) -> None:
        self.cypher = Cypher(store)
        self.admin = AdminGraph(self.cypher)
        self.entities = EntitiesGraph(self.cypher)
        self.ingest = IngestGraph(self.cypher)
        self.communities = CommunitiesGraph(self.cypher)
        self.portable = PortableGraph(self.cypher)
        self.aliases = AliasesGraph(self.cypher)
        self.linking = LinkingGraph(self.cypher)
        self.suggest = SuggestGraph(self.cypher)
        self.search = SearchGraph(self.cypher)
