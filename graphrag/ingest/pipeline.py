"""Ingestion, orchestrated: files or documents -> chunks -> embeddings + entities -> both stores.

Model work (chunking, embedding, extraction) for batch N+1 runs in worker threads while batch N is
being written, and embedding and extraction of one batch run side by side (lanes.py). Each batch is
written in one PostgreSQL transaction: the rows, the keyword statistics, the suggestion terms and an
outbox entry with the batch's graph payload (payload.py, writer.py); the outbox is then applied to
Neo4j, and entries stay pending while Neo4j is away. A failing batch is retried document by document,
so one bad document is reported in ``failed`` and the rest go in. The models are in ingest_models.py,
the summary in report.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from graphrag.config import Settings
from graphrag.errors import InvalidInput, NotFound, ServiceUnavailable, one_line
from graphrag.ingest import terms
from graphrag.ingest.chunk import CHUNKERS, default_strategy
from graphrag.ingest.embed import PADDED_TOKENS_PER_BATCH, Embedder, length_batches
from graphrag.ingest.embedders import EmbeddingSpace
from graphrag.ingest.extract import add_title_entity
from graphrag.ingest.lanes import run_model_stages
from graphrag.ingest.load import TYPES, discover, left_out_by_file_types
from graphrag.ingest.reading import read_documents
from graphrag.ingest import representations as extended
from graphrag.ingest.representations import Representation
from graphrag.ingest.aliases import add_aliases
from graphrag.ingest.ingest_models import IngestModels, embedding_inputs
from graphrag.ingest.outbox import GraphOutbox
from graphrag.ingest.payload import GraphPayload, Item, content_hash
from graphrag.ingest.report import IngestReport, report_finished
from graphrag.ingest.vector_index import index_large_collections
from graphrag.ingest.writer import check_collection_model, record_graph
from graphrag.models import Chunk, Document, Extraction, is_collection_name
from graphrag.stores.neo4j import GraphWrites, Neo4jStore
from graphrag.stores.postgres import DocumentRow, PostgresStore

log = logging.getLogger(__name__)

# Extraction walks a batch in slices of about this many chunks (one nlp.pipe batch), so progress
# moves every few documents; embedding jobs hold at most this many chunks too (see _prepare).
SLICE_CHUNKS = 64
# Documents go through in batches of at most this many documents or kilobytes of text. Larger batches
# cost less CPU per document (embedding jobs are drawn from more chunks, so less padding, and each
# write carries more rows): on 1,000 SciFact abstracts 64 documents a batch cost 96-104 CPU seconds,
# 256 cost 91 (docs/benchmarks.md). The first and last batches are cut smaller (batch_bounds).
BATCH_DOCS = 256
BATCH_KB = 1024
FILE_TYPES = frozenset(TYPES.values())


class Ingestor:
    """Ingests into one pair of stores; create once per process and reuse."""

    def __init__(self, settings: Settings, postgres: PostgresStore, neo4j: Neo4jStore,
                 models: IngestModels | None, outbox: GraphOutbox | None = None) -> None:
        self.settings = settings
        self.postgres = postgres
        self.graph = GraphWrites(neo4j)
        self.outbox = outbox or GraphOutbox(postgres, self.graph)
        self._models = models  # None: a deleter only (deletion needs no models)
        # Entity-name vectors by model and key, as float32 rows (a list of Python floats takes eight
        # times the memory, and a large corpus has tens of thousands of entities).
        self._entity_vectors: dict[str, np.ndarray] = {}

    @property
    def models(self) -> IngestModels:
        if self._models is None:
            raise RuntimeError("this Ingestor was built without models; it can only delete")
        return self._models

    # -- public API -----------------------------------------------------------------------------
    async def ingest_paths(self, paths: Sequence[Path], *, collection: str, chunker: str | None = None,
                           tags: Sequence[str] = (), file_types: set[str] | None = None, sync: bool = False,
                           progress: bool = False, text_config: str | None = None,
                           extended_mode: str | None = None) -> IngestReport:
        """Ingest files and folders; with ``sync`` also delete documents whose file is gone.

        A path that does not exist is :class:`InvalidInput` before anything is read or written (a
        mistyped path must not pass for an empty folder). With ``sync``, a folder or file that is gone
        but has documents stored under it is allowed: syncing it removes them.
        """
        start = time.perf_counter()
        _check_options(collection, chunker, file_types)
        report = IngestReport()
        roots = [p.expanduser().resolve() for p in paths]
        await self._check_paths(paths, roots, collection, sync)
        found, skipped = discover(roots, file_types, self.settings.read_ignore_files)
        report.files = len(found)
        report.skipped.extend(skipped)
        docs = await read_documents(found, self.settings, report, progress)
        await self.ingest_documents(docs, collection=collection, chunker=chunker, tags=tags, report=report,
                                    progress=progress, text_config=text_config, extended_mode=extended_mode)
        if sync:
            report.deleted += await self._sync(collection, roots, docs, report)
        await self._add_totals(report, collection)
        report.seconds = round(time.perf_counter() - start, 3)
        report_finished(report)
        return report

    async def _check_paths(self, given: Sequence[Path], roots: list[Path], collection: str, sync: bool) -> None:
        missing = [(g, r) for g, r in zip(given, roots, strict=True) if not r.exists()]
        if missing and sync:
            stored = [r["source"] for r in await self.postgres.q.documents.sources(collection)]
            missing = [(g, r) for g, r in missing if not any(_under(s, r) for s in stored)]
        if missing:
            raise InvalidInput("no such file or directory: " + ", ".join(str(g) for g, _ in missing))

    async def _add_totals(self, report: IngestReport, collection: str) -> None:
        """What the collection holds in each store after this ingest (skipped when nothing changed,
        so that re-ingesting an unchanged corpus stays a look-up)."""
        if not (report.ingested or report.updated or report.deleted):
            return
        row = await self.postgres.q.documents.totals(collection)
        totals: dict[str, int | None] = {"documents": row.documents, "chunks": row.chunks,
                                         "entities": None, "relations": None}
        try:
            graph = await self.graph.store.q.ingest.collection_graph_counts(collection)
            totals.update(entities=graph["entities"], relations=graph["relations"])
        except Exception as exc:  # noqa: BLE001 - the counts are information; Neo4j may be away
            log.info("graph totals not read: %s", one_line(exc))
        report.totals = totals

    async def ingest_changes(self, changes: list[dict[str, Any]], *, collection: str, chunker: str | None = None,
                             tags: Sequence[str] = (), progress: bool = False,
                             extended_mode: str | None = None) -> IngestReport:
        """Apply a git-hook style change list ``[{"path", "added"|"modified"|"deleted": true}]``."""
        start = time.perf_counter()
        to_ingest: list[Path] = []
        to_delete: list[Path] = []
        report = IngestReport()
        _check_options(collection, chunker, None)
        for n, change in enumerate(changes):
            if not isinstance(change, dict) or not isinstance(change.get("path"), str):
                raise InvalidInput(f"--changes entry {n}: needs a string 'path'")
            flags = [k for k in ("added", "modified", "deleted") if change.get(k) is True]
            if len(flags) != 1:
                raise InvalidInput(f"--changes entry {n}: set exactly one of added, modified, deleted to true")
            path = Path(change["path"]).expanduser().resolve()
            (to_delete if flags[0] == "deleted" else to_ingest).append(path)
        # Every added or modified file must exist before anything is deleted or written.
        await self._check_paths(to_ingest, to_ingest, collection, sync=False)
        for path in to_delete:
            report.deleted += await self.delete(collection=collection, source=str(path), missing_ok=True)
        if to_ingest:
            sub = await self.ingest_paths(to_ingest, collection=collection, chunker=chunker, tags=tags,
                                          progress=progress, extended_mode=extended_mode)
            sub.deleted += report.deleted
            report = sub
        if report.totals is None:
            await self._add_totals(report, collection)
        report.seconds = round(time.perf_counter() - start, 3)
        return report

    async def ingest_documents(self, docs: Sequence[tuple[Document, str]], *, collection: str,
                               chunker: str | None = None, tags: Sequence[str] = (),
                               report: IngestReport | None = None, progress: bool = False,
                               text_config: str | None = None, extended_mode: str | None = None) -> IngestReport:
        """Ingest already-loaded documents (``(document, origin)`` pairs). A new collection is created
        with the configured embedding model and ``text_config`` (default GRAPHRAG_TEXT_SEARCH_CONFIG).

        ``extended_mode`` (``off``, ``extractive``, ``llm``; default GRAPHRAG_EXTENDED, else what the
        collection recorded) makes extended-search representations; it is recorded with the collection,
        and documents already stored unchanged get theirs too (see graphrag/ingest/representations.py)."""
        start = time.perf_counter()
        _check_options(collection, chunker, None)
        owned = report is None  # the caller that made the report reports it when done
        requested = extended.check_mode(extended_mode if extended_mode is not None else self.settings.extended)
        explicit = extended_mode is not None or self.settings.extended is not None
        if requested is not None:
            self.models.representer(requested)  # an LLM mode without a model fails before anything is written
        report = report or IngestReport()
        # A collection's own glossary (read off the event loop: a large one takes seconds to match
        # against); a bad file stops the ingest here, before anything is written.
        profile = await asyncio.to_thread(self.models.extraction, collection)
        items: list[Item] = []
        seen_sources: set[str] = set()
        for doc, origin in docs:
            if doc.source in seen_sources:
                report.failed.append({"path": origin, "error": f"duplicate source {doc.source!r} in this ingest"})
                continue
            seen_sources.add(doc.source)
            strategy = chunker or default_strategy(doc)
            row = DocumentRow(collection, doc.source, doc.title,
                              content_hash(doc, strategy, profile.signature, tags),
                              doc.metadata, tuple(tags))
            items.append(Item(doc, origin, strategy, row, extractor=profile.extractor))
        existing: dict[str, tuple[uuid.UUID, str]] = {}
        sources = [i.row.source for i in items]
        for k in range(0, len(sources), 1000):
            existing.update(await self.postgres.existing_documents(collection, sources[k:k + 1000]))
        todo = []
        unchanged: list[uuid.UUID] = []
        for item in items:
            found = existing.get(item.row.source)
            if found and found[1] == item.row.content_hash:
                report.unchanged += 1
                unchanged.append(found[0])
            else:
                item.existed = found is not None
                todo.append(item)
        if todo or text_config is not None or (explicit and items):
            # A configuration asked for is checked even when nothing changed.
            info, space = await self.models.embedders.for_write(self.postgres, collection, text_config)
            await self._ensure_entity_index(space)
            mode = await self._extended_mode(collection, requested, explicit, space.dim)
            for item in todo:
                item.space, item.text_config, item.extended = space, info.text_config, mode
            if mode is not None and unchanged:
                report.representations += await extended.backfill(
                    self, collection, unchanged, mode, space, info.text_config)
        await self._run(todo, report, progress)
        if todo:
            await index_large_collections(self.postgres, self.settings.collection_index_min_chunks)
        if not report.seconds:
            report.seconds = round(time.perf_counter() - start, 3)
        if owned:
            report_finished(report)
        return report

    async def _extended_mode(self, collection: str, requested: str | None, explicit: bool, dim: int) -> str | None:
        """The collection's extended mode for this ingest: the one asked for (then recorded), else the
        recorded one. Makes the representations' vector index of the dimension when a mode is on."""
        async with self.postgres.connection() as session:
            recorded = await extended.collection_mode(session, collection)
            mode = requested if explicit else recorded
            if explicit and mode != recorded:
                await extended.record_mode(session, collection, mode)
            if mode is not None:
                self.models.representer(mode)
                await extended.ensure_index(session, dim)
        return mode

    async def delete(self, *, collection: str, document_id: str | None = None, source: str | None = None,
                     missing_ok: bool = False) -> int:
        """Remove one document from both stores (graph contributions taken back). Returns 0 or 1."""
        if document_id is not None:
            try:
                doc_uuid = uuid.UUID(document_id)
            except ValueError:
                raise InvalidInput(f"not a document id: {document_id!r}") from None
            found = await self.postgres.q.documents.by_id(doc_uuid)
        else:
            assert source is not None
            found = await self.postgres.q.documents.by_source(collection, source)
        if found is None:
            if missing_ok:
                return 0
            raise NotFound(f"no document {'id ' + str(document_id) if document_id else 'with source ' + repr(source)}"
                           f"{'' if document_id else ' in collection ' + repr(collection)}")
        return await self._delete_ids([found["id"]])

    async def rebuild_graph(self, document_ids: Sequence[uuid.UUID], *, batch_size: int = 32) -> int:
        """Re-derive the graph of stored documents from their chunks in PostgreSQL (the source of truth):
        extract again, record a replace in the outbox, apply it. Returns how many documents were rebuilt."""
        done = 0
        for k in range(0, len(document_ids), batch_size):
            ids = list(document_ids[k:k + batch_size])
            docs = {r["id"]: r for r in await self.postgres.q.documents.by_ids(ids)}
            chunk_rows = await self.postgres.q.documents.chunks_of_documents(ids)
            items: list[Item] = []
            chunk_ids: dict[uuid.UUID, list[str]] = {}
            for doc_id, row in docs.items():
                rows = [c for c in chunk_rows if c["document_id"] == doc_id]
                if not rows:
                    continue
                doc = Document(source=row["source"], title=row["title"], text="", kind="markdown")
                item = Item(doc, row["source"], "", DocumentRow(row["collection"], row["source"], row["title"], "", {}))
                item.chunks = [Chunk(index=c["chunk_index"], text=c["content"], char_start=c["char_start"],
                                     char_end=c["char_end"], heading_path=tuple(c["heading_path"] or ()))
                               for c in rows]
                chunk_ids[doc_id] = [str(c["id"]) for c in rows]
                items.append(item)
            if not items:
                continue
            extractions: dict[int, Extraction] = {}
            for collection in {i.row.collection for i in items}:
                group = [k for k, i in enumerate(items) if i.row.collection == collection]
                extractor = (await asyncio.to_thread(self.models.extraction, collection)).extractor
                found = await asyncio.to_thread(extractor.extract_many, [[c.text for c in items[k].chunks] for k in group])
                extractions.update(zip(group, found, strict=True))
            for k, item in enumerate(items):
                extraction = extractions[k]
                add_title_entity(extraction, item.doc.title)
                add_aliases(extraction, [c.text for c in item.chunks])
                item.extraction = extraction
                _, item.space = await self.models.embedders.for_write(self.postgres, item.row.collection)
            await self._embed_entity_names(items)
            by_collection: dict[str, GraphPayload] = {}
            for doc_id, item in zip([d for d in docs if d in chunk_ids], items, strict=True):
                payload = by_collection.setdefault(item.row.collection, GraphPayload(item.row.collection))
                payload.add(str(doc_id), item, chunk_ids[doc_id], self._entity_vectors,
                            item.space.name if item.space else self.models.embedder.name)
            async with self.postgres.unit_of_work() as uow:
                await terms.replace(uow, {doc_id: terms.extraction_terms(item.row.title, item.extraction)
                                      for doc_id, item in zip([d for d in docs if d in chunk_ids], items,
                                                              strict=True)})
                for payload in by_collection.values():
                    await record_graph(uow, payload)
            await self._apply_graph()
            done += len(items)
        return done

    async def _embed_entity_names(self, items: list[Item]) -> None:
        """Embed the entity names not embedded yet, with each collection's model (cached per model)."""
        by_model: dict[str, tuple[Embedder, dict[str, str]]] = {}
        for item in items:
            embedder = item.space.embedder if item.space else self.models.embedder
            names = by_model.setdefault(embedder.name, (embedder, {}))[1]
            for k, e in item.extraction.entities.items():  # type: ignore[union-attr]
                if f"{embedder.name}\x1f{k}" not in self._entity_vectors:
                    names[k] = e.name
        for model, (embedder, names) in by_model.items():
            if not names:
                continue
            keys = list(names)
            vecs = await asyncio.to_thread(embedder.encode, [names[k] for k in keys])
            if len(self._entity_vectors) > 200_000:
                self._entity_vectors.clear()
            self._entity_vectors.update({f"{model}\x1f{k}": v for k, v in zip(keys, vecs, strict=True)})

    async def _ensure_entity_index(self, space: EmbeddingSpace) -> None:
        """The Neo4j vector index of the collection's model (made on its first use); Neo4j being
        away is not fatal here, as graph writes wait in the outbox."""
        try:
            await self.graph.store.ensure_entity_vector_index(space.name, space.dim)
        except ServiceUnavailable as exc:
            log.warning("entity vector index for %s not ensured yet: %s", space.name, one_line(exc))

    # -- stages ---------------------------------------------------------------------------------
    def _batches(self, items: list[Item]) -> list[list[Item]]:
        units = [max(1, len(item.doc.text) // 1000) for item in items]
        return [items[a:b] for a, b in batch_bounds(units, BATCH_DOCS, BATCH_KB)]

    async def _run(self, items: list[Item], report: IngestReport, progress: bool) -> None:
        if not items:
            return
        queue: asyncio.Queue[list[Item] | None] = asyncio.Queue(maxsize=1)
        # The bar counts documents whose model work (chunk, embed, extract) is done: that is where the
        # time goes, and it moves every few documents; the postfix counts what is already written.
        bar = tqdm(total=len(items), desc="ingest", unit="doc", disable=not progress, file=sys.stderr)
        first_written = report.ingested + report.updated

        async def produce() -> None:
            # The next batch is chunked while this one is in the model lanes, so they never wait for it,
            # and it enters the lanes as soon as this one's jobs are all handed out (two batches at most
            # in the model stages); batches reach the writer in order.
            batches = self._batches(items)
            ahead: asyncio.Task[tuple[list[Item], int]] | None = None
            preparing: list[asyncio.Task[list[Item]]] = []

            async def hand_over(keep: int) -> None:
                """Prepared batches to the writer, oldest first, until ``keep`` are left."""
                while len(preparing) > keep:
                    await queue.put(await preparing[0])
                    preparing.pop(0)  # after the await: a cancelled ingest still finds it to cancel

            try:
                for n, batch in enumerate(batches):
                    chunked = await (ahead or self._chunk(batch, report))
                    ahead = asyncio.create_task(self._chunk(batches[n + 1], report)) if n + 1 < len(batches) else None
                    drained: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
                    preparing.append(asyncio.create_task(self._prepare(*chunked, report, bar.update, drained)))
                    while not (drained.done() or preparing[-1].done()):
                        await asyncio.wait([drained, *preparing], return_when=asyncio.FIRST_COMPLETED)
                        if preparing[0].done():
                            await hand_over(1)  # the older batch goes to the writer as soon as it is ready
                    newest = preparing[-1]
                    if newest.done() and not newest.cancelled() and newest.exception():
                        # A batch whose model work failed stops the ingest: the batches before it go to
                        # the writer whole, no later batch starts.
                        preparing.pop()
                        await hand_over(0)
                        newest.result()
                    await hand_over(1)  # two batches at most in the model stages
                await hand_over(0)
            finally:
                if ahead is not None:
                    ahead.cancel()
                for task in preparing:
                    task.cancel()
                await queue.put(None)

        producer = asyncio.create_task(produce())
        try:
            while (batch := await queue.get()) is not None:
                t0 = time.perf_counter()
                await self._write_batch(batch, report)
                report.add_time("write", time.perf_counter() - t0)
                bar.set_postfix(written=report.ingested + report.updated - first_written, chunks=report.chunks)
            await producer
        finally:
            producer.cancel()
            bar.close()

    async def _chunk(self, batch: list[Item], report: IngestReport) -> tuple[list[Item], int]:
        """Chunk a batch's documents (in a worker thread): those that have chunks now, and how many
        failed (in ``report.failed``)."""
        t0 = time.perf_counter()
        space = batch[0].space
        chunker = self.models.chunker(space.embedder if space else self.models.embedder)

        def chunk_all() -> list[Exception | None]:
            errors: list[Exception | None] = []
            for item in batch:
                try:
                    item.chunks = chunker.chunk(item.doc, item.strategy)
                    errors.append(None if item.chunks else InvalidInput("no text to index after chunking"))
                except Exception as exc:  # noqa: BLE001 - reported per document
                    errors.append(exc)
            return errors

        errors = await asyncio.to_thread(chunk_all)
        for item, exc in zip(batch, errors, strict=True):
            if exc is not None:
                report.failed.append({"path": item.origin, "error": one_line(exc)})
        report.add_time("chunk", time.perf_counter() - t0)
        ready = [item for item, exc in zip(batch, errors, strict=True) if exc is None]
        return ready, len(batch) - len(ready)

    async def _prepare(self, ready: list[Item], failed: int, report: IngestReport,
                       done: Callable[[int], object] = lambda n: None,
                       drained: asyncio.Future[Any] | None = None) -> list[Item]:
        """Embed and extract a chunked batch side by side (two lanes, :mod:`graphrag.ingest.lanes`),
        then embed new entity names. ``failed``: the batch's documents that chunking failed.

        Extraction walks the batch in slices of about ``SLICE_CHUNKS`` chunks, in document order.
        Embedding takes the batch's chunks longest first, in jobs of similar length in tokens (one
        model batch each, so little padding, and small enough that the two lanes end close together).
        ``done(n)`` is called (on the event loop) as further documents have passed both, and for those
        that failed.
        ``drained`` is set once every job of the batch has been handed out to a lane.
        """
        loop = asyncio.get_running_loop()
        if failed:
            done(failed)
        if not ready:
            return []
        space = ready[0].space
        embedder = space.embedder if space else self.models.embedder
        counter = self.models.counter_for(embedder)
        extractor = ready[0].extractor or self.models.extractor
        slices = _slices(ready, SLICE_CHUNKS)
        passed = {"embed": 0, "extract": 0}
        counted = 0

        def advance(stage: str, n: int) -> None:
            nonlocal counted
            passed[stage] += n
            now = min(passed.values())
            if now > counted:
                done(now - counted)
                counted = now

        def on_loop(fn: Callable[..., object], *args: Any) -> None:  # from a worker thread
            try:
                loop.call_soon_threadsafe(fn, *args)
            except RuntimeError:  # the loop is gone (interrupted): nobody is watching any more
                pass

        def notify(stage: str, n: int) -> None:
            on_loop(advance, stage, n)

        flat = [(d, c) for d, item in enumerate(ready) for c in item.chunks]

        # Jobs group chunks by their length in tokens, what a model batch is padded in.
        texts, lengths = await asyncio.to_thread(embedding_inputs, [c for _, c in flat], counter, embedder)
        jobs = length_batches(lengths, min(SLICE_CHUNKS, getattr(embedder, "batch_size", SLICE_CHUNKS)),
                              PADDED_TOKENS_PER_BATCH)
        all_vectors = np.zeros((len(flat), embedder.dim), dtype=np.float32)
        left = [len(item.chunks) for item in ready]  # chunks of each document still to embed
        left_lock = threading.Lock()

        def embed(k: int, threads: int) -> None:
            rows = jobs[k]
            all_vectors[rows] = embedder.encode([texts[j] for j in rows], threads=threads,
                                                lengths=[lengths[j] for j in rows])
            with left_lock:
                finished = 0
                for j in rows:
                    left[flat[j][0]] -= 1
                    finished += left[flat[j][0]] == 0
            if finished:
                notify("embed", finished)

        def extract(k: int) -> list[Extraction]:
            out: list[Extraction] = extractor.extract_many([[c.text for c in i.chunks] for i in slices[k]])
            notify("extract", len(slices[k]))
            return out

        def set_drained() -> None:
            if drained is not None and not drained.done():
                drained.set_result(None)

        def on_drained() -> None:  # from a lane
            on_loop(set_drained)

        async def represent() -> list[list[extended.Representation]] | None:
            mode = ready[0].extended
            if mode is None:
                return None
            t = time.perf_counter()
            docs = [(item.doc.title, [c.text for c in item.chunks]) for item in ready]
            out = await asyncio.to_thread(self.models.representer(mode).represent, embedder, docs)
            report.add_time("represent", time.perf_counter() - t)
            return out

        run, reps = await asyncio.gather(
            asyncio.to_thread(run_model_stages, len(jobs), embed, len(slices), extract, on_drained=on_drained),
            represent())
        report.add_time("embed", run.embed_s)
        report.add_time("extract", run.extract_s)
        per_doc: list[list[Representation] | None] = list(reps) if reps is not None else [None] * len(ready)
        for item, item_reps in zip(ready, per_doc, strict=True):
            item.representations = item_reps
        pos = 0
        for item, extraction in zip(ready, [e for part in run.extracted for e in part], strict=True):
            add_title_entity(extraction, item.doc.title)
            add_aliases(extraction, [c.text for c in item.chunks])
            item.embeddings = all_vectors[pos:pos + len(item.chunks)]
            item.extraction = extraction
            pos += len(item.chunks)
        t1 = time.perf_counter()
        await self._embed_entity_names(ready)
        report.add_time("embed", time.perf_counter() - t1)
        return ready

    async def _write_batch(self, batch: list[Item], report: IngestReport) -> None:
        if not batch:
            return
        try:
            await self._write(batch, report)
        except Exception as exc:  # noqa: BLE001
            if len(batch) == 1:
                log.warning("ingest of %s failed: %s", batch[0].origin, one_line(exc))
                report.failed.append({"path": batch[0].origin, "error": one_line(exc)})
                return
            log.info("batch write failed (%s); retrying document by document", one_line(exc))
            for item in batch:
                await self._write_batch([item], report)

    async def _write(self, batch: list[Item], report: IngestReport) -> None:
        space = batch[0].space
        model = space.name if space else self.models.embedder.name
        collection = batch[0].row.collection
        text_config = batch[0].text_config
        async with self.postgres.unit_of_work() as uow:
            # One transaction: the rows, the statistics, the terms and the outbox entry.
            await check_collection_model(uow, collection, model)
            payload = GraphPayload(collection)
            outcomes = []
            written_reps = 0
            upserted = [await PostgresStore.upsert_document(uow, item.row) for item in batch]
            ids = [doc_id for doc_id, _ in upserted]
            await uow.documents.stats_subtract(ids)  # old chunks of updated documents
            chunk_ids = [[uuid.uuid4() for _ in item.chunks] for item in batch]
            await uow.documents.replace_chunks(ids, [
                (cid, doc_id, collection, c.index, c.text, list(c.heading_path), c.char_start, c.char_end,
                 c.token_count, c.has_code, json.dumps(c.metadata), vec, model, text_config)
                for item, doc_id, cids in zip(batch, ids, chunk_ids, strict=True)
                for cid, c, vec in zip(cids, item.chunks, item.embeddings, strict=True)  # type: ignore[arg-type]
            ])
            for item, (doc_id, inserted), cids in zip(batch, upserted, chunk_ids, strict=True):
                if item.representations is not None or not inserted:
                    # Stale ones go even when none are made (the collection's mode was turned off).
                    written_reps += await extended.replace_representations(
                        uow, collection=collection, document_id=doc_id, chunk_ids=cids,
                        reps=item.representations or [], model=model, text_config=text_config,
                        generator=self.models.representer(item.extended).generator if item.extended else "")
                payload.add(str(doc_id), item, [str(c) for c in cids], self._entity_vectors, model)
                outcomes.append((item, inserted, str(doc_id)))
            await uow.documents.stats_add(ids)
            await terms.replace(uow, {doc_id: terms.extraction_terms(item.row.title, item.extraction)
                                      for item, (doc_id, _) in zip(batch, upserted, strict=True)})
            await record_graph(uow, payload)  # the graph work commits with the chunks
        await self._apply_graph(report)
        report.count_graph(payload)
        report.representations += written_reps
        for item, inserted, done_id in outcomes:
            if inserted:
                report.ingested += 1
            else:
                report.updated += 1
            report.chunks += len(item.chunks)
            report.documents.append({"id": done_id, "source": item.row.source, "chunks": len(item.chunks),
                                     "status": "ingested" if inserted else "updated"})

    async def _apply_graph(self, report: IngestReport | None = None) -> None:
        """Apply the outbox now, so the graph is current when ingest returns; if Neo4j is away the
        entries stay pending (the API's worker, the next ingest or `graphrag repair` apply them)."""
        t0 = time.perf_counter()
        result = await self.outbox.drain_now()
        if result is not None and report is not None:
            report.add_time("write_neo4j", time.perf_counter() - t0)
            report.graph_pending = result.pending

    async def _delete_ids(self, ids: list[uuid.UUID]) -> int:
        async with self.postgres.unit_of_work() as uow:
            rows = await uow.documents.collections_of(ids)
            await terms.remove(uow, ids)  # before the cascade takes the documents' terms away
            deleted = await uow.documents.delete(ids)
            for r in rows:
                await GraphOutbox.enqueue_remove(uow, r["collection"], [str(i) for i in r["ids"]])
        await self._apply_graph()
        return len(deleted)

    async def _sync(self, collection: str, roots: list[Path], docs: Sequence[tuple[Document, str]],
                    report: IngestReport) -> int:
        """Delete the documents of the collection under ``roots`` that this ingest would not store now:
        their file is gone, or the walk skipped it as no page (ignored, a template, a partial, a page
        that only shows others, no text), or it was read and the record is no longer in it. A file
        that failed to read keeps what it had, and so does one left out by ``--file-types``."""
        seen = {d.source for d, _ in docs}
        read = {path for _, path in docs}
        failed = {f["path"] for f in report.failed}
        dropped = [Path(s["path"]) for s in report.skipped if not left_out_by_file_types(s)]
        rows = await self.postgres.q.documents.sources(collection)
        stale = []
        for r in rows:
            source = r["source"]
            if source in seen or not any(_under(source, root) for root in roots):
                continue
            file = source.split("#", 1)[0]
            if file in failed:
                continue
            if file in read or not Path(file).exists() or any(_under(file, d) for d in dropped):
                stale.append(r["id"])
        return await self._delete_ids(stale) if stale else 0


def batch_bounds(units: list[int], max_docs: int, max_units: int) -> list[tuple[int, int]]:
    """Consecutive ``[start, end)`` ranges of documents (``units``: each one's size, at least 1),
    each of at most ``max_docs`` documents and, unless one document alone exceeds it, ``max_units``.

    The first batch is cut into 1/8, 1/8, 1/4 and 1/2 of its documents and the last into 1/2, 1/4,
    1/8 and 1/8: the pipeline starts on a small batch instead of leaving a core idle while a large
    one is chunked, and ends on a small write instead of a large one that nothing overlaps."""
    bounds: list[tuple[int, int]] = []
    start = size = 0
    for i, unit in enumerate(units):
        size += unit
        if i + 1 - start >= max_docs or size >= max_units:
            bounds.append((start, i + 1))
            start, size = i + 1, 0
    if start < len(units):
        bounds.append((start, len(units)))
    if not bounds:
        return []

    def ramp(a: int, b: int, fractions: tuple[int, ...]) -> list[tuple[int, int]]:
        cuts = [a + (b - a) * f // 8 for f in fractions]
        return [(x, y) for x, y in pairwise(cuts) if y > x]

    first = ramp(*bounds[0], (0, 1, 2, 4, 8))
    if len(bounds) == 1:
        return first
    return first + bounds[1:-1] + ramp(*bounds[-1], (0, 4, 6, 7, 8))


def _slices(items: list[Item], chunks: int) -> list[list[Item]]:
    """Consecutive runs of documents holding at least ``chunks`` chunks each (the last may hold fewer)."""
    out: list[list[Item]] = []
    cur: list[Item] = []
    size = 0
    for item in items:
        cur.append(item)
        size += len(item.chunks)
        if size >= chunks:
            out.append(cur)
            cur, size = [], 0
    if cur:
        out.append(cur)
    return out


def _under(source: str, root: Path) -> bool:
    """Whether a stored file source is ``root`` (or a record of it, ``path#n``) or lies below it."""
    top = str(root)
    return source == top or source.startswith(top + "#") or source.startswith(top.rstrip("/") + "/")


def _check_options(collection: str, chunker: str | None, file_types: set[str] | None) -> None:
    if not is_collection_name(collection):
        raise InvalidInput(
            f"invalid collection name {collection!r}: use 1-64 letters, digits, '_', '-', '.', starting alphanumeric"
        )
    if chunker is not None and chunker not in CHUNKERS:
        raise InvalidInput(f"unknown chunker {chunker!r}; choose one of {', '.join(CHUNKERS)}")
    if file_types:
        unknown = file_types - FILE_TYPES
        if unknown:
            raise InvalidInput(f"unknown file types {', '.join(sorted(unknown))}; known: {', '.join(sorted(FILE_TYPES))}")
