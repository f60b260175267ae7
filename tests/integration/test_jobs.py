"""Asynchronous ingestion (``Prefer: respond-async``, RFC 7240): jobs kept in PostgreSQL and run by the
API's own workers, over real HTTP against the real stores.

Each test starts the API servers it needs, so it knows which processes run jobs: the session's
``api`` server runs none (see conftest), and a server of one test is gone before the next starts.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from graphrag.api.auth import digest
from graphrag.api.jobs import Job, prefers_async_value
from graphrag.api.schemas import IngestedDocument
from graphrag.config import Settings
from graphrag.errors import NotFound
from graphrag.jobs import IngestRequest, JobQueue, JobWorker, ingest
from tests.conftest import ApiServer

ASYNC = {"Prefer": "respond-async"}
CURIE = "# Marie Curie\n\nMarie Curie discovered polonium and radium in Paris with Pierre Curie."
BOHR = "# Niels Bohr\n\nNiels Bohr founded the Institute for Theoretical Physics in Copenhagen."
#: How long a test waits for a job to finish on a busy shared machine (a bound, not a measurement).
PATIENCE_S = 300


@pytest.fixture
def worker_api(settings: Settings, services: object, models: object) -> Iterator[ApiServer]:
    """The API with its job worker (one job at a time, the default)."""
    with ApiServer(settings.model_copy(update={"jobs_poll_s": 0.2}), models) as server:
        yield server


def wait_for(client: httpx.Client, location: str, statuses: set[str] = frozenset({"done", "failed"})) -> dict[str, Any]:
    """The job at ``location`` once its status is one of ``statuses``."""
    deadline = time.monotonic() + PATIENCE_S
    while True:
        r = client.get(location)
        assert r.status_code == 200, r.text
        body = r.json()
        if body["status"] in statuses:
            Job.model_validate(body)
            return body
        assert time.monotonic() < deadline, f"job still {body['status']}: {body}"
        time.sleep(0.2)


def post_async(client: httpx.Client, **kwargs: Any) -> tuple[str, dict[str, Any]]:
    r = client.post("/documents", headers={**ASYNC, **kwargs.pop("headers", {})}, **kwargs)
    assert r.status_code == 202, r.text
    body = r.json()
    assert r.headers["location"] == f"/jobs/{body['id']}"
    assert r.headers["preference-applied"] == "respond-async"
    assert body["status"] == "queued" and body["attempts"] == 0 and body["started_at"] is None
    assert "result" not in body and "error" not in body
    return r.headers["location"], body


def assert_problem(r: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body = r.json()
    for word in words:
        assert word.lower() in body["detail"].lower(), body["detail"]
    return body


# --- pure logic ------------------------------------------------------------------------------------
@pytest.mark.parametrize(("values", "expected"), [
    (["respond-async"], True),
    (["RESPOND-ASYNC"], True),
    (["return=minimal, respond-async; x=1"], True),
    (["wait=10", "respond-async"], True),
    (["return=minimal"], False),
    (["respond-asynchronously"], False),
    ([], False),
])
def test_prefer_header_parsing(values: list[str], expected: bool) -> None:
    assert prefers_async_value(values) is expected


def test_ingest_request_round_trips_through_a_job_row() -> None:
    req = IngestRequest.text("a \ud800 b", collection="c", title="T", source="s", metadata={"k": 1}, tags=["x"])
    row = {"kind": req.kind, "collection": req.collection, "options": json.dumps(req.options()), "content": req.content}
    assert IngestRequest.of_row(row) == req
    upload = IngestRequest.file("f.pdf", b"%PDF", collection="c", replace=True)
    row = {"kind": "file", "collection": "c", "options": json.dumps(upload.options()), "content": upload.content}
    assert IngestRequest.of_row(row) == upload


# --- real HTTP, real stores ----------------------------------------------------------------------
def test_async_document_goes_202_then_done_with_the_synchronous_result(worker_api: ApiServer,
                                                                       collection: str) -> None:
    with httpx.Client(base_url=worker_api.url, timeout=120) as c:
        location, accepted = post_async(c, json={"text": CURIE, "source": "curie.md", "collection": collection,
                                                 "metadata": {"field": "physics"}, "tags": ["science"]})
        assert accepted["collection"] == collection and accepted["kind"] == "text"
        job = wait_for(c, location)
        assert job["status"] == "done", job
        result = job["result"]
        IngestedDocument.model_validate(result)
        assert result["status"] == "created" and result["source"] == "curie.md" and result["chunks"] >= 1
        assert job["attempts"] == 1 and job["started_at"] and job["finished_at"] and "error" not in job

        # The synchronous call for the same document finds what the job stored, in the same shape.
        again = c.post("/documents", json={"text": CURIE, "source": "curie.md", "collection": collection,
                                           "metadata": {"field": "physics"}, "tags": ["science"]})
        assert again.status_code == 200, again.text
        sync = again.json()
        assert sync["status"] == "unchanged" and list(sync) == list(result)  # same keys, same order
        assert {k: sync[k] for k in ("id", "collection", "source", "title", "chunks")} == \
               {k: result[k] for k in ("id", "collection", "source", "title", "chunks")}

        doc = c.get(f"/documents/{result['id']}").json()
        assert doc["metadata"]["field"] == "physics" and doc["tags"] == ["science"]
        hits = c.post("/search/keyword", json={"query": "polonium radium", "collections": [collection]}).json()
        assert hits["results"] and hits["results"][0]["document_id"] == result["id"]

        listed = c.get("/jobs", params={"collection": collection, "status": "done"}).json()
        assert [j["id"] for j in listed["jobs"]] == [accepted["id"]] and listed["total"] == 1
        assert c.get("/jobs", params={"collection": collection, "status": "queued"}).json()["jobs"] == []


def test_async_file_upload_and_prefer_variants(worker_api: ApiServer, collection: str) -> None:
    with httpx.Client(base_url=worker_api.url, timeout=120) as c:
        location, accepted = post_async(
            c, headers={"Prefer": "return=minimal, RESPOND-ASYNC; note=1"},
            files={"file": ("bohr.md", io.BytesIO(BOHR.encode()), "text/markdown")},
            data={"collection": collection, "tags": "physics", "metadata": '{"year": 1921}'})
        assert accepted["kind"] == "file"
        job = wait_for(c, location)
        assert job["status"] == "done", job
        assert job["result"]["source"] == "bohr.md" and job["result"]["status"] == "created"
        doc = c.get(f"/documents/{job['result']['id']}").json()
        assert doc["metadata"]["year"] == 1921 and doc["metadata"]["file_sha256"] and doc["tags"] == ["physics"]

        # Without respond-async the call is synchronous, as before.
        sync = c.post("/documents", headers={"Prefer": "return=minimal"},
                      json={"text": CURIE, "source": "curie.md", "collection": collection})
        assert sync.status_code == 201 and "preference-applied" not in sync.headers
        assert sync.json()["status"] == "created"


def test_failed_jobs_carry_the_problem_and_write_nothing(worker_api: ApiServer, collection: str) -> None:
    with httpx.Client(base_url=worker_api.url, timeout=120) as c:
        cases = [(("tool.exe", b"MZ\x90\x00", "application/octet-stream"), 415, "unsupported"),
                 (("broken.pdf", b"%PDF-1.7 truncated", "application/pdf"), 422, "pdf"),
                 (("empty.txt", b"", "text/plain"), 422, "empty")]
        for upload, status, word in cases:
            location, _ = post_async(c, files={"file": upload}, data={"collection": collection})
            job = wait_for(c, location)
            assert job["status"] == "failed", job
            assert job["error"]["status"] == status and word in job["error"]["detail"].lower(), job["error"]
            assert job["error"]["title"] and "result" not in job
            assert job["attempts"] == 1, "an error of the content is not retried"
        location, _ = post_async(c, json={"text": "   ", "collection": collection})
        assert wait_for(c, location)["error"]["status"] == 400
        # Nothing of any of them in either store.
        assert c.get("/documents", params={"collection": collection}).json()["total"] == 0
        assert collection not in c.get("/stats").json()["collections"]
        failed = c.get("/jobs", params={"collection": collection, "status": "failed"}).json()
        assert failed["total"] == len(cases) + 1


def test_bad_requests_are_answered_at_once_and_queue_nothing(worker_api: ApiServer, collection: str) -> None:
    with httpx.Client(base_url=worker_api.url, timeout=120) as c:
        assert_problem(c.post("/documents", headers={**ASYNC, "content-type": "application/json"},
                              content=b'{"text": '), 400, "json")
        assert_problem(c.post("/documents", headers=ASYNC, json={"text": "x", "collection": collection,
                                                                 "surprise": 1}), 400, "surprise")
        assert_problem(c.post("/documents", headers={**ASYNC, "content-type": "text/plain"}, content=b"hi"),
                       415, "content type")
        assert_problem(c.post("/documents", headers=ASYNC, data={"collection": collection}), 415)
        assert_problem(c.post("/documents", headers=ASYNC, json={"text": "x", "collection": "bad name!"}), 400)
        assert c.get("/jobs", params={"collection": collection}).json()["total"] == 0


def test_unknown_job_is_404(worker_api: ApiServer) -> None:
    with httpx.Client(base_url=worker_api.url, timeout=120) as c:
        assert_problem(c.get(f"/jobs/{uuid.uuid4()}"), 404, "no job")
        assert_problem(c.get("/jobs/not-a-uuid"), 404, "no job")
        assert c.get("/jobs", params={"status": "sleeping"}).status_code == 400


async def test_queued_job_waits_for_a_worker_and_a_lost_one_is_taken_again(
        settings: Settings, services: object, models: object, runtime: Any, collection: str) -> None:
    """A job posted where no process runs jobs stays queued until one starts; a job left running by
    a process that died (its lease lapsed) is queued again and finished by the next process."""
    idle = settings.model_copy(update={"jobs_concurrency": 0})
    with ApiServer(idle, models) as server, httpx.Client(base_url=server.url, timeout=120) as c:
        waiting, first = post_async(c, json={"text": CURIE, "source": "curie.md", "collection": collection})
        lost, second = post_async(c, json={"text": BOHR, "source": "bohr.md", "collection": collection})
        assert c.get(waiting).json()["status"] == "queued"
        queued = c.get("/jobs", params={"collection": collection, "status": "queued"}).json()
        assert {j["id"] for j in queued["jobs"]} == {first["id"], second["id"]}
    # The second job as a process that crashed mid-run leaves it: running, under a lease nobody renews.
    async with runtime.postgres.pool.acquire() as conn:
        await conn.execute("UPDATE jobs SET status = 'running', attempts = 1, claim = gen_random_uuid(), "
                           "started_at = now() - interval '1 hour', heartbeat_at = now() - interval '1 hour' "
                           "WHERE id = $1", uuid.UUID(second["id"]))
    restarted = settings.model_copy(update={"jobs_lease_s": 5.0, "jobs_poll_s": 0.2})
    with ApiServer(restarted, models) as server, httpx.Client(base_url=server.url, timeout=120) as c:
        done = wait_for(c, waiting)
        assert done["status"] == "done" and done["attempts"] == 1, done
        again = wait_for(c, lost)
        assert again["status"] == "done" and again["attempts"] == 2, again
        hits = c.post("/search/keyword", json={"query": "Copenhagen institute", "collections": [collection]}).json()
        assert hits["results"][0]["document_id"] == again["result"]["id"]


async def test_a_job_lost_too_often_fails(runtime: Any, collection: str) -> None:
    queue = JobQueue(runtime.postgres)
    jobs = [await queue.enqueue(IngestRequest.text(CURIE, collection=collection)) for _ in range(2)]
    async with runtime.postgres.pool.acquire() as conn:
        for job, attempts in zip(jobs, (3, 1), strict=True):
            await conn.execute("UPDATE jobs SET status = 'running', attempts = $2, claim = gen_random_uuid(), "
                               "heartbeat_at = now() - interval '1 hour' WHERE id = $1", uuid.UUID(job["id"]), attempts)
    changed = dict(await queue.requeue_stale(lease_s=60, max_attempts=3))
    assert changed[jobs[0]["id"]] == "failed" and changed[jobs[1]["id"]] == "queued"
    gave_up = await queue.get(jobs[0]["id"])
    assert gave_up["error"]["status"] == 503 and "3 attempts" in gave_up["error"]["detail"] and gave_up["finished_at"]
    requeued = await queue.get(jobs[1]["id"])
    assert requeued["status"] == "queued" and requeued["attempts"] == 1
    async with runtime.postgres.pool.acquire() as conn:
        assert await conn.fetchval("SELECT content FROM jobs WHERE id = $1", uuid.UUID(jobs[0]["id"])) is None
        # The queued one would otherwise be run by the next test's server.
        await conn.execute("DELETE FROM jobs WHERE id = $1", uuid.UUID(jobs[1]["id"]))
        # Finished jobs go after the retention period.
        await conn.execute("UPDATE jobs SET finished_at = now() - interval '2 hours' WHERE id = $1",
                           uuid.UUID(jobs[0]["id"]))
    await queue.purge(retention_h=3)
    assert (await queue.get(jobs[0]["id"]))["status"] == "failed"
    await queue.purge(retention_h=1)
    with pytest.raises(NotFound):
        await queue.get(jobs[0]["id"])


async def test_shutdown_lets_a_running_job_finish_or_queues_it_again(runtime: Any, settings: Settings,
                                                                     collection: str) -> None:
    """Graceful shutdown: within the grace period a running job finishes; past it, the job is
    interrupted and queued again without the attempt counting."""
    queue = JobQueue(runtime.postgres)
    mine = await queue.enqueue(IngestRequest.text(BOHR, source="bohr.md", collection=collection))
    started = asyncio.Event()
    gate = asyncio.Event()
    interrupted: list[str] = []

    async def run(rt: Any, request: IngestRequest) -> dict[str, Any]:
        # Every job this worker claims waits (other tests' queued jobs too: they are only released).
        if request.collection == collection:
            started.set()
        try:
            await gate.wait()
        except asyncio.CancelledError:
            interrupted.append(request.collection)
            raise
        return await ingest(rt, request)

    cut = settings.model_copy(update={"jobs_concurrency": 64, "jobs_shutdown_grace_s": 0.0, "jobs_poll_s": 0.2})
    worker = JobWorker(runtime, cut, run=run)
    worker.start()
    await asyncio.wait_for(started.wait(), PATIENCE_S)
    assert (await queue.get(mine["id"]))["status"] == "running"
    await worker.stop()
    assert collection in interrupted
    back = await queue.get(mine["id"])
    assert back["status"] == "queued" and back["attempts"] == 0, back

    # The same job, now given time to finish while the worker stops.
    started.clear()
    patient = cut.model_copy(update={"jobs_shutdown_grace_s": float(PATIENCE_S)})
    worker = JobWorker(runtime, patient, run=run)
    worker.start()
    await asyncio.wait_for(started.wait(), PATIENCE_S)
    stopping = asyncio.create_task(worker.stop())
    await asyncio.sleep(0)
    gate.set()
    await stopping
    finished = await queue.get(mine["id"])
    assert finished["status"] == "done" and finished["attempts"] == 1, finished
    assert finished["result"]["source"] == "bohr.md" and finished["result"]["status"] == "created"


def test_scoped_keys_see_only_their_collections_jobs(settings: Settings, services: object, models: object) -> None:
    a, b = f"jobs_a_{uuid.uuid4().hex[:8]}", f"jobs_b_{uuid.uuid4().hex[:8]}"
    keys = {"admin": "jobs-admin-1", "writer_a": "jobs-writer-a-2", "reader_a": "jobs-reader-a-3",
            "reader_b": "jobs-reader-b-4"}
    entries = [
        {"name": "admin", "key": keys["admin"]},
        {"name": "writer-a", "sha256": digest(keys["writer_a"]).hex(), "collections": [a], "access": "read-write"},
        {"name": "reader-a", "sha256": digest(keys["reader_a"]).hex(), "collections": [a], "access": "read"},
        {"name": "reader-b", "sha256": digest(keys["reader_b"]).hex(), "collections": [b], "access": "read"},
    ]
    locked = settings.model_copy(update={"api_keys": SecretStr(json.dumps(entries)), "jobs_poll_s": 0.2})

    def client(server: ApiServer, who: str) -> httpx.Client:
        return httpx.Client(base_url=server.url, timeout=120, headers={"X-API-Key": keys[who]})

    with ApiServer(locked, models) as server:
        with client(server, "writer_a") as c:
            location, job = post_async(c, json={"text": CURIE, "collection": a})
            assert_problem(c.post("/documents", headers=ASYNC, json={"text": CURIE, "collection": b}), 403, b)
            assert wait_for(c, location)["status"] == "done"
        with client(server, "reader_a") as c:
            assert c.get(location).json()["id"] == job["id"]
            assert [j["id"] for j in c.get("/jobs").json()["jobs"]] == [job["id"]]
            assert_problem(c.post("/documents", headers=ASYNC, json={"text": CURIE, "collection": a}), 403,
                           "read-only")
        with client(server, "reader_b") as c:
            assert_problem(c.get(location), 404, "no job")  # exactly like an unknown id
            assert c.get("/jobs").json() == {"jobs": [], "total": 0, "limit": 50, "offset": 0}
            assert_problem(c.get("/jobs", params={"collection": a}), 403, a)
        with client(server, "admin") as c:
            assert job["id"] in {j["id"] for j in c.get("/jobs", params={"collection": a}).json()["jobs"]}
        assert httpx.get(f"{server.url}{location}").status_code == 401
