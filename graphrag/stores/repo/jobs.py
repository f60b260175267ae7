"""Typed statements of ``sql/jobs.sql`` (the asynchronous ingestion queue)."""

from __future__ import annotations

import uuid
import asyncpg

from graphrag.stores.repo.base import Area


class JobsQueries(Area):
    """The ``jobs`` table. Rows are the client view of ``job_columns`` (``claim`` adds the request)."""

    async def enqueue(self, *, kind: str, collection: str, options: str, content: bytes) -> asyncpg.Record:
        """Insert a queued job (``options`` is JSON text); its client-view row."""
        row = await self._sql.fetchrow("jobs", "enqueue", kind=kind, collection=collection, options=options,
                                       content=content)
        assert row is not None
        return row

    async def get(self, job_id: uuid.UUID) -> asyncpg.Record | None:
        return await self._sql.fetchrow("jobs", "get_job", id=job_id)

    async def page(self, *, collections: list[str] | None, status: str | None, limit: int,
                   offset: int) -> list[asyncpg.Record]:
        """One page, newest first; each row carries the ``total`` of matching jobs."""
        return await self._sql.fetch("jobs", "list_jobs", collections=collections, status=status, limit=limit,
                                     offset=offset)

    async def count(self, *, collections: list[str] | None, status: str | None) -> int:
        return int(await self._sql.fetchval("jobs", "count_jobs", collections=collections, status=status))

    async def claim(self, token: uuid.UUID) -> asyncpg.Record | None:
        """The oldest due queued job, now running under ``token`` (id, kind, collection, options, content,
        attempts)."""
        return await self._sql.fetchrow("jobs", "claim", claim=token)

    async def heartbeat(self, job_id: uuid.UUID, claim: uuid.UUID) -> bool:
        return await self._sql.fetchrow("jobs", "heartbeat", id=job_id, claim=claim) is not None

    async def finish_done(self, job_id: uuid.UUID, claim: uuid.UUID, result: str) -> bool:
        return await self._sql.fetchrow("jobs", "finish_done", id=job_id, claim=claim, result=result) is not None

    async def finish_failed(self, job_id: uuid.UUID, claim: uuid.UUID, error: str) -> bool:
        return await self._sql.fetchrow("jobs", "finish_failed", id=job_id, claim=claim, error=error) is not None

    async def retry_later(self, job_id: uuid.UUID, claim: uuid.UUID, delay_s: float, reason: str) -> bool:
        return await self._sql.fetchrow("jobs", "retry_later", id=job_id, claim=claim, delay_s=delay_s,
                                        reason=reason) is not None

    async def release(self, job_id: uuid.UUID, claim: uuid.UUID) -> bool:
        return await self._sql.fetchrow("jobs", "release", id=job_id, claim=claim) is not None

    async def requeue_stale(self, lease_s: float, max_attempts: int, error: str) -> list[tuple[uuid.UUID, str]]:
        """``(id, new status)`` of each running job whose lease lapsed."""
        rows = await self._sql.fetch("jobs", "requeue_stale", lease_s=lease_s, max_attempts=max_attempts,
                                     error=error)
        return [(r["id"], r["status"]) for r in rows]

    async def purge_finished(self, retention_h: float) -> None:
        await self._sql.execute("jobs", "purge_finished", retention_h=retention_h)
