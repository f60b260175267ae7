"""Aliases for documents stored before ingestion kept them: ``graphrag aliases --collection C``.

Ingestion records the abbreviations a document defines on its entities (:mod:`graphrag.ingest.aliases`).
A collection ingested before that has none, so query expansion can only use the graph's acronym
relations there. This pass reads the stored chunks (PostgreSQL) and the keys of the entities each
document mentions (Neo4j), finds the definitions the same way, and adds the aliases to the entities.
Nothing else is written; running it again adds nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any
from dataclasses import asdict, dataclass

from graphrag.ingest.aliases import add_aliases
from graphrag.ingest.payload import entity_id
from graphrag.models import Entity, Extraction
from graphrag.stores.neo4j import Neo4jStore
from graphrag.stores.postgres import PostgresStore

log = logging.getLogger(__name__)

PAGE = 200


@dataclass
class AliasReport:
    """What a backfill found and wrote."""

    collection: str
    documents: int = 0
    entities: int = 0  # entities that got at least one alias they did not have
    aliases: int = 0  # aliases added
    seconds: float = 0.0

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def document_aliases(keys: list[str], texts: list[str]) -> dict[str, set[str]]:
    """Entity key -> the aliases ``texts`` define for it, among the entities ``keys`` (pure)."""
    extraction = Extraction(entities={k: Entity(key=k, name=k, label="") for k in keys})
    add_aliases(extraction, texts)
    return extraction.aliases


async def backfill_aliases(postgres: PostgresStore, neo4j: Neo4jStore, collection: str) -> AliasReport:
    """Add the aliases the collection's stored documents define to their entities (see the module)."""
    started = time.perf_counter()
    report = AliasReport(collection)
    after: uuid.UUID | None = None
    while ids := await postgres.q.aliases.document_ids(collection, after, PAGE):
        after = ids[-1]
        texts: dict[str, list[str]] = {}
        for row in await postgres.q.aliases.chunk_texts(ids):
            texts.setdefault(str(row["document_id"]), []).append(row["content"])
        keyed = await neo4j.q.aliases.document_entity_keys([str(i) for i in ids], collection)

        found = await asyncio.to_thread(_aliases_found, keyed, texts)  # the definitions search is CPU work
        report.documents += len(ids)
        if found:
            rows = [{"id": entity_id(collection, key), "aliases": sorted(aliases)} for key, aliases in found.items()]
            written = await neo4j.q.aliases.add_entity_aliases(rows)
            report.aliases += int(written["added"])
            report.entities += int(written["entities"])
        log.debug("aliases: %s documents of %s read", report.documents, collection)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


def _aliases_found(keyed: list[dict[str, Any]], texts: dict[str, list[str]]) -> dict[str, set[str]]:
    """Entity key -> the aliases its documents' texts define."""
    found: dict[str, set[str]] = {}
    for row in keyed:
        for key, aliases in document_aliases(row["keys"], texts.get(row["document_id"], [])).items():
            found.setdefault(key, set()).update(aliases)
    return found
