"""``graphrag reembed``: move a collection to another embedding model in place.

Search keeps answering from the old vectors the whole time. New vectors go to
``chunks.embedding_next`` (and entity vectors to the new model's own property in Neo4j); when every
chunk has one, a single PostgreSQL transaction, under the collection's lock, swaps them in and points
the collection at the new model. A search sees either the old model or the new one, never a mix.

It is resumable: a crashed or interrupted run leaves ``collections.reembed_model`` set and the
vectors already computed in place; running the same command again embeds only what is missing.
Writers hold the collection's lock shared while they write chunks, so chunks ingested during a
re-embed are picked up before the switch, and a write that embedded with the old model after the
switch fails cleanly instead of storing vectors of the wrong model.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

from tqdm import tqdm

from graphrag.errors import InvalidInput, NotFound, ServiceUnavailable, one_line
from graphrag.ingest.embed import Embedder, parse_spec
from graphrag.ingest.embedders import Embedders
from graphrag.ingest.ingest_models import IngestModels, embedding_text
from graphrag.models import Chunk, entity_vector_slot, is_collection_name
from graphrag.stores.neo4j import Neo4jStore
from graphrag.stores.postgres import PostgresStore

log = logging.getLogger(__name__)

_CHUNK_BATCH = 256
_ENTITY_BATCH = 512


@dataclass
class ReembedReport:
    """The ``reembed --json`` summary."""

    collection: str
    from_model: str
    to_model: str
    dim: int
    chunks: int = 0  # embedded by this run
    entities: int = 0  # entity names embedded by this run
    resumed: bool = False  # a previous run to the same model was continued
    switched: bool = False
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def reembed(postgres: PostgresStore, neo4j: Neo4jStore, models: IngestModels, *, collection: str,
                  model: str, progress: bool = False) -> ReembedReport:
    """Re-embed every chunk and entity of ``collection`` with ``model`` (a GRAPHRAG_EMBEDDING_MODEL
    spec), then switch the collection to it atomically."""
    started = time.perf_counter()
    if not is_collection_name(collection):
        raise InvalidInput(f"invalid collection name {collection!r}")
    info = (await postgres.collection_info([collection])).get(collection)
    if info is None:
        raise NotFound(f"no collection {collection!r}")
    embedders: Embedders = models.embedders
    settings = embedders.settings
    spec = parse_spec(model, settings.embedding_base_url if settings else None)
    recorded = await postgres.model(spec.name)
    embedder: Embedder = await asyncio.to_thread(
        embedders.load, spec, dim=recorded.dim if recorded else None)
    target = await embedders.register(postgres, embedder)
    report = ReembedReport(collection, info.model.name, target.name, target.dim)
    if target.name == info.model.name and info.reembed is None:
        report.seconds = round(time.perf_counter() - started, 3)
        return report  # already there: nothing to do
    report.resumed = info.reembed is not None and info.reembed.name == target.name
    async with postgres.unit_of_work() as uow:
        await uow.collections.lock(collection)
        if info.reembed is not None and info.reembed.name != target.name:
            await uow.collections.reset_reembed_vectors(collection)
            await uow.representations.reset_reembed_vectors(collection)
        await uow.representations.ensure_index(target.dim)
        await uow.collections.start_reembed(collection, target.name)
    await neo4j.ensure_entity_vector_index(target.name, target.dim)

    counter = models.counter_for(embedder)
    while True:
        report.chunks += await _embed_chunks(postgres, embedder, counter, collection, progress)
        await _embed_representations(postgres, embedder, collection)
        report.entities += await _embed_entities(neo4j, embedder, collection)
        if await _switch(postgres, collection, target.name):
            break
        log.info("chunks were written to %s during the re-embed; embedding them too", collection)
    report.switched = True
    # Entities first written between the entity pass and the switch (a concurrent ingest).
    report.entities += await _embed_entities(neo4j, embedder, collection)
    await _drop_old_entity_vectors(neo4j, collection, info.model.name, target.name)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


async def _embed_chunks(postgres: PostgresStore, embedder: Embedder, counter: Any, collection: str,
                        progress: bool) -> int:
    total, done = await postgres.q.collections.reembed_counts(collection)
    bar = tqdm(total=total, initial=done, desc="reembed", unit="chunk", disable=not progress, file=sys.stderr)
    embedded = 0
    try:
        while todo := await postgres.q.collections.reembed_todo(collection, _CHUNK_BATCH):
            # The same text ingestion embeds: the chunk under its heading path, when that fits.
            texts = [embedding_text(Chunk(index=0, text=r["content"], char_start=0, char_end=len(r["content"]),
                                          heading_path=tuple(r["heading_path"] or ()), token_count=r["token_count"]),
                                    counter) for r in todo]
            vectors = await asyncio.to_thread(embedder.encode, texts)
            await postgres.q.collections.set_reembed_vectors([(r["id"], v) for r, v in zip(todo, vectors, strict=True)])
            embedded += len(todo)
            bar.update(len(todo))
    finally:
        bar.close()
    return embedded


async def _embed_representations(postgres: PostgresStore, embedder: Embedder, collection: str) -> int:
    """New vectors for the collection's extended-search representations (switched with the chunks)."""
    embedded = 0
    while todo := await postgres.q.representations.reembed_todo(collection, _CHUNK_BATCH):
        vectors = await asyncio.to_thread(embedder.encode, [r["text"] for r in todo])
        await postgres.q.representations.set_reembed_vectors([(r["id"], v) for r, v in zip(todo, vectors, strict=True)])
        embedded += len(todo)
    return embedded


async def _embed_entities(neo4j: Neo4jStore, embedder: Embedder, collection: str) -> int:
    prop = entity_vector_slot(embedder.name)[0]
    embedded = 0
    try:
        while rows := await neo4j.q.entities.without_vector(collection, prop, _ENTITY_BATCH):
            vectors = await asyncio.to_thread(embedder.encode, [r["name"] or "" for r in rows])
            await neo4j.q.entities.set_vectors(
                prop, [{"id": r["id"], "vector": v.tolist()} for r, v in zip(rows, vectors, strict=True)])
            embedded += len(rows)
    except ServiceUnavailable as exc:
        raise ServiceUnavailable(f"Neo4j is unavailable, so entity vectors cannot be re-embedded ({one_line(exc)}); "
                                 "run the same command again when it is back: finished work is kept") from None
    return embedded


async def _switch(postgres: PostgresStore, collection: str, model: str) -> bool:
    """Swap the new vectors in, atomically, if every chunk has one (else False: more to embed)."""
    async with postgres.unit_of_work() as uow:
        await uow.collections.lock(collection)
        chunks_total, chunks_done = await uow.collections.reembed_counts(collection)
        reps_total, reps_done = await uow.representations.reembed_counts(collection)
        if chunks_done < chunks_total or reps_done < reps_total:
            return False
        await uow.collections.switch_chunks(collection, model)
        await uow.representations.switch(collection, model)
        await uow.collections.switch(collection, model)
    return True


async def _drop_old_entity_vectors(neo4j: Neo4jStore, collection: str, old: str, new: str) -> None:
    """Free the old model's entity vectors of the collection (best effort: unused after the switch)."""
    old_prop, new_prop = entity_vector_slot(old)[0], entity_vector_slot(new)[0]
    if old_prop == new_prop:
        return
    try:
        while await neo4j.q.entities.drop_vectors(collection, old_prop):
            pass
    except ServiceUnavailable as exc:
        log.warning("old entity vectors of %s not removed: %s", collection, one_line(exc))
