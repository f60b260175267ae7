"""Per-collection vector indexes: a large collection that shares its embedding dimension with other
collections gets an HNSW index of its own (``sql/migrations/009_collection_vector_index.sql``).

The dimension's shared index serves every collection. A search of one collection filters its
neighbours, and where the query's nearest chunks are in other collections the scan reads through
those first (several times the work of an unfiltered scan). The collection's own index, which a
search of it uses instead, removes that. It is built at the end of an ingest or import, once the
collection reaches ``GRAPHRAG_COLLECTION_INDEX_MIN_CHUNKS``. Below that the shared index serves it
(a second index costs every write, and the filtered scan of a small collection reads less), and a
collection alone in its dimension gains nothing from a second index of the same rows.
"""

from __future__ import annotations

import logging
import time

from graphrag.errors import one_line
from graphrag.stores.postgres import PostgresStore

log = logging.getLogger(__name__)


async def index_large_collections(pg: PostgresStore, min_chunks: int) -> list[str]:
    """Build the indexes of the collections that are due one; the names of those built.

    A failed build is logged and left for the next ingest: the shared index still answers."""
    if min_chunks <= 0:
        return []
    built: list[str] = []
    for row in await pg.q.collections.due_vector_indexes(min_chunks):
        started = time.perf_counter()
        try:
            name = await pg.q.collections.ensure_collection_vector_index(row["collection"], int(row["dim"]))
        except Exception as exc:  # noqa: BLE001 - searches keep the shared index; the next ingest retries
            log.warning("vector index of collection %s not built: %s", row["collection"], one_line(exc))
            continue
        log.info("built vector index %s of collection %s in %.1f s", name, row["collection"],
                 time.perf_counter() - started)
        built.append(name)
    return built
