"""Asynchronous ingestion over REST (RFC 7240): ``POST /documents`` with ``Prefer: respond-async``
answers ``202 Accepted`` with ``Location: /jobs/{id}``; ``GET /jobs/{id}`` and ``GET /jobs`` report
jobs to the callers whose API key covers their collection."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated, Any, Literal

from litestar import Controller, Request, Response, get
from litestar.di import NamedDependency
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, Parameter
from pydantic import Field

from graphrag import entities
from graphrag.api.auth import Principal
from graphrag.api.openapi import problems
from graphrag.api.schemas import IngestedDocument, _Out
from graphrag.jobs import IngestRequest, JobQueue, JobWorker
from graphrag.runtime import Runtime

Rt = NamedDependency[Runtime]
Caller = NamedDependency[Principal]

JobStatus = Literal["queued", "running", "done", "failed"]

#: The ``Prefer`` header as ``POST /documents`` documents it.
PREFER_DESCRIPTION = ("`respond-async` (RFC 7240): answer 202 Accepted at once with `Location: /jobs/{id}` and ingest in "
                      "the background; other preferences are ignored.")


class JobProblem(_Out):
    """Why a job failed: the problem details the synchronous call would have answered."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str


class Job(_Out):
    """An asynchronous ingestion job."""

    id: str
    status: JobStatus = Field(description="queued, running, done or failed")
    kind: Literal["text", "file"] = Field(description="text: a JSON document; file: an upload")
    collection: str
    attempts: int = Field(description="Attempts started so far (a lost process or a store away retries).")
    created_at: str
    started_at: str | None = Field(description="Start of the latest attempt.")
    finished_at: str | None
    result: IngestedDocument | None = Field(None, description="done: the body the synchronous call answers.")
    error: JobProblem | None = Field(None, description="failed: problem details.")


class JobPage(_Out):
    jobs: list[Job]
    total: int
    limit: int
    offset: int


def prefers_async_value(values: Iterable[str]) -> bool:
    """True when ``Prefer`` header values hold the ``respond-async`` preference (names are
    case-insensitive; several headers and comma-separated preferences with parameters allowed)."""
    for value in values:
        for item in value.split(","):
            name = item.split(";", 1)[0].split("=", 1)[0].strip().lower()
            if name == "respond-async":
                return True
    return False


def prefers_async(request: Request[Any, Any, Any]) -> bool:
    """True when the request asks for an asynchronous answer (``Prefer: respond-async``)."""
    return prefers_async_value(request.headers.getall("prefer", []))


def accepted_spec() -> ResponseSpec:
    return ResponseSpec(
        data_container=Job, generate_examples=False,
        description="Accepted (with `Prefer: respond-async`): the job, queued. `Location: /jobs/{id}` is where to "
                    "follow it; `Preference-Applied: respond-async`.",
    )


async def accept(request: Request[Any, Any, Any], rt: Runtime, ingest: IngestRequest) -> Response[Any]:
    """Queue ``ingest`` and answer 202 with where to follow it."""
    job = await JobQueue(rt.postgres).enqueue(ingest)
    worker: JobWorker | None = getattr(request.app.state, "job_worker", None)
    if worker is not None:
        worker.notify()
    Job.model_validate(job)
    return Response(job, status_code=202, headers={"Location": f"/jobs/{job['id']}",
                                                   "Preference-Applied": "respond-async"})


class JobController(Controller):
    path = "/jobs"
    tags = ["documents"]

    @get("/", summary="List ingestion jobs", responses=problems(400, 401, 403, 429, 503))
    async def list(
        self,
        rt: Rt,
        caller: Caller,
        status: Annotated[JobStatus | None, Parameter(description="Only jobs in this status.")] = None,
        collection: Annotated[str | None, Parameter(description="Only this collection.", max_length=64)] = None,
        limit: Annotated[int, Parameter(ge=1, le=200, description="Page size.")] = 50,
        offset: Annotated[int, Parameter(ge=0, le=10_000_000, description="Jobs to skip.")] = 0,
    ) -> JobPage:
        """Asynchronous ingestion jobs, newest first (only those of the API key's collections)."""
        entities.check_collection(collection)
        scope = caller.readable([collection] if collection else None)
        page = await JobQueue(rt.postgres).list(collections=scope, status=status, limit=limit, offset=offset)
        JobPage.model_validate(page)
        return page  # type: ignore[return-value]

    @get("/{job_id:str}", summary="An ingestion job: status, then result or error",
         responses=problems(401, 404, 429, 503))
    async def detail(self, rt: Rt, caller: Caller, job_id: FromPath[str]) -> Job:
        """A job posted with `Prefer: respond-async`: `queued`, `running`, `done` (with `result`, the body the
        synchronous call answers) or `failed` (with `error`, problem details)."""
        job = await JobQueue(rt.postgres).get(job_id)
        caller.check_visible(job["collection"], f"no job with id {job_id!r}")
        Job.model_validate(job)
        return job  # type: ignore[return-value]
