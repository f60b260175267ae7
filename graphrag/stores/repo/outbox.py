"""Typed statements of ``sql/outbox.sql`` (the graph outbox, see graphrag/ingest/outbox.py)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graphrag.stores.repo.base import Area


@dataclass(frozen=True)
class OutboxEntry:
    """A pending ``graph_outbox`` row, as the drainer reads it."""

    id: int
    collection: str
    op: str
    document_ids: list[uuid.UUID]
    payload: Any  # JSON text or already decoded
    vectors: bytes | None
    attempts: int
    due: bool


@dataclass(frozen=True)
class OutboxState:
    """The entries of one state (``pending`` or ``failed``)."""

    state: str
    entries: int
    oldest: datetime
    max_attempts: int
    last_error: str | None


class OutboxQueries(Area):
    """The ``graph_outbox`` table and its drain lock."""

    async def enqueue(self, *, collection: str, op: str, document_ids: list[uuid.UUID], payload: str,
                      vectors: bytes | None) -> int:
        """Record an entry (``payload`` is JSON text); its id."""
        return int(await self._sql.fetchval("outbox", "enqueue", collection=collection, op=op,
                                            document_ids=document_ids, payload=payload, vectors=vectors))

    async def set_aside(self, *, collection: str, op: str, document_ids: list[uuid.UUID], payload: str,
                        vectors: bytes | None, error: str) -> None:
        """Record a failed entry (one document's part of an entry Neo4j refused)."""
        await self._sql.execute("outbox", "set_aside", collection=collection, op=op, document_ids=document_ids,
                                payload=payload, vectors=vectors, error=error)

    async def head(self, limit: int) -> list[OutboxEntry]:
        """The oldest pending entries, in order."""
        rows = await self._sql.fetch("outbox", "head", limit=limit)
        return [OutboxEntry(r["id"], r["collection"], r["op"], list(r["document_ids"]), r["payload"], r["vectors"],
                            r["attempts"], bool(r["due"])) for r in rows]

    async def done(self, entry_id: int) -> None:
        await self._sql.execute("outbox", "done", id=entry_id)

    async def retry_later(self, entry_id: int, error: str, delay_s: float) -> None:
        await self._sql.execute("outbox", "retry_later", id=entry_id, error=error, delay_s=delay_s)

    async def give_up(self, entry_id: int, error: str) -> None:
        await self._sql.execute("outbox", "give_up", id=entry_id, error=error)

    async def summary(self) -> list[OutboxState]:
        rows = await self._sql.fetch("outbox", "summary")
        return [OutboxState(r["state"], r["entries"], r["oldest"], r["max_attempts"], r["last_error"]) for r in rows]

    async def pending_documents(self, collection: str) -> set[str]:
        """Ids of the collection's documents with an entry (pending or failed)."""
        return {str(r["id"]) for r in await self._sql.fetch("outbox", "pending_documents", collection=collection)}

    async def failed_documents(self, collection: str) -> set[str]:
        return {str(r["id"]) for r in await self._sql.fetch("outbox", "failed_documents", collection=collection)}

    async def clear_failed(self, collection: str | None) -> None:
        """Delete the failed entries of a collection (all collections when None)."""
        await self._sql.execute("outbox", "clear_failed", collection=collection)

    # The drain lock is a session lock: these run on one connection (PostgresStore.connection()).
    async def set_lock_timeout(self, milliseconds: int) -> None:
        await self._sql.fetchval("outbox", "set_lock_timeout", timeout=f"{int(milliseconds)}ms")

    async def reset_lock_timeout(self) -> None:
        await self._sql.execute("outbox", "reset_lock_timeout")

    async def drain_lock(self) -> None:
        await self._sql.execute("outbox", "drain_lock")

    async def drain_unlock(self) -> None:
        await self._sql.execute("outbox", "drain_unlock")
