"""REST side of portable collections: ``GET /collections/{name}/export`` streams a collection's archive,
``POST /collections/import`` takes one as a streamed upload (see :mod:`graphrag.portable`).

Scopes: an export is a read, so any key that may read the collection may export it (another key
gets the 404 of an unknown collection). An import creates a collection, records its embedding model
(whose spec an archive brings) and may replace documents, so it needs a key with full, unscoped
read-write access.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, get, post
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIMediaType, Operation, RequestBody, Schema
from litestar.openapi.spec.enums import OpenAPIType
from litestar.params import Parameter
from litestar.response import Stream
from pydantic import BaseModel, Field

from graphrag import portable
from graphrag.api.auth import Principal
from graphrag.api.openapi import problems
from graphrag.api.routes import Caller, Rt, checked
from graphrag.errors import Forbidden, UnsupportedMedia

ARCHIVE_MEDIA = "application/gzip"
COLLECTION_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"  # models.is_collection_name
#: What an upload may be labelled as (tar, gzip'ed tar, or plain bytes); the content decides.
IMPORT_MEDIA = frozenset({"application/gzip", "application/x-gzip", "application/x-tar", "application/x-gtar",
                          "application/octet-stream"})


class ImportTotals(BaseModel):
    documents: int
    chunks: int
    entities: int | None = None
    relations: int | None = None


class ImportResult(BaseModel):
    """What ``POST /collections/import`` wrote (the archive's rows) and what the collection holds now."""

    collection: str
    source_collection: str
    embedding_model: str
    dim: int
    text_config: str
    format_version: int
    extended: str | None = Field(None, description="the archive's extended-search mode (extractive, llm) or null")
    documents: int
    chunks: int
    representations: int = Field(0, description="extended-search titles, summaries and propositions written")
    entities: int
    mentions: int
    relations: int
    replaced: int
    parts: int
    created: bool
    graph_pending: int
    verify_seconds: float
    seconds: float
    totals: ImportTotals


@dataclass
class ImportOperation(Operation):
    """``POST /collections/import`` takes the archive's bytes as the request body."""

    def __post_init__(self) -> None:
        binary = Schema(type=OpenAPIType.STRING, format="binary")  # type: ignore[arg-type]
        self.request_body = RequestBody(
            required=True,
            description="An archive written by `graphrag export` or `GET /collections/{name}/export` "
                        "(a tar, gzip'ed or not).",
            content={media: OpenAPIMediaType(schema=binary) for media in sorted(IMPORT_MEDIA)},
        )


def _archive_response() -> ResponseSpec:
    return ResponseSpec(data_container=bytes, media_type=ARCHIVE_MEDIA, generate_examples=False,
                        description="The collection's archive (a gzip'ed tar), streamed as it is written")


def _problems(*statuses: int) -> dict[int, ResponseSpec]:
    specs = problems(*statuses)
    for status, text in ((403, "The API key may not import collections"),
                         (409, "The stores disagree about the collection: run `graphrag repair` first")):
        if status in specs:
            specs[status].description = text
    return specs


def _check_import_key(caller: Principal) -> None:
    if caller.collections is not None or not caller.write:
        raise Forbidden(f"API key {caller.name!r} may not import collections: that needs a read-write key "
                        "without a collection scope")


class CollectionTransferController(Controller):
    path = "/collections"
    tags = ["collections"]

    @get("/{name:str}/export", summary="Export a collection as one archive",
         responses={200: _archive_response(), **_problems(400, 401, 404, 409, 429, 503)})
    async def export(
        self,
        rt: Rt,
        caller: Caller,
        name: Annotated[str, Parameter(description="The collection.", pattern=COLLECTION_PATTERN, max_length=64)],
    ) -> Stream:
        """The collection's documents, chunks, vectors (with their model), entities, mentions and relations
        as one archive, streamed while it is read. `POST /collections/import` (or `graphrag import`)
        restores it anywhere. 409 when the stores disagree about the collection (`graphrag repair` first)."""
        portable.check_name(name)
        caller.check_visible(name, f"unknown collection {name!r}")
        export = await portable.prepare_export(rt, name)
        filename = f"{name}.graphrag.tar.gz"
        return Stream(export.stream(), media_type=ARCHIVE_MEDIA,
                      headers={"Content-Disposition": f'attachment; filename="{filename}"'})

    @post("/import", status_code=200, summary="Import a collection archive", operation_class=ImportOperation,
          request_max_body_size=None,  # checked against GRAPHRAG_MAX_IMPORT_MB while the upload is staged
          responses=_problems(400, 401, 403, 413, 415, 429, 503))
    async def import_archive(
        self,
        request: Request[Any, Any, Any],
        rt: Rt,
        caller: Caller,
        collection: Annotated[str | None, Parameter(
            description="Import under this name (default: the archive's own collection).",
            pattern=COLLECTION_PATTERN, max_length=64,
        )] = None,
    ) -> ImportResult:
        """Verify an archive (format version, every member's checksum, every row) and restore it into both
        stores. A damaged, truncated or foreign archive is a 400 and nothing is written. Importing the same
        archive again gives the same state. Needs an unscoped read-write API key."""
        _check_import_key(caller)
        if collection is not None:
            portable.check_name(collection)
        media = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if media and media not in IMPORT_MEDIA:
            raise UnsupportedMedia(f"content type {media!r} is not accepted: send the archive as "
                                   f"{ARCHIVE_MEDIA} or application/octet-stream")
        limit = int(rt.settings.max_import_mb * (1 << 20))
        staged = await portable.stage(request.stream(), limit_bytes=limit)
        try:
            report = await portable.import_archive(rt, staged, collection=collection)
        finally:
            await asyncio.to_thread(staged.unlink, missing_ok=True)
        return checked(ImportResult, report.to_dict())
