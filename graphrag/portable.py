"""Portable collections: ``graphrag export`` writes a collection of both stores into one archive
(:mod:`graphrag.archive`), ``graphrag import`` restores it into any deployment.

Export reads PostgreSQL (documents, chunks, vectors) in one snapshot through a cursor, and the graph
(entities with their name vectors, mentions, relations) part by part beside it, so memory holds one
part, never the collection. It holds the collection's lock shared: ingestion goes on, a re-embed's
switch waits until the export ends.

Extended-search representations (titles, summaries, propositions) travel with their documents'
chunks, vectors included, and the collection's extended mode in the header; entities carry their
aliases. Nothing is re-made or re-embedded on import.

Import first reads the whole archive once (:func:`graphrag.archive.verify`: checksums, member order,
every row, ids that would collide with other collections) and the target (its model and text
configuration): a damaged, foreign or unusable archive is refused before anything is written. Then
each part is one PostgreSQL transaction holding its documents, chunks, BM25 statistics and the graph
write in the outbox (the path ingestion uses), applied to Neo4j at once or, while Neo4j is away,
later. Ids are kept when a collection is restored under its own name; under another name each id is
derived from the new name and the old id. Either way importing an archive twice gives the same
state: a part replaces the collection's documents with the same ids or sources.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from graphrag import __version__
from graphrag.archive import (
    FORMAT,
    FORMAT_VERSION,
    HEADER,
    PART_KINDS,
    VECTOR_ENCODING,
    ArchiveError,
    ArchiveWriter,
    Manifest,
    decode_vector,
    encode_vector,
    iter_members,
    part_member,
    read_header,
    read_jsonl,
    verify,
)
from graphrag.errors import (
    GraphRAGError,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    ServiceError,
    ServiceUnavailable,
    one_line,
)
from graphrag.ingest.embed import Embedder
from graphrag.ingest import representations as extended
from graphrag.ingest.embedders import Embedders
from graphrag.ingest.extract import title_key
from graphrag.ingest.outbox import GraphOutbox
from graphrag.ingest.payload import entity_id
from graphrag.ingest.vector_index import index_large_collections
from graphrag.models import entity_vector_slot, is_collection_name
from graphrag.runtime import Runtime
from graphrag.stores.repo import PgQueries
from graphrag.stores.postgres import CHUNK_COLUMNS, CollectionRecord, ModelRecord

log = logging.getLogger(__name__)

#: Chunks per part: a part is read, written and imported (one transaction) as a whole.
PART_CHUNKS = 1000
IMPORT_NAMESPACE = uuid.UUID("5d0c7d4e-3a51-4f0e-9b0a-2f6c7e1d9a42")
DOCUMENT_COLUMNS = ("id", "collection", "source", "title", "content_hash", "metadata", "tags", "created_at",
                    "updated_at")
_STAGE_FLUSH = 1 << 20


class CollectionDrift(ServiceError):
    """The two stores disagree about the collection: an export would not be a faithful copy."""

    status_code = 409
    title = "Conflict"


def _json(value: Any) -> Any:
    # asyncpg hands jsonb back as text (no codec registered for it).
    return json.loads(value) if isinstance(value, str) else (value or {})


def check_name(collection: Any) -> str:
    """A collection name, or :class:`InvalidInput` naming the rule."""
    if not is_collection_name(collection):
        raise InvalidInput(f"invalid collection name {collection!r}: use 1-64 letters, digits, '_', '-', '.', "
                           "starting alphanumeric")
    return str(collection)


# --- export ------------------------------------------------------------------------------------------
@dataclass
class ExportReport:
    """What an export wrote."""

    collection: str
    embedding_model: str
    dim: int
    text_config: str
    compression: str
    documents: int = 0
    chunks: int = 0
    representations: int = 0
    entities: int = 0
    mentions: int = 0
    relations: int = 0
    parts: int = 0
    bytes: int = 0
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


COUNTED = ("documents", "chunks", "representations", "entities", "mentions", "relations")


def describe_model(model: ModelRecord) -> dict[str, Any]:
    """The embedding model as the archive records it (enough to load it again)."""
    return {"name": model.name, "provider": model.provider, "spec": model.spec, "dim": model.dim,
            "base_url": model.base_url}


class CollectionExport:
    """One export, checked and ready to stream (see :func:`prepare_export`)."""

    def __init__(self, rt: Runtime, info: CollectionRecord, compression: str, part_chunks: int) -> None:
        self.rt = rt
        self.collection = info.name
        self.compression = compression
        self.part_chunks = part_chunks
        self.report = ExportReport(info.name, info.model.name, info.model.dim, info.text_config, compression)

    async def stream(self) -> AsyncIterator[bytes]:
        """The archive's bytes as they are produced. An error part-way ends the stream early: the
        archive then lacks its manifest, and an import refuses it."""
        started = time.perf_counter()
        writer = ArchiveWriter(compression=self.compression)
        try:
            async for data in self._stream(writer, started):
                yield data
        except BaseException:
            writer.abort()
            raise

    async def _stream(self, writer: ArchiveWriter, started: float) -> AsyncIterator[bytes]:
        async with self.rt.postgres.connection() as session:
            # Session-level shared lock before the snapshot: a re-embed's switch (exclusive) cannot fall
            # between the vectors read here and the model recorded beside them.
            await session.portable.lock_shared(self.collection)
            try:
                async with session.conn.transaction(isolation="repeatable_read", readonly=True):
                    info = (await _collection_info(session, [self.collection])).get(self.collection)
                    if info is None:
                        raise NotFound(f"unknown collection {self.collection!r}")
                    description = {
                        "format": FORMAT, "format_version": FORMAT_VERSION, "graphrag_version": __version__,
                        "collection": self.collection, "embedding_model": describe_model(info.model),
                        "text_config": info.text_config, "vector_encoding": VECTOR_ENCODING,
                        "extended": await extended.collection_mode(session, self.collection),
                    }
                    writer.add(HEADER, json.dumps(description, indent=2, sort_keys=True).encode("utf-8"))
                    yield writer.take()
                    async for data in self._parts(session, writer, info):
                        yield data
                    manifest = {**description, "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                                "entity_vector_property": entity_vector_slot(info.model.name)[0],
                                "parts": self.report.parts,
                                "counts": {k: getattr(self.report, k) for k in COUNTED}}
                    await asyncio.to_thread(writer.finish, manifest)
                    tail = writer.take()
                    self.report.bytes = writer.sink.written
                    self.report.seconds = round(time.perf_counter() - started, 3)
                    yield tail
            finally:
                try:
                    await session.portable.unlock_shared(self.collection)
                except Exception as exc:  # noqa: BLE001 - the pool's reset releases it too
                    log.info("collection lock of the export not released here: %s", one_line(exc))

    async def _parts(self, session: PgQueries, writer: ArchiveWriter, info: CollectionRecord) -> AsyncIterator[bytes]:
        prop = entity_vector_slot(info.model.name)[0]
        relations = _RelationFeed(self.rt, self.collection)
        emitted: set[str] = set()  # entity keys written so far (each entity once, in its first part)
        try:
            docs: list[Any] = []
            size = 0
            async for row in session.portable.documents(self.collection, prefetch=512):
                docs.append(row)
                size += row["chunk_count"]
                if size >= self.part_chunks:
                    yield await self._part(session, writer, info, prop, docs, relations, emitted)
                    docs, size = [], 0
            if docs:
                yield await self._part(session, writer, info, prop, docs, relations, emitted)
            left = await relations.rest()
            if left:
                log.warning("%s relation(s) of %s cite no chunk of the collection and were left out", left,
                            self.collection)
        finally:
            await relations.close()

    async def _part(self, session: PgQueries, writer: ArchiveWriter, info: CollectionRecord, prop: str, docs: list[Any],
                    relations: _RelationFeed, emitted: set[str]) -> bytes:
        part = self.report.parts + 1
        doc_ids = [r["id"] for r in docs]
        chunk_rows = await session.portable.chunks(doc_ids)
        rep_rows = await session.portable.representations(doc_ids)
        chunk_ids = [str(r["id"]) for r in chunk_rows]
        rows = (await self.rt.neo4j.q.portable.mentions(chunk_ids)) if chunk_ids else []
        mentions = sorted(({"chunk_id": r["chunk_id"], "entity_key": key, "count": count, "label": label}
                           for r in rows for key, count, label in r["mentions"]),
                          key=lambda m: (m["chunk_id"], m["entity_key"]))
        owned = await relations.until(str(doc_ids[-1]))
        wanted: dict[str, None] = {}
        for m in mentions:
            wanted.setdefault(m["entity_key"], None)
        for r in owned:
            wanted.setdefault(r["source_key"], None)
            wanted.setdefault(r["target_key"], None)
        new_keys = [k for k in wanted if k not in emitted]
        entities = (await self.rt.neo4j.q.portable.entities(new_keys, self.collection, prop) if new_keys else [])
        entities.sort(key=lambda e: e["key"])
        emitted.update(new_keys)
        model = info.model.name
        for r in chunk_rows:
            if r["embedding_model"] != model:
                raise ServiceError(f"chunk {r['id']} of {self.collection} holds a vector of {r['embedding_model']}, "
                                   f"not of the collection's model {model}: re-embed the collection first "
                                   f"(`graphrag reembed --collection {self.collection} --model {model}`)")
        for r in rep_rows:
            if r["embedding_model"] != model:
                raise ServiceError(f"a representation of document {r['document_id']} holds a vector of "
                                   f"{r['embedding_model']}, not of the collection's model {model}: re-embed the "
                                   f"collection first (`graphrag reembed --collection {self.collection} --model {model}`)")

        def encode() -> bytes:
            writer.add_rows(part_member(part, "documents"), [_document_out(r) for r in docs])
            writer.add_rows(part_member(part, "chunks"), [_chunk_out(r) for r in chunk_rows])
            writer.add_rows(part_member(part, "representations"), [_representation_out(r) for r in rep_rows])
            writer.add_rows(part_member(part, "entities"), [_entity_out(e) for e in entities])
            writer.add_rows(part_member(part, "mentions"), mentions)
            writer.add_rows(part_member(part, "relations"), [_relation_out(r) for r in owned])
            return writer.take()

        data = await asyncio.to_thread(encode)
        self.report.parts = part
        self.report.documents += len(docs)
        self.report.chunks += len(chunk_rows)
        self.report.representations += len(rep_rows)
        self.report.entities += len(entities)
        self.report.mentions += len(mentions)
        self.report.relations += len(owned)
        return data


class _RelationFeed:
    """The collection's relations ordered by the last document their evidence cites, read as a
    stream beside the documents (a merge join: each part takes the relations its documents complete)."""

    def __init__(self, rt: Runtime, collection: str) -> None:
        self.rt = rt
        self.collection = collection
        self._session: Any = None
        self._result: Any = None

    async def _open(self) -> None:
        self._session, self._result = await self.rt.neo4j.q.portable.open_relations(self.collection, 2000)

    async def until(self, last_document: str) -> list[dict[str, Any]]:
        """The next relations whose last evidence document sorts at or before ``last_document``."""
        if self._result is None:
            await self._open()
        out = []
        while (record := await self._result.peek()) is not None:
            owner = record["owner"]
            if owner is None or owner > last_document:
                break
            out.append((await self._result.fetch(1))[0].data())
        return out

    async def rest(self) -> int:
        """How many relations are left (those whose evidence cites no chunk of the collection)."""
        if self._result is None:
            return 0
        return len(await self._result.fetch(1 << 30))

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


async def _collection_info(session: PgQueries, names: list[str]) -> dict[str, CollectionRecord]:
    rows = await session.collections.info(names)
    return {r["name"]: CollectionRecord.of(r) for r in rows}


def _document_out(r: Any) -> dict[str, Any]:
    return {"id": str(r["id"]), "source": r["source"], "title": r["title"], "content_hash": r["content_hash"],
            "metadata": _json(r["metadata"]), "tags": list(r["tags"] or []),
            "created_at": r["created_at"].isoformat(), "updated_at": r["updated_at"].isoformat()}


def _chunk_out(r: Any) -> dict[str, Any]:
    return {"id": str(r["id"]), "document_id": str(r["document_id"]), "index": r["chunk_index"],
            "content": r["content"], "heading_path": list(r["heading_path"] or []), "char_start": r["char_start"],
            "char_end": r["char_end"], "token_count": r["token_count"], "has_code": r["has_code"],
            "metadata": _json(r["metadata"]), "embedding": encode_vector(r["embedding"])}


def _representation_out(r: Any) -> dict[str, Any]:
    return {"id": str(r["id"]), "document_id": str(r["document_id"]),
            "chunk_id": str(r["chunk_id"]) if r["chunk_id"] is not None else None, "kind": r["kind"],
            "content": r["content"], "token_count": r["token_count"], "generator": r["generator"],
            "embedding": encode_vector(r["embedding"])}


def _entity_out(e: dict[str, Any]) -> dict[str, Any]:
    out = {"key": e["key"], "name": e["name"], "label": e["label"], "norm": e["norm"],
           "vector": encode_vector(e["vector"])}
    if e.get("aliases"):  # only where documents defined some: other entities' rows stay as they were
        out["aliases"] = sorted(e["aliases"])
    return out


def _relation_out(r: dict[str, Any]) -> dict[str, Any]:
    ids = list(r["chunk_ids"] or [])
    weights = list(r["weights"] or [])
    if len(weights) != len(ids):  # relations written before per-chunk weights were kept
        weights = [1] * len(ids)
    return {"source_key": r["source_key"], "target_key": r["target_key"], "chunk_ids": ids, "weights": weights,
            "predicate_evidence": list(r["predicate_evidence"] or [])}


async def prepare_export(rt: Runtime, collection: str, *, compression: str = "gzip",
                         part_chunks: int = PART_CHUNKS) -> CollectionExport:
    """Check that ``collection`` can be exported (it exists, and after pending graph writes are applied
    both stores hold the same documents and chunks) and return the export, ready to stream."""
    check_name(collection)
    if compression not in ("gzip", "none"):
        raise InvalidInput(f"unknown compression {compression!r}; choose gzip or none")
    info = (await rt.postgres.collection_info([collection])).get(collection)
    if info is None:
        raise NotFound(f"unknown collection {collection!r}")
    drained = await rt.outbox.drain()
    if drained.error and drained.pending:
        raise ServiceUnavailable(f"Neo4j is not accepting writes ({drained.error}); an export needs the graph")
    pg = await rt.postgres.q.documents.totals(collection)
    graph = await rt.neo4j.q.portable.counts(collection)
    if (pg.documents, pg.chunks) != (graph["documents"], graph["chunks"]):
        raise CollectionDrift(
            f"collection {collection!r} differs between the stores (PostgreSQL {pg.documents} documents, "
            f"{pg.chunks} chunks; Neo4j {graph['documents']}, {graph['chunks']}): run "
            f"`graphrag repair --collection {collection}` first")
    return CollectionExport(rt, info, compression, part_chunks)


async def export_to_file(rt: Runtime, collection: str, path: Path | None, *, compression: str = "gzip",
                         part_chunks: int = PART_CHUNKS) -> ExportReport:
    """Export into ``path`` (``None``: standard output). A file appears only when complete: the archive
    is written beside it and renamed at the end."""
    export = await prepare_export(rt, collection, compression=compression, part_chunks=part_chunks)
    if path is None:
        out = sys.stdout.buffer
        async for data in export.stream():
            await asyncio.to_thread(out.write, data)
        await asyncio.to_thread(out.flush)
        return export.report
    partial = path.with_name(path.name + ".partial")
    try:
        with partial.open("wb") as handle:
            async for data in export.stream():
                await asyncio.to_thread(handle.write, data)
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return export.report


# --- import ------------------------------------------------------------------------------------------
@dataclass
class ImportReport:
    """What an import wrote (counts of the archive's rows) and what the collection holds after it."""

    collection: str
    source_collection: str
    embedding_model: str
    dim: int
    text_config: str
    format_version: int
    extended: str | None = None  # the archive's extended-search mode
    documents: int = 0
    chunks: int = 0
    representations: int = 0
    entities: int = 0
    mentions: int = 0
    relations: int = 0
    replaced: int = 0  # documents of the collection the archive's replaced (same id or source)
    parts: int = 0
    created: bool = False  # the collection did not exist before
    graph_pending: int = 0  # graph writes recorded but not yet applied (Neo4j away)
    verify_seconds: float = 0.0
    seconds: float = 0.0
    totals: dict[str, int | None] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class _Ids:
    """Ids of the target: the archive's own under its own name, else derived from (name, old id)."""

    def __init__(self, target: str, source: str) -> None:
        self.target = target
        self.keep = target == source

    def __call__(self, old: str) -> uuid.UUID:
        value = uuid.UUID(old)
        return value if self.keep else uuid.uuid5(IMPORT_NAMESPACE, f"{self.target}\x1f{value}")


def _is_uuid(value: Any) -> bool:
    try:
        uuid.UUID(value)
    except (ValueError, TypeError, AttributeError):
        return False
    return isinstance(value, str)


def _int(value: Any, minimum: int = 0) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _no_nul(value: Any) -> bool:
    """PostgreSQL text and jsonb cannot hold NUL characters."""
    if isinstance(value, str):
        return "\x00" not in value
    if isinstance(value, dict):
        return all(_no_nul(k) and _no_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_no_nul(v) for v in value)
    return True


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


class _Checker:
    """Row checks of the verification pass: every field an import writes, the references between a
    part's rows, entity keys defined before use; and (through ``lookup``) ids that another collection
    of this deployment already uses. Only a part and the entity keys are kept in memory."""

    def __init__(self, dim: int, ids: _Ids, lookup: Callable[[list[uuid.UUID], list[uuid.UUID]], str | None]) -> None:
        self.dim = dim
        self.ids = ids
        self.lookup = lookup
        self.keys: set[str] = set()
        self.part_docs: set[str] = set()
        self.part_chunks: set[str] = set()
        self.rows = dict.fromkeys(PART_KINDS, 0)

    def __call__(self, name: str, data: bytes) -> None:
        kind = name.rsplit("/", 1)[-1].removesuffix(".jsonl")
        rows = read_jsonl(data, name)
        self.rows[kind] += len(rows)
        getattr(self, f"_{kind}")(name, rows)

    def _documents(self, member: str, rows: list[dict[str, Any]]) -> None:
        self.part_docs, self.part_chunks = set(), set()
        sources: set[str] = set()
        for n, r in enumerate(rows, 1):
            where = f"{member} line {n}"
            if not _is_uuid(r.get("id")) or r["id"] in self.part_docs:
                raise ArchiveError(f"{where}: missing or repeated document id")
            source = r.get("source")
            if not isinstance(source, str) or not source or source in sources:
                raise ArchiveError(f"{where}: missing or repeated source")
            if not all(isinstance(r.get(k), str) for k in ("title", "content_hash")):
                raise ArchiveError(f"{where}: title and content_hash must be strings")
            if not isinstance(r.get("metadata"), dict) or not _strings(r.get("tags")):
                raise ArchiveError(f"{where}: metadata must be an object and tags a list of strings")
            if _time(r.get("created_at")) is None or _time(r.get("updated_at")) is None:
                raise ArchiveError(f"{where}: created_at and updated_at must be ISO timestamps")
            if not _no_nul(r):
                raise ArchiveError(f"{where}: text with a NUL character")
            self.part_docs.add(r["id"])
            sources.add(source)

    def _chunks(self, member: str, rows: list[dict[str, Any]]) -> None:
        positions: set[tuple[str, int]] = set()
        for n, r in enumerate(rows, 1):
            where = f"{member} line {n}"
            if not _is_uuid(r.get("id")) or r["id"] in self.part_chunks:
                raise ArchiveError(f"{where}: missing or repeated chunk id")
            if r.get("document_id") not in self.part_docs:
                raise ArchiveError(f"{where}: the chunk's document is not in its part")
            if not _int(r.get("index")) or (r["document_id"], r["index"]) in positions:
                raise ArchiveError(f"{where}: missing or repeated chunk index")
            if not isinstance(r.get("content"), str) or not _strings(r.get("heading_path")):
                raise ArchiveError(f"{where}: content must be a string and heading_path a list of strings")
            if not (_int(r.get("char_start")) and _int(r.get("char_end")) and r["char_end"] >= r["char_start"]):
                raise ArchiveError(f"{where}: char_start and char_end must be offsets, start <= end")
            if not _int(r.get("token_count")) or not isinstance(r.get("has_code"), bool):
                raise ArchiveError(f"{where}: token_count must be a count and has_code a boolean")
            if not isinstance(r.get("metadata"), dict) or not _no_nul(r):
                raise ArchiveError(f"{where}: metadata must be an object, text free of NUL characters")
            decode_vector(r.get("embedding"), self.dim, where)
            self.part_chunks.add(r["id"])
            positions.add((r["document_id"], r["index"]))
        problem = self.lookup([self.ids(d) for d in sorted(self.part_docs)],
                              [self.ids(c) for c in sorted(self.part_chunks)])
        if problem:
            raise ArchiveError(f"{member}: {problem}")

    def _representations(self, member: str, rows: list[dict[str, Any]]) -> None:
        seen: set[str] = set()
        for n, r in enumerate(rows, 1):
            where = f"{member} line {n}"
            if not _is_uuid(r.get("id")) or r["id"] in seen:
                raise ArchiveError(f"{where}: missing or repeated representation id")
            if r.get("document_id") not in self.part_docs:
                raise ArchiveError(f"{where}: the representation's document is not in its part")
            kind, chunk = r.get("kind"), r.get("chunk_id")
            if kind not in ("title", "summary", "proposition"):
                raise ArchiveError(f"{where}: kind must be title, summary or proposition")
            if (kind == "proposition") != (chunk is not None) or (chunk is not None and chunk not in self.part_chunks):
                raise ArchiveError(f"{where}: a proposition needs a chunk of its part, a title or summary none")
            if not isinstance(r.get("content"), str) or not r["content"].strip() or not _no_nul(r):
                raise ArchiveError(f"{where}: content must be text free of NUL characters")
            if not _int(r.get("token_count")) or not isinstance(r.get("generator"), str):
                raise ArchiveError(f"{where}: token_count must be a count and generator a string")
            decode_vector(r.get("embedding"), self.dim, where)
            seen.add(r["id"])

    def _entities(self, member: str, rows: list[dict[str, Any]]) -> None:
        for n, r in enumerate(rows, 1):
            where = f"{member} line {n}"
            key = r.get("key")
            if not isinstance(key, str) or not key or key in self.keys:
                raise ArchiveError(f"{where}: missing or repeated entity key")
            if not isinstance(r.get("name"), str) or not isinstance(r.get("label"), str):
                raise ArchiveError(f"{where}: an entity needs a name and a label")
            if r.get("norm") is not None and not isinstance(r["norm"], str):
                raise ArchiveError(f"{where}: norm must be a string")
            if r.get("aliases") is not None and not _strings(r["aliases"]):
                raise ArchiveError(f"{where}: aliases must be a list of strings")
            decode_vector(r.get("vector"), self.dim, where)
            self.keys.add(key)

    def _mentions(self, member: str, rows: list[dict[str, Any]]) -> None:
        for n, r in enumerate(rows, 1):
            where = f"{member} line {n}"
            if r.get("chunk_id") not in self.part_chunks:
                raise ArchiveError(f"{where}: the mention's chunk is not in its part")
            if r.get("entity_key") not in self.keys:
                raise ArchiveError(f"{where}: the mention's entity is not defined before it")
            if not _int(r.get("count")) or (r.get("label") is not None and not isinstance(r["label"], str)):
                raise ArchiveError(f"{where}: count must be a count and label a string")

    def _relations(self, member: str, rows: list[dict[str, Any]]) -> None:
        for n, r in enumerate(rows, 1):
            where = f"{member} line {n}"
            if r.get("source_key") not in self.keys or r.get("target_key") not in self.keys:
                raise ArchiveError(f"{where}: the relation's entities are not defined before it")
            ids, weights = r.get("chunk_ids"), r.get("weights")
            if not isinstance(ids, list) or not all(_is_uuid(i) for i in ids):
                raise ArchiveError(f"{where}: chunk_ids must be a list of chunk ids")
            if (not isinstance(weights, list) or len(weights) != len(ids)
                    or not all(isinstance(w, int | float) and not isinstance(w, bool) for w in weights)):
                raise ArchiveError(f"{where}: weights must be numbers, one per chunk id")
            evidence = r.get("predicate_evidence")
            if not _strings(evidence) or not all(_is_uuid(p.rpartition("@")[2]) for p in evidence or ()):
                raise ArchiveError(f"{where}: predicate_evidence must be 'lemma@chunk_id' strings")


async def _check_target(rt: Runtime, target: str, model: ModelRecord,
                        text_config: str) -> tuple[CollectionRecord | None, ModelRecord | None]:
    """Can this deployment hold the archive under ``target``? Read-only; returns the target's record and
    this deployment's record of the archive's model (each None when there is none yet)."""
    if not await rt.postgres.q.collections.text_config_exists(text_config):
        raise InvalidInput(f"the archive's text-search configuration {text_config!r} does not exist on this "
                           "PostgreSQL")
    info = (await rt.postgres.collection_info([target])).get(target)
    if info is not None:
        if info.model.name != model.name:
            raise InvalidInput(
                f"collection {target!r} uses the embedding model {info.model.name} ({info.model.dim} dims), the "
                f"archive's vectors are by {model.name} ({model.dim} dims): import into a new collection "
                "(--collection NEW), which keeps the archive's model")
        if info.text_config != text_config:
            raise InvalidInput(f"collection {target!r} uses the text-search configuration {info.text_config!r}, "
                               f"the archive {text_config!r}: import into a new collection (--collection NEW)")
    known = await rt.postgres.model(model.name)
    if known is not None and known.dim != model.dim:
        raise InvalidInput(f"this deployment records {model.name} with {known.dim} dims, the archive with "
                           f"{model.dim}: they are not the same model")
    return info, known


async def _check_model(embedders: Embedders, model: ModelRecord) -> Embedder:
    """The vectors carry their model: searching the collection embeds queries with it, so it must load
    here (once per process; the API has the configured one loaded already)."""
    try:
        embedder = await embedders.aload_record(model)
    except (GraphRAGError, OSError, ValueError) as exc:
        raise InvalidInput(f"the archive's vectors are by {model.name} ({model.dim} dims), which cannot be loaded "
                           f"here: {one_line(exc)}") from None
    if embedder.dim != model.dim:
        raise InvalidInput(f"{model.name} gives {embedder.dim}-dim vectors here, the archive's have {model.dim}")
    return embedder


def _model_record(header: dict[str, Any]) -> ModelRecord:
    m = header["embedding_model"]
    base_url = m.get("base_url")
    return ModelRecord(m["name"], m["provider"], m["spec"], int(m["dim"]),
                       base_url if isinstance(base_url, str) else None)


class _Importer:
    """Pass two: each part into both stores (one transaction and one outbox entry per part)."""

    def __init__(self, rt: Runtime, report: ImportReport, model: ModelRecord, source: str) -> None:
        self.rt = rt
        self.report = report
        self.target = report.collection
        self.model = model
        self.text_config = report.text_config
        self.ids = _Ids(self.target, source)
        self.prop = entity_vector_slot(model.name)[0]
        # Entity key -> (name, label, norm, aliases): a later part's payload names the entities it uses again.
        self.entities: dict[str, tuple[str, str, str, list[str]]] = {}

    def _eid(self, key: str) -> str:
        return entity_id(self.target, key)

    def _cid(self, old: str) -> str:
        return str(self.ids(old))

    async def write(self, rows: dict[str, list[dict[str, Any]]]) -> None:
        """One part: rows for PostgreSQL and the graph payload (built in a worker thread), then one
        transaction with the outbox entry, then the outbox applied."""
        part = await asyncio.to_thread(self._build, rows)
        docs = rows["documents"]
        new_ids = [row[0] for row in part["doc_rows"]]
        async with self.rt.postgres.unit_of_work() as uow:
            await uow.collections.lock_shared(self.target)
            current = await uow.collections.current_model(self.target)
            if current is None or current["embedding_model"] != self.model.name:
                raise ServiceUnavailable(f"collection {self.target!r} moved to another embedding model during this "
                                         "import; run the import again")
            replaced = await uow.portable.replaced_documents(self.target, new_ids, [d["source"] for d in docs])
            if replaced:
                await uow.documents.stats_subtract(replaced)
                await uow.portable.delete_documents(replaced)
            await uow.sql.copy("documents", part["doc_rows"], list(DOCUMENT_COLUMNS))
            if part["chunk_rows"]:
                await uow.sql.copy("chunks", part["chunk_rows"], list(CHUNK_COLUMNS))
            if part["rep_rows"]:
                await uow.sql.copy("representations", part["rep_rows"], list(extended.REPRESENTATION_COLUMNS))
            await uow.documents.stats_add(new_ids)
            remove = sorted({str(i) for i in replaced} | {str(i) for i in new_ids})
            await GraphOutbox.enqueue_replace(uow, self.target, remove, part["graph_docs"], part["next_pairs"],
                                              part["entities"], part["mentions"], part["relations"])
        self.report.replaced += len(replaced)
        self.report.parts += 1
        self.report.documents += len(docs)
        self.report.chunks += len(part["chunk_rows"])
        self.report.representations += len(part["rep_rows"])
        self.report.entities += len(rows["entities"])
        self.report.mentions += len(part["mentions"])
        self.report.relations += len(part["relations"])
        await self._apply_graph()

    def _build(self, rows: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
        docs, chunks = rows["documents"], rows["chunks"]
        vectors: dict[str, np.ndarray | None] = {}
        for e in rows["entities"]:
            norm = e.get("norm") or e["key"].rsplit("|", 1)[0]
            self.entities[e["key"]] = (e["name"], e["label"], norm, list(e.get("aliases") or []))
            vectors[e["key"]] = decode_vector(e.get("vector"), self.model.dim, "entity")
        used: dict[str, None] = dict.fromkeys(vectors)
        for m in rows["mentions"]:
            used.setdefault(m["entity_key"], None)
        for r in rows["relations"]:
            used.setdefault(r["source_key"], None)
            used.setdefault(r["target_key"], None)
        entities = []
        for key in used:
            name, label, norm, aliases = self.entities[key]
            vec = vectors.get(key)
            entities.append({"id": self._eid(key), "collection": self.target, "name": name, "label": label,
                             "key": key, "norm": norm, "embedding": vec.tolist() if vec is not None else None,
                             "vector_property": self.prop, "aliases": aliases})
        doc_ids = {d["id"]: self.ids(d["id"]) for d in docs}
        doc_rows = [(doc_ids[d["id"]], self.target, d["source"], d["title"], d["content_hash"],
                     json.dumps(d["metadata"]), list(d["tags"]), _time(d["created_at"]), _time(d["updated_at"]))
                    for d in docs]
        chunk_rows = []
        by_doc: dict[str, list[dict[str, Any]]] = {d["id"]: [] for d in docs}
        for c in chunks:
            vec = decode_vector(c.get("embedding"), self.model.dim, "chunk")
            chunk_rows.append((self.ids(c["id"]), doc_ids[c["document_id"]], self.target, c["index"], c["content"],
                               list(c["heading_path"]), c["char_start"], c["char_end"], c["token_count"],
                               c["has_code"], json.dumps(c["metadata"]), vec, self.model.name, self.text_config))
            by_doc[c["document_id"]].append(c)
        rep_rows = []
        for r in rows.get("representations", []):  # none in version 1 archives
            vec = decode_vector(r.get("embedding"), self.model.dim, "representation")
            rep_rows.append((self.ids(r["id"]), self.target, doc_ids[r["document_id"]],
                             self.ids(r["chunk_id"]) if r["chunk_id"] is not None else None, r["kind"], r["content"],
                             r["token_count"], r["generator"], vec, self.model.name, self.text_config))
        graph_docs: list[dict[str, Any]] = []
        next_pairs: list[Any] = []
        for d in docs:
            mine = sorted(by_doc[d["id"]], key=lambda c: c["index"])
            ids = [self._cid(c["id"]) for c in mine]
            graph_docs.append({"id": str(doc_ids[d["id"]]), "collection": self.target, "source": d["source"],
                               "title": d["title"], "title_norm": title_key(d["title"]),
                               "chunks": [{"id": i, "index": c["index"], "text": c["content"]}
                                          for i, c in zip(ids, mine, strict=True)]})
            next_pairs.extend([a, b] for a, b in zip(ids, ids[1:], strict=False))
        mentions = [{"chunk_id": self._cid(m["chunk_id"]), "entity_id": self._eid(m["entity_key"]),
                     "count": m["count"], "label": m.get("label")} for m in rows["mentions"]]
        relations = []
        for r in rows["relations"]:
            source, target = sorted((self._eid(r["source_key"]), self._eid(r["target_key"])))
            evidence = []
            for p in r["predicate_evidence"]:
                lemma, _, cid = p.rpartition("@")
                evidence.append(f"{lemma}@{self._cid(cid)}")
            relations.append({"source": source, "target": target, "chunk_ids": [self._cid(c) for c in r["chunk_ids"]],
                              "weights": list(r["weights"]), "predicate_evidence": evidence})
        return {"doc_rows": doc_rows, "chunk_rows": chunk_rows, "rep_rows": rep_rows, "graph_docs": graph_docs,
                "next_pairs": next_pairs,
                "entities": entities, "mentions": mentions, "relations": relations}

    async def _apply_graph(self) -> None:
        try:
            result = await self.rt.outbox.drain()
        except Exception as exc:  # noqa: BLE001 - the rows are committed; the graph catches up later
            log.warning("graph outbox not drained: %s", one_line(exc))
            return
        self.report.graph_pending = result.pending
        if result.error and result.pending:
            log.warning("%s graph write(s) pending: %s", result.pending, result.error)


async def import_archive(rt: Runtime, path: Path, *, collection: str | None = None,
                         embedders: Embedders | None = None, progress: bool = False) -> ImportReport:
    """Verify the archive at ``path`` and restore it as ``collection`` (default: its own name).

    Raises :class:`~graphrag.archive.ArchiveError` (nothing written) for a damaged or foreign archive,
    :class:`InvalidInput` (nothing written) when this deployment cannot hold it (another model in the
    existing collection, a model that cannot be loaded here, ids of another collection).
    """
    started = time.perf_counter()
    if collection is not None:
        check_name(collection)
    if not path.is_file():
        raise InvalidInput(f"no such file: {path}")
    header = await asyncio.to_thread(read_header, path)
    source = header["collection"]
    target = collection or check_name(source)
    model = _model_record(header)
    embedders = embedders or rt.embedders
    info, known = await _check_target(rt, target, model, header["text_config"])
    ids = _Ids(target, source)
    loop = asyncio.get_running_loop()

    async def foreign(doc_ids: list[uuid.UUID], chunk_ids: list[uuid.UUID]) -> str | None:
        portable = rt.postgres.q.portable
        for check, values in ((portable.foreign_document, doc_ids), (portable.foreign_chunk, chunk_ids)):
            if values:
                row = await check(values, target)
                if row is not None:
                    return (f"id {row['id']} already belongs to collection {row['collection']!r} here; "
                            "import under another name (--collection NEW)")
        return None

    def lookup(doc_ids: list[uuid.UUID], chunk_ids: list[uuid.UUID]) -> str | None:
        # Called from the verifying worker thread: the query runs on the event loop, which is free.
        return asyncio.run_coroutine_threadsafe(foreign(doc_ids, chunk_ids), loop).result()

    checker = _Checker(model.dim, ids, lookup)
    manifest: Manifest = await asyncio.to_thread(verify, path, checker)
    if any(manifest.counts.get(kind) != checker.rows[kind] for kind in manifest.kinds):
        raise ArchiveError(f"the archive is damaged (its rows do not add up to the counts in its manifest: "
                           f"{manifest.counts})")
    embedder = await _check_model(embedders, known or model)
    mode = header.get("extended")
    if mode is not None and mode not in extended.MODES:
        raise ArchiveError(f"the archive names an unknown extended-search mode {mode!r}")
    report = ImportReport(target, source, model.name, model.dim, header["text_config"],
                          int(header["format_version"]), extended=mode, created=info is None)
    report.verify_seconds = round(time.perf_counter() - started, 3)

    # Verified: from here on the stores are written.
    # Recorded as it loads here (the configured spec when it is the configured model), not as the
    # archive's machine had it.
    await embedders.register(rt.postgres, embedder)
    await rt.postgres.create_collection(target, model.name, header["text_config"])
    session = rt.postgres.q
    if manifest.counts.get("representations"):
        await extended.ensure_index(session, model.dim)
    # Later ingests into the collection keep making representations as the archive's did; a mode the
    # target recorded already stays (the import replaces some of its documents, not its settings).
    if mode is not None and await extended.collection_mode(session, target) is None:
        await extended.record_mode(session, target, mode)
    try:
        await rt.neo4j.ensure_entity_vector_index(model.name, model.dim)
    except ServiceUnavailable as exc:  # graph writes wait in the outbox; the index comes with the next start
        log.warning("entity vector index for %s not ensured yet: %s", model.name, one_line(exc))
    importer = _Importer(rt, report, model, source)
    checksums = {m.name: m.sha256 for m in manifest.members}
    bar = tqdm(total=manifest.parts, desc="import", unit="part", disable=not progress, file=sys.stderr)
    members = iter_members(path)  # a generator: closed in the finally below
    rows: dict[str, list[dict[str, Any]]] = {}
    try:
        while (item := await asyncio.to_thread(next, members, None)) is not None:
            name, data = item
            if not name.startswith("parts/"):
                continue
            # The file is read a second time: it must still be the one verified.
            if hashlib.sha256(data).hexdigest() != checksums.get(name):
                raise ArchiveError(f"{path} changed while it was imported ({name}); import it again")
            kind = name.rsplit("/", 1)[-1].removesuffix(".jsonl")
            rows[kind] = await asyncio.to_thread(read_jsonl, data, name)
            if kind == PART_KINDS[-1]:
                await importer.write(rows)
                rows = {}
                bar.update(1)
    finally:
        members.close()
        bar.close()
    await index_large_collections(rt.postgres, rt.settings.collection_index_min_chunks)
    await _add_totals(rt, report)
    report.seconds = round(time.perf_counter() - started, 3)
    return report


async def _add_totals(rt: Runtime, report: ImportReport) -> None:
    row = await rt.postgres.q.documents.totals(report.collection)
    totals: dict[str, int | None] = {"documents": row.documents, "chunks": row.chunks, "entities": None,
                                     "relations": None}
    try:
        graph = await rt.neo4j.q.ingest.collection_graph_counts(report.collection)
        totals.update(entities=graph["entities"], relations=graph["relations"])
    except Exception as exc:  # noqa: BLE001 - the counts are information; Neo4j may be away
        log.info("graph totals not read: %s", one_line(exc))
    report.totals = totals


async def stage(chunks: AsyncIterator[bytes], *, limit_bytes: int | None = None, what: str = "archive") -> Path:
    """Copy a stream (an upload, standard input) into a temporary file, so that it can be verified
    before it is imported. Memory holds about a megabyte; over ``limit_bytes`` is :class:`PayloadTooLarge`.
    The caller deletes the file."""
    fd, name = tempfile.mkstemp(prefix="graphrag-import-", suffix=".archive")
    path = Path(name)
    total = 0
    try:
        with os.fdopen(fd, "wb") as handle:
            buffer = bytearray()
            async for chunk in chunks:
                total += len(chunk)
                if limit_bytes is not None and total > limit_bytes:
                    raise PayloadTooLarge(f"the {what} is over the size limit ({limit_bytes // (1 << 20)} MB)")
                buffer += chunk
                if len(buffer) >= _STAGE_FLUSH:
                    await asyncio.to_thread(handle.write, bytes(buffer))
                    buffer.clear()
            if buffer:
                await asyncio.to_thread(handle.write, bytes(buffer))
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    return path
