"""The graph outbox: graph writes recorded in PostgreSQL with the chunks, applied to Neo4j afterwards.

PostgreSQL is the source of truth. A document's graph work is inserted into ``graph_outbox`` in the
same transaction as its chunks, so it can never be lost or half-recorded. :meth:`GraphOutbox.drain`
applies entries in id order (hence in order per document) under an advisory lock, one drainer at a
time across processes. Entries are idempotent (a replace first takes back what the documents
contributed), so applying one twice after a crash is harmless. While Neo4j is away an entry stays
pending and is retried with exponential backoff; ingestion and vector/keyword search go on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from dataclasses import dataclass
from typing import Any

import asyncpg
import numpy as np
from neo4j.exceptions import ClientError, DatabaseError

from graphrag.errors import one_line
from graphrag.stores.neo4j import GraphWrites
from graphrag.stores.postgres import PostgresStore
from graphrag.stores.repo import PgQueries, UnitOfWork
from graphrag.stores.repo.outbox import OutboxEntry

log = logging.getLogger(__name__)
MAX_BACKOFF_S = 60.0
MAX_ATTEMPTS_FOR_REFUSED = 5  # a write Neo4j refuses (not an outage) is set aside after this many tries


REFUSED = (ClientError,)  # Neo4j rejected the write itself (e.g. a constraint): retrying will not help


def split_replace(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """A multi-document replace entry as one entry per document (chunks, mentions and relations
    belong to one document each; entities go with every document that uses them)."""
    owner = {c["id"]: d["id"] for d in payload["docs"] for c in d["chunks"]}
    entities = {e["id"]: e for e in payload["entities"]}
    parts = []
    for doc in payload["docs"]:
        mine = {c["id"] for c in doc["chunks"]}
        mentions = [m for m in payload["mentions"] if m["chunk_id"] in mine]
        relations = [r for r in payload["relations"] if r["chunk_ids"] and owner.get(r["chunk_ids"][0]) == doc["id"]]
        used = {m["entity_id"] for m in mentions} | {r["source"] for r in relations} | {r["target"] for r in relations}
        parts.append({
            "remove_doc_ids": [doc["id"]], "docs": [doc],
            "next_pairs": [p for p in payload["next_pairs"] if p[0] in mine],
            "entities": [entities[e] for e in entities if e in used], "mentions": mentions,
            "relations": relations, "dim": payload.get("dim", 0),
        })
    return parts


def _vector_rows(payload: dict[str, Any], vectors: bytes | None) -> dict[str, bytes]:
    dim = payload.get("dim") or 0
    if vectors is None or not dim:
        return {}
    width = dim * 4
    return {e["id"]: vectors[i * width:(i + 1) * width] for i, e in enumerate(payload["entities"])}


@dataclass
class DrainResult:
    """What one drain did: entries applied, entries still pending, the error that stopped it."""

    applied: int = 0
    pending: int = 0
    error: str | None = None


def backoff(attempts: int) -> float:
    """Seconds before the next try: 1, 2, 4, ... capped at a minute."""
    return float(min(MAX_BACKOFF_S, 2 ** max(attempts, 0)))


class GraphOutbox:
    """Records graph work in PostgreSQL and applies it to Neo4j."""

    def __init__(self, postgres: PostgresStore, graph: GraphWrites) -> None:
        self.postgres = postgres
        self.graph = graph
        self._lock = asyncio.Lock()  # one drainer per process; the advisory lock covers processes

    # -- recording (inside the caller's transaction) ---------------------------------------------
    @staticmethod
    async def enqueue_replace(uow: PgQueries, collection: str, remove_doc_ids: list[str],
                              docs: list[dict[str, Any]], next_pairs: list[list[str]],
                              entities: list[dict[str, Any]], mentions: list[dict[str, Any]],
                              relations: list[dict[str, Any]]) -> int:
        """Record "replace these documents' graph" in the caller's transaction."""
        plain = [{k: v for k, v in e.items() if k != "embedding"} for e in entities]
        dim = next((len(e["embedding"]) for e in entities if e.get("embedding") is not None), 0)
        vectors = None
        if dim:
            matrix = np.zeros((len(entities), dim), dtype=np.float32)
            for i, e in enumerate(entities):
                if e.get("embedding") is not None:
                    matrix[i] = e["embedding"]
                else:
                    plain[i]["no_embedding"] = True
            vectors = matrix.tobytes()
        payload = {"remove_doc_ids": remove_doc_ids, "docs": docs, "next_pairs": next_pairs, "entities": plain,
                   "mentions": mentions, "relations": relations, "dim": dim}
        return await uow.outbox.enqueue(collection=collection, op="replace",
                                        document_ids=[uuid.UUID(d) for d in remove_doc_ids],
                                        payload=json.dumps(payload), vectors=vectors)

    @staticmethod
    async def enqueue_remove(uow: PgQueries, collection: str, doc_ids: list[str]) -> int:
        """Record "remove these documents from the graph" in the caller's transaction."""
        return await uow.outbox.enqueue(collection=collection, op="remove",
                                        document_ids=[uuid.UUID(d) for d in doc_ids],
                                        payload=json.dumps({"doc_ids": doc_ids}), vectors=None)

    @staticmethod
    async def enqueue_drop(uow: PgQueries, collection: str) -> int:
        """Record "remove the whole collection from the graph" in the caller's transaction."""
        return await uow.outbox.enqueue(collection=collection, op="drop", document_ids=[],
                                        payload=json.dumps({"collection": collection}), vectors=None)

    # -- applying ----------------------------------------------------------------------------------
    async def drain_now(self) -> DrainResult | None:
        """:meth:`drain` for a caller whose rows are committed already (an ingest, a drop): a failure is
        logged, not raised, since the entries wait for the API's worker, the next write or `graphrag
        repair`. None when the drain itself failed."""
        try:
            result = await self.drain()
        except Exception as exc:  # noqa: BLE001 - the rows are committed; the graph catches up later
            log.warning("graph outbox not drained: %s", one_line(exc))
            return None
        if result.error and result.pending:
            log.warning("%s graph write(s) pending: %s", result.pending, result.error)
        return result

    async def drain(self, *, limit: int | None = None, wait_lock_s: float = 60.0) -> DrainResult:
        """Apply due entries in order until the queue is empty, one is not yet due, or Neo4j fails."""
        result = DrainResult()
        async with self._lock, self.postgres.connection() as session:
            box = session.outbox
            await box.set_lock_timeout(int(wait_lock_s * 1000))
            try:
                await box.drain_lock()
            except asyncpg.LockNotAvailableError:
                result.error = "another process is draining the graph outbox"
                result.pending = await self.pending_count(session)
                return result
            finally:
                await box.reset_lock_timeout()
            try:
                await self._drain_locked(session, result, limit)
            finally:
                await box.drain_unlock()
            result.pending = await self.pending_count(session)
        return result

    async def _drain_locked(self, session: UnitOfWork, result: DrainResult, limit: int | None) -> None:
        first = True
        box = session.outbox
        while limit is None or result.applied < limit:
            rows = await box.head(16)
            if not rows:
                return
            for row in rows:
                if not row.due:
                    return
                try:
                    if first:
                        await self.graph.store.ensure_schema()
                        first = False
                    await self._apply(row)
                except REFUSED as exc:
                    # Neo4j refuses this write itself (not an outage): apply the entry document by
                    # document so one bad document cannot hold back the others, and set that one aside.
                    await self._apply_split(session, row, one_line(exc))
                    result.applied += 1
                    continue
                except Exception as exc:  # noqa: BLE001 - an outage: keep the entry, retry with backoff
                    message = one_line(exc)
                    if row.attempts + 1 >= MAX_ATTEMPTS_FOR_REFUSED and isinstance(exc, DatabaseError):
                        log.error("graph outbox entry %s set aside after %s tries: %s", row.id,
                                  row.attempts + 1, message)
                        await box.give_up(row.id, message)
                        continue
                    delay = backoff(row.attempts)
                    log.warning("graph write pending (Neo4j: %s); retry in %.0fs", message, delay)
                    await box.retry_later(row.id, message, delay)
                    result.error = message
                    return
                await box.done(row.id)
                result.applied += 1

    async def _apply(self, row: OutboxEntry) -> None:
        payload = json.loads(row.payload) if isinstance(row.payload, str) else row.payload
        if row.op == "remove":
            await self.graph.remove_documents(payload["doc_ids"])
            return
        if row.op == "drop":
            await self.graph.drop_collection(payload["collection"])
            return
        await self._replace(payload, row.vectors)

    async def _apply_split(self, session: UnitOfWork, row: OutboxEntry, message: str) -> None:
        payload = json.loads(row.payload) if isinstance(row.payload, str) else row.payload
        parts = split_replace(payload) if row.op == "replace" else []
        box = session.outbox
        if len(parts) <= 1:
            log.error("graph outbox entry %s refused by Neo4j and set aside: %s", row.id, message)
            await box.give_up(row.id, message)
            return
        vectors = _vector_rows(payload, row.vectors)
        async with session.conn.transaction():
            for part in parts:
                doc_id = part["docs"][0]["id"]
                part_vectors = [vectors[e["id"]] for e in part["entities"]] if vectors else None
                try:
                    await self._replace(part, b"".join(part_vectors) if part_vectors else None)
                except REFUSED as exc:
                    log.error("graph write of document %s refused by Neo4j and set aside: %s", doc_id, one_line(exc))
                    await box.set_aside(collection=row.collection, op="replace", document_ids=[uuid.UUID(doc_id)],
                                        payload=json.dumps(part),
                                        vectors=b"".join(part_vectors) if part_vectors else None,
                                        error=one_line(exc))
            await box.done(row.id)

    async def _replace(self, payload: dict[str, Any], vectors: bytes | None) -> None:
        entities = [dict(e) for e in payload["entities"]]
        if vectors is not None and payload.get("dim"):
            matrix = np.frombuffer(vectors, dtype=np.float32).reshape(len(entities), payload["dim"])
            for e, vec in zip(entities, matrix, strict=True):
                # The property of the collection's model (entries older than it name none: "embedding").
                prop = e.pop("vector_property", None) or "embedding"
                e["vectors"] = {} if e.pop("no_embedding", False) else {prop: vec.tolist()}
        else:
            for e in entities:
                e.pop("vector_property", None)
                e["vectors"] = {}
        await self.graph.replace_documents(payload["remove_doc_ids"], payload["docs"], payload["next_pairs"],
                                           entities, payload["mentions"], payload["relations"])

    # -- reporting ---------------------------------------------------------------------------------
    async def pending_count(self, session: PgQueries | None = None) -> int:
        """Entries still to apply (on ``session``'s connection when given)."""
        states = await (session or self.postgres.q).outbox.summary()
        return sum(s.entries for s in states if s.state == "pending")

    async def summary(self) -> dict[str, Any]:
        """``{"pending": n, "failed": n, "oldest": iso|None, "last_error": str|None}`` for status."""
        states = {s.state: s for s in await self.postgres.q.outbox.summary()}
        pending, failed = states.get("pending"), states.get("failed")
        oldest = min((s.oldest for s in states.values()), default=None)
        last = (pending or failed)
        return {
            "pending": pending.entries if pending else 0,
            "failed": failed.entries if failed else 0,
            "oldest": oldest.isoformat() if oldest else None,
            "last_error": last.last_error if last else None,
        }


class OutboxWorker:
    """Drains the outbox in the background (the API runs one): promptly after :meth:`notify`, and
    otherwise every ``interval`` seconds, so a backlog left by a Neo4j outage drains by itself."""

    def __init__(self, outbox: GraphOutbox, interval: float = 2.0) -> None:
        self.outbox = outbox
        self.interval = interval
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.last: DrainResult | None = None

    def notify(self) -> None:
        self._wake.set()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="graph-outbox")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), self.interval)
            except TimeoutError:
                pass
            self._wake.clear()
            try:
                started = time.perf_counter()
                self.last = await self.outbox.drain(wait_lock_s=5.0)
                if self.last.applied:
                    log.info("graph outbox: applied %s entries in %.1fs, %s pending", self.last.applied,
                             time.perf_counter() - started, self.last.pending)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - PostgreSQL away too: try again next round
                log.warning("graph outbox drain failed: %s", one_line(exc))
