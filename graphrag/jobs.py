"""Asynchronous ingestion: a document posted with ``Prefer: respond-async`` becomes a job in PostgreSQL
that a worker inside an API process runs later, through the same code as the synchronous call.

- :class:`IngestRequest` is what ``POST /documents`` was given, validated as far as the request goes;
  :func:`ingest` runs it (the synchronous endpoint and the worker both call it).
- :class:`JobQueue` keeps jobs in the ``jobs`` table (statements in ``sql/jobs.sql``).
- :class:`JobWorker` runs in every API process that has ``GRAPHRAG_JOBS_CONCURRENCY`` > 0. Claims use
  ``FOR UPDATE SKIP LOCKED``, so the processes of ``serve --workers N`` and replicas share one queue.
  A running job's lease is renewed every third of ``GRAPHRAG_JOBS_LEASE_S``; a job whose process
  died is queued again once its lease lapses, and failed after ``GRAPHRAG_JOBS_MAX_ATTEMPTS``.

Outcomes: a result becomes ``done``; an error of the request's content (4xx: unreadable file,
empty text) becomes ``failed`` with the problem the synchronous call would have answered; a store
being away is retried with backoff until the attempts run out; anything else fails with a 500
problem (the details go to the log, not to the client).
"""

from __future__ import annotations

import builtins

import asyncio
import json
import logging
import uuid
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from neo4j.exceptions import ServiceUnavailable as Neo4jUnavailable
from neo4j.exceptions import SessionExpired

from graphrag import documents
from graphrag.config import Settings
from graphrag.errors import GraphRAGError, NotFound, ServiceUnavailable, one_line
from graphrag.runtime import Runtime
from graphrag.stores.postgres import CONNECTION_ERRORS, PostgresStore

log = logging.getLogger(__name__)

#: A store being away: the attempt is retried later rather than failed.
TRANSIENT: tuple[type[BaseException], ...] = (ServiceUnavailable, Neo4jUnavailable, SessionExpired, TimeoutError,
                                              *CONNECTION_ERRORS)
_PURGE_EVERY_S = 3600.0


@dataclass(frozen=True)
class IngestRequest:
    """One ``POST /documents``: JSON text (``kind="text"``) or a file upload (``kind="file"``), with the
    collection already resolved and checked against the caller's scope."""

    kind: str
    collection: str
    content: bytes
    filename: str | None = None
    title: str | None = None
    source: str | None = None
    metadata: dict[str, Any] | None = None
    tags: tuple[str, ...] = ()
    replace: bool = False

    @classmethod
    def text(cls, text: str, *, collection: str, title: str | None = None, source: str | None = None,
             metadata: dict[str, Any] | None = None, tags: list[str] | tuple[str, ...] = ()) -> IngestRequest:
        # surrogatepass: a lone surrogate survives the round trip, so the job reports it exactly as
        # the synchronous call does.
        return cls("text", collection, text.encode("utf-8", "surrogatepass"), title=title, source=source,
                   metadata=metadata, tags=tuple(tags))

    @classmethod
    def file(cls, filename: str, data: bytes, *, collection: str, source: str | None = None, replace: bool = False,
             metadata: dict[str, Any] | None = None, tags: list[str] | tuple[str, ...] = ()) -> IngestRequest:
        return cls("file", collection, data, filename=filename, source=source, metadata=metadata, tags=tuple(tags),
                   replace=replace)

    def options(self) -> dict[str, Any]:
        """Everything but the content and collection, as stored in ``jobs.options``."""
        return {"filename": self.filename, "title": self.title, "source": self.source, "metadata": self.metadata,
                "tags": list(self.tags), "replace": self.replace}

    @classmethod
    def of_row(cls, row: Any) -> IngestRequest:
        opts = _json(row["options"])
        return cls(row["kind"], row["collection"], bytes(row["content"] or b""), filename=opts.get("filename"),
                   title=opts.get("title"), source=opts.get("source"), metadata=opts.get("metadata"),
                   tags=tuple(opts.get("tags") or ()), replace=bool(opts.get("replace")))


async def ingest(rt: Runtime, request: IngestRequest) -> dict[str, Any]:
    """Ingest one posted document: the body ``POST /documents`` answers (``status`` created, updated
    or unchanged)."""
    if request.kind == "text":
        return await documents.add_text(
            rt, request.content.decode("utf-8", "surrogatepass"), title=request.title, source=request.source,
            collection=request.collection, metadata=request.metadata, tags=request.tags)
    return await documents.add_file(
        rt, request.filename or "upload", request.content, source=request.source, replace=request.replace,
        collection=request.collection, metadata=request.metadata, tags=request.tags)


def _json(value: Any) -> Any:
    # asyncpg hands jsonb back as text (no codec registered for it).
    return json.loads(value) if isinstance(value, str) else value


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def job_body(row: Any) -> dict[str, Any]:
    """A job as clients see it: ``error`` only when failed, ``result`` only when done."""
    body: dict[str, Any] = {
        "id": str(row["id"]),
        "status": row["status"],
        "kind": row["kind"],
        "collection": row["collection"],
        "attempts": row["attempts"],
        "created_at": _iso(row["created_at"]),
        "started_at": _iso(row["started_at"]),
        "finished_at": _iso(row["finished_at"]),
    }
    if row["status"] == "failed" and row["error"] is not None:
        body["error"] = _json(row["error"])
    if row["status"] == "done" and row["result"] is not None:
        body["result"] = _json(row["result"])
    return body


def problem_of(exc: BaseException) -> dict[str, Any]:
    """The problem details a failed job carries (the synchronous call's answer for the same error)."""
    if isinstance(exc, GraphRAGError):
        return {"type": "about:blank", "title": exc.title, "status": exc.status_code, "detail": exc.message}
    if isinstance(exc, TRANSIENT):
        return {"type": "about:blank", "title": "Service unavailable", "status": 503,
                "detail": f"a store was unavailable on every attempt ({one_line(exc)})"}
    return {"type": "about:blank", "title": "Internal error", "status": 500,
            "detail": "internal error; the server log has the details under this job id"}


@dataclass(frozen=True)
class ClaimedJob:
    id: uuid.UUID
    claim: uuid.UUID
    attempts: int
    request: IngestRequest = field(repr=False)


class JobQueue:
    """The ``jobs`` table: enqueue, look up, claim and finish jobs."""

    def __init__(self, postgres: PostgresStore) -> None:
        self.postgres = postgres

    async def enqueue(self, request: IngestRequest) -> dict[str, Any]:
        """Store a job (queued); returns its client view."""
        rows = await self.postgres.fetch("jobs", "enqueue", request.kind, request.collection,
                                         json.dumps(request.options()), request.content)
        return job_body(rows[0])

    async def get(self, job_id: str) -> dict[str, Any]:
        """A job's client view; NotFound for an unknown (or malformed) id."""
        try:
            key = uuid.UUID(str(job_id))
        except ValueError:
            raise NotFound(f"no job with id {job_id!r}") from None
        rows = await self.postgres.fetch("jobs", "get_job", key)
        if not rows:
            raise NotFound(f"no job with id {job_id!r}")
        return job_body(rows[0])

    async def list(self, *, collections: list[str] | tuple[str, ...] | None = None, status: str | None = None,
                   limit: int = 50, offset: int = 0) -> dict[str, Any]:
        """A page of jobs, newest first, of ``collections`` (None = all) and ``status`` (None = any)."""
        scope = list(collections) if collections is not None else None
        rows = await self.postgres.fetch("jobs", "list_jobs", scope, status, limit, offset)
        if rows:
            total = rows[0]["total"]
        else:
            total = (await self.postgres.fetch("jobs", "count_jobs", scope, status))[0]["total"]
        return {"jobs": [job_body(r) for r in rows], "total": total, "limit": limit, "offset": offset}

    async def claim(self, token: uuid.UUID) -> ClaimedJob | None:
        """The oldest due queued job, now running under ``token``; None when there is none."""
        rows = await self.postgres.fetch("jobs", "claim", token)
        if not rows:
            return None
        row = rows[0]
        return ClaimedJob(row["id"], token, row["attempts"], IngestRequest.of_row(row))

    async def heartbeat(self, job: ClaimedJob) -> bool:
        """Renew the lease; False when it was lost (the job was queued again meanwhile)."""
        return bool(await self.postgres.fetch("jobs", "heartbeat", job.id, job.claim))

    async def done(self, job: ClaimedJob, result: dict[str, Any]) -> bool:
        return bool(await self.postgres.fetch("jobs", "finish_done", job.id, job.claim, json.dumps(result)))

    async def failed(self, job: ClaimedJob, error: dict[str, Any]) -> bool:
        return bool(await self.postgres.fetch("jobs", "finish_failed", job.id, job.claim, json.dumps(error)))

    async def retry_later(self, job: ClaimedJob, delay_s: float, reason: str) -> bool:
        return bool(await self.postgres.fetch("jobs", "retry_later", job.id, job.claim, delay_s, reason))

    async def release(self, job: ClaimedJob) -> bool:
        """Queue an interrupted job again without counting the attempt (graceful shutdown)."""
        return bool(await self.postgres.fetch("jobs", "release", job.id, job.claim))

    async def requeue_stale(self, lease_s: float, max_attempts: int) -> "builtins.list[tuple[str, str]]":
        """Queue again (or fail, after ``max_attempts``) running jobs without a heartbeat for
        ``lease_s`` seconds; returns ``(id, new status)`` of each."""
        error = {"type": "about:blank", "title": "Service unavailable", "status": 503,
                 "detail": f"the process running this job stopped (crash or kill) on each of {max_attempts} "
                           "attempts; post the document again"}
        rows = await self.postgres.fetch("jobs", "requeue_stale", lease_s, max_attempts, json.dumps(error))
        return [(str(r["id"]), r["status"]) for r in rows]

    async def purge(self, retention_h: float) -> None:
        await self.postgres.fetch("jobs", "purge_finished", retention_h)


def backoff(attempts: int) -> float:
    """Seconds before a transient failure is retried: 2, 4, 8, ... capped at a minute."""
    return float(min(60, 2 ** max(attempts, 1)))


RunJob = Callable[[Runtime, IngestRequest], Coroutine[Any, Any, dict[str, Any]]]


class JobWorker:
    """Runs queued jobs in the background of one API process, ``GRAPHRAG_JOBS_CONCURRENCY`` at a time.

    It looks for work when :meth:`notify` is called (a job posted to this process) and otherwise
    every ``GRAPHRAG_JOBS_POLL_S``. :meth:`stop` lets running jobs finish for up to
    ``GRAPHRAG_JOBS_SHUTDOWN_GRACE_S``, then interrupts them and queues them again.
    """

    def __init__(self, rt: Runtime, settings: Settings, *, run: RunJob | None = None) -> None:
        self.rt = rt
        self.queue = JobQueue(rt.postgres)
        self.concurrency = settings.jobs_concurrency
        self.poll_s = settings.jobs_poll_s
        self.lease_s = settings.jobs_lease_s
        self.max_attempts = settings.jobs_max_attempts
        self.retention_h = settings.jobs_retention_h
        self.grace_s = settings.jobs_shutdown_grace_s
        self._run_job = run or ingest  # the ingestion itself; tests may hand in another coroutine
        self._wake = asyncio.Event()
        self._loop: asyncio.Task[None] | None = None
        self._active: dict[asyncio.Task[None], ClaimedJob] = {}
        self._last_reap = float("-inf")
        self._last_purge = float("-inf")

    @property
    def enabled(self) -> bool:
        return self.concurrency > 0

    def notify(self) -> None:
        """A job was just queued: look for it now rather than at the next poll."""
        self._wake.set()

    def start(self) -> None:
        if self.enabled and self._loop is None:
            self._loop = asyncio.create_task(self._run(), name="ingest-jobs")

    async def stop(self) -> None:
        """Stop claiming; wait for running jobs up to the grace period, then interrupt and requeue them."""
        if self._loop is not None:
            self._loop.cancel()
            try:
                await self._loop
            except asyncio.CancelledError:
                pass
            self._loop = None
        if not self._active:
            return
        tasks = set(self._active)
        log.info("waiting up to %.0fs for %d running ingestion job(s)", self.grace_s, len(tasks))
        _, pending = await asyncio.wait(tasks, timeout=self.grace_s)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            self._wake.clear()  # before looking: a job posted while we look wakes the next wait at once
            try:
                now = loop.time()
                if now - self._last_reap >= self.lease_s / 2:
                    self._last_reap = now
                    for job_id, status in await self.queue.requeue_stale(self.lease_s, self.max_attempts):
                        log.warning("ingestion job %s lost its worker: %s", job_id,
                                    "queued again" if status == "queued" else "failed (no attempts left)")
                if now - self._last_purge >= _PURGE_EVERY_S:
                    self._last_purge = now
                    await self.queue.purge(self.retention_h)
                while len(self._active) < self.concurrency:
                    job = await self.queue.claim(uuid.uuid4())
                    if job is None:
                        break
                    task = asyncio.create_task(self._execute(job), name=f"ingest-job-{job.id}")
                    self._active[task] = job
                    task.add_done_callback(self._finished)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - PostgreSQL away: try again next round
                log.warning("ingestion jobs: %s", one_line(exc))
            try:
                await asyncio.wait_for(self._wake.wait(), self.poll_s)
            except TimeoutError:
                pass

    def _finished(self, task: asyncio.Task[None]) -> None:
        self._active.pop(task, None)
        self._wake.set()  # a slot is free

    async def _execute(self, job: ClaimedJob) -> None:
        log.info("ingestion job %s: attempt %d (%s into %s)", job.id, job.attempts, job.request.kind,
                 job.request.collection)
        work = asyncio.create_task(self._run_job(self.rt, job.request))
        try:
            while True:
                done, _ = await asyncio.wait({work}, timeout=self.lease_s / 3)
                if done:
                    break
                try:
                    if not await self.queue.heartbeat(job):
                        log.warning("ingestion job %s: lease lost to another worker; stopping this attempt", job.id)
                        work.cancel()
                        await asyncio.gather(work, return_exceptions=True)
                        return
                except Exception as exc:  # noqa: BLE001 - the lease may lapse; the job then runs again
                    log.warning("ingestion job %s: heartbeat failed: %s", job.id, one_line(exc))
            await self._record(job, work)
        except asyncio.CancelledError:
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
            # Shielded: the job goes back to the queue even though this task is being cancelled.
            try:
                await asyncio.shield(self.queue.release(job))
                log.info("ingestion job %s interrupted by shutdown; queued again", job.id)
            except Exception as exc:  # noqa: BLE001 - its lease will lapse and it is queued again then
                log.warning("ingestion job %s: could not queue it again: %s", job.id, one_line(exc))
            raise

    async def _record(self, job: ClaimedJob, work: asyncio.Task[dict[str, Any]]) -> None:
        exc = work.exception()
        try:
            if exc is None:
                recorded = await self.queue.done(job, work.result())
                outcome = "done"
            elif isinstance(exc, TRANSIENT) and job.attempts < self.max_attempts:
                delay = backoff(job.attempts)
                recorded = await self.queue.retry_later(job, delay, one_line(exc))
                outcome = f"{one_line(exc)}; retrying in {delay:.0f}s"
            else:
                if not isinstance(exc, (GraphRAGError, *TRANSIENT)):
                    log.error("ingestion job %s failed", job.id, exc_info=exc)
                recorded = await self.queue.failed(job, problem_of(exc))
                outcome = f"failed: {one_line(exc)}"
            if recorded:
                log.info("ingestion job %s %s", job.id, outcome)
            else:
                log.warning("ingestion job %s %s, but its lease had been lost: another attempt decides", job.id, outcome)
        except Exception as store_exc:  # noqa: BLE001 - the lease lapses and the job runs again (idempotent)
            log.warning("ingestion job %s: outcome not recorded: %s", job.id, one_line(store_exc))
