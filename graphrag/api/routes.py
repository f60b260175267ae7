"""Thin controllers: validate the request, call one shared operation, shape the response."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Annotated, Any

from litestar import Controller, Request, Response, delete, get, post
from litestar.datastructures import State, UploadFile
from litestar.exceptions import ValidationException
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIResponse, OpenAPIType, Operation, Schema
from litestar.di import NamedDependency
from litestar.params import FromPath, HeaderParameter, JSONBody, Parameter
from pydantic import ValidationError

from graphrag import __version__, documents, entities, health
from graphrag.api import jobs as async_jobs
from graphrag.api.openapi import DocumentUploadOperation, problems
from graphrag.api.schemas import (
    Deleted,
    DocumentDetail,
    DocumentIn,
    DocumentPage,
    EntityDetail,
    EntitySearch,
    Health,
    IngestedDocument,
    ModeSearchRequest,
    Readiness,
    SearchRequest,
    SearchResponse,
    Stats,
)
from graphrag.api.auth import OPEN, Principal
from graphrag.errors import InvalidInput, UnsupportedMedia
from graphrag.jobs import IngestRequest, ingest
from graphrag.runtime import Runtime
from graphrag.search import formats

Rt = NamedDependency[Runtime]  # the "rt" dependency: the process-wide Runtime
Caller = NamedDependency[Principal]  # the "caller" dependency: who sent the request (API key scope)


def checked(model: Any, data: Any) -> Any:
    """``data`` after checking it against its response model (the contract); returned as is so that
    optional keys a result does not have stay absent rather than ``null``."""
    model.model_validate(data)
    return data


def runtime(state: State) -> Runtime:
    """The process-wide runtime opened by the app's lifespan."""
    return state.runtime


def principal(request: Request[Any, Any, Any]) -> Principal:
    """The caller the middleware identified (everyone, when no API keys are configured)."""
    return request.scope.get("state", {}).get("principal", OPEN)


async def _search(rt: Rt, caller: Principal, body: SearchRequest, mode: str) -> SearchResponse:
    router = await rt.router()
    # The key's scope becomes the search's collections, which every leg (graph included) enforces.
    collections = caller.readable(body.collections)
    with rt.postgres.one_request():  # the existence check and the search share the collections' row
        # A collection named by the caller must exist (after the scope check: no existence leak).
        await rt.postgres.require_collections(body.collections)
        result = await router.search(
            body.query, mode=mode, limit=body.limit, collections=collections, filters=body.filters,
            threshold=body.threshold, explain=body.explain, token_budget=body.token_budget, mmr_lambda=body.mmr,
            collapse=body.collapse, metadata_only=body.metadata_only, rerank=body.rerank, fusion=body.fusion,
            graph_leg=body.graph_leg, highlight=body.highlight, full_document_threshold=body.full_document_threshold,
            token_limit=body.token_limit, extended=body.extended, expand=body.expand, synonyms=body.synonyms,
        )
    if body.format != "json":  # text or voice: for agents and speech, as text/plain
        text = formats.render(result, body.format)
        return Response(text, media_type="text/plain")  # type: ignore[return-value]
    # Not checked against SearchResponse here (a tenth of a search's API time): SearchResult.to_dict is
    # the contract's one producer, and the REST tests validate its output against the model.
    return result.to_dict(timings=body.explain)  # type: ignore[return-value]


def _unchanged() -> ResponseSpec:
    return ResponseSpec(data_container=IngestedDocument, description="Unchanged: the same content was already stored",
                        generate_examples=False)


def _created() -> ResponseSpec:
    return ResponseSpec(data_container=IngestedDocument, description="Created or updated (200: unchanged)",
                        generate_examples=False)


_SEARCH_ERRORS = problems(400, 401, 403, 404, 415, 429, 503)


async def json_only(request: Request[Any, Any, Any]) -> None:
    """Before a JSON body is parsed: another content type is a 415, an empty body a 400 that says so."""
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media and media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        raise UnsupportedMedia(f"content type {media!r} is not accepted: send application/json")
    if not (await request.body()).strip():
        raise InvalidInput('the request body is empty: send a JSON object, e.g. {"query": "..."}')



@dataclass
class SearchOperation(Operation):
    """Declares the ``text`` and ``voice`` formats' plain-text answer beside the JSON search response."""

    def __post_init__(self) -> None:
        ok = (self.responses or {}).get("200")
        if isinstance(ok, OpenAPIResponse) and ok.content is not None:
            ok.content["text/plain"] = OpenAPIMediaType(schema=Schema(
                type=OpenAPIType.STRING,
                description='With "format": "text" (a numbered citation list) or "voice" (short sentences to '
                            "read out, without URLs or markup)."))


class SearchController(Controller):
    path = "/search"
    tags = ["search"]
    before_request = json_only  # type: ignore[assignment]  # a plain function: Litestar passes the request

    @post("/", status_code=200, summary="Search (auto: all legs fused)", responses=_SEARCH_ERRORS, operation_class=SearchOperation)
    async def search(self, data: JSONBody[SearchRequest], rt: Rt, caller: Caller) -> SearchResponse:
        """Hybrid search: vector, keyword and graph legs run concurrently and are fused into one ranked list."""
        return await _search(rt, caller, data, data.mode)

    @post("/vector", status_code=200, summary="Vector search", responses=_SEARCH_ERRORS, operation_class=SearchOperation)
    async def vector(self, data: JSONBody[ModeSearchRequest], rt: Rt, caller: Caller) -> SearchResponse:
        """Cosine similarity over chunk embeddings (pgvector HNSW)."""
        return await _search(rt, caller, data, "vector")

    @post("/keyword", status_code=200, summary="Keyword search (BM25)", responses=_SEARCH_ERRORS, operation_class=SearchOperation)
    async def keyword(self, data: JSONBody[ModeSearchRequest], rt: Rt, caller: Caller) -> SearchResponse:
        """BM25-scored full-text search over chunks."""
        return await _search(rt, caller, data, "keyword")

    @post("/hybrid", status_code=200, summary="Hybrid search (vector + keyword, fused)", responses=_SEARCH_ERRORS, operation_class=SearchOperation)
    async def hybrid(self, data: JSONBody[ModeSearchRequest], rt: Rt, caller: Caller) -> SearchResponse:
        """Vector and keyword legs fused (normalised scores by default; ``fusion: "rrf"`` for reciprocal ranks)."""
        return await _search(rt, caller, data, "hybrid")

    @post("/graph", status_code=200, summary="Graph search", responses=_SEARCH_ERRORS, operation_class=SearchOperation)
    async def graph(self, data: JSONBody[ModeSearchRequest], rt: Rt, caller: Caller) -> SearchResponse:
        """Entities linked from the query, expanded over the knowledge graph; chunks scored by personalised PageRank."""
        return await _search(rt, caller, data, "graph")


class DocumentController(Controller):
    path = "/documents"
    tags = ["documents"]

    @post("/", summary="Add a document (JSON text or file upload)", operation_class=DocumentUploadOperation,
          responses={201: _created(), 200: _unchanged(), 202: async_jobs.accepted_spec(),
                     **problems(400, 401, 403, 413, 415, 422, 429, 503)})
    async def create(
        self,
        request: Request[Any, Any, Any],
        rt: Rt,
        caller: Caller,
        replace: Annotated[bool | None, Parameter(
            description="File uploads: replace the document stored under the file name even when it came from "
                        "other bytes (default: such an upload is stored beside it, as `<name>#<hash>`).",
        )] = None,
        # Documented here; read by prefers_async, which also sees repeated Prefer headers.
        prefer: Annotated[str | None, HeaderParameter(name="Prefer", description=async_jobs.PREFER_DESCRIPTION)] = None,
    ) -> Response[IngestedDocument]:
        """Ingest a document. 201 when created or updated, 200 when the same content was already there.

        A JSON document's identity is its ``source`` (default: a hash of the text). A file upload's is
        ``source`` when given, else its file name, unless a document of other bytes already has that
        name: then the upload is stored beside it as ``<name>#<first 12 hex digits of its SHA-256>``
        (``replace=true`` replaces it instead). Uploading the same bytes again is a no-op.

        With ``Prefer: respond-async`` the request is checked (content type, body, scope) and answered
        202 with ``Location: /jobs/{id}``; the job's ``result`` is then this body.
        """
        content_type = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type == "application/json":
            if replace:
                raise InvalidInput("replace applies to file uploads; a JSON document is replaced by posting "
                                   "its source again")
            posted = await _from_json(request, rt, caller)
        elif content_type == "multipart/form-data":
            posted = await _from_form(request, rt, caller, bool(replace))
        else:
            raise UnsupportedMedia(
                f"content type {content_type or '(none)'!r} is not accepted: send application/json "
                "or multipart/form-data with a 'file' field"
            )
        if async_jobs.prefers_async(request):
            return await async_jobs.accept(request, rt, posted)
        result = await ingest(rt, posted)
        return Response(checked(IngestedDocument, result), status_code=200 if result["status"] == "unchanged" else 201)

    @get("/", summary="List documents", responses=problems(400, 401, 403, 429, 503))
    async def list(
        self,
        rt: Rt,
        caller: Caller,
        collection: Annotated[str | None, Parameter(description="Only this collection.", max_length=64)] = None,
        limit: Annotated[int, Parameter(ge=1, le=200, description="Page size.")] = 50,
        offset: Annotated[int, Parameter(ge=0, le=10_000_000, description="Documents to skip.")] = 0,
    ) -> DocumentPage:
        """One page of documents, newest first, with chunk counts and the total."""
        entities.check_collection(collection)
        scope = caller.readable([collection] if collection else None)
        return checked(DocumentPage,
                       await documents.list_documents(rt, collections=scope, limit=limit, offset=offset))

    @get("/{document_id:str}", summary="Get a document with its chunks", responses=problems(401, 404, 429, 503))
    async def detail(self, rt: Rt, caller: Caller, document_id: FromPath[str]) -> DocumentDetail:
        """A document, its metadata and its chunks in order."""
        doc = await documents.get_document(rt, document_id)
        caller.check_visible(doc["collection"], f"no document with id {document_id!r}")
        return checked(DocumentDetail, doc)

    @delete("/{document_id:str}", status_code=200, summary="Delete a document",
            responses=problems(401, 403, 404, 429, 503))
    async def remove(self, rt: Rt, caller: Caller, document_id: FromPath[str]) -> Deleted:
        """Remove a document from both stores; its entities and relations are taken back."""
        doc = await documents.get_document(rt, document_id, chunks=False)
        caller.check_visible(doc["collection"], f"no document with id {document_id!r}")
        caller.check_write(doc["collection"])
        return checked(Deleted, await documents.delete_document(rt, document_id))


def _pydantic_problem(exc: ValidationError) -> ValidationException:
    extra = [{"key": ".".join(str(p) for p in e["loc"]), "message": e["msg"], "source": "body"} for e in exc.errors()]
    return ValidationException(detail="invalid document", extra=extra)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _writable(rt: Rt, caller: Principal, collection: str | None) -> str:
    """The collection a new document goes to, checked against the key's scope before any work."""
    name = entities.check_collection(collection) or rt.settings.default_collection
    caller.check_write(name)
    return name


async def _from_json(request: Request[Any, Any, Any], rt: Rt, caller: Principal) -> IngestRequest:
    raw = await request.body()
    try:
        payload = json.loads(raw, parse_constant=_no_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"the body is not valid JSON ({exc})") from None
    try:
        body = DocumentIn.model_validate(payload)
    except ValidationError as exc:
        raise _pydantic_problem(exc) from None
    return IngestRequest.text(body.text, title=body.title, source=body.source,
                              collection=_writable(rt, caller, body.collection), metadata=body.metadata, tags=body.tags)


async def _from_form(request: Request[Any, Any, Any], rt: Rt, caller: Principal, replace: bool) -> IngestRequest:
    form = await request.form()
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise InvalidInput("multipart upload needs a 'file' field holding the file")
    fields = {k: form.get(k) for k in ("collection", "source", "metadata", "tags", "replace")}
    for name, value in fields.items():
        if value is not None and not isinstance(value, str):
            raise InvalidInput(f"form field {name!r} must be text")
    if fields["replace"] is not None:
        flag = fields["replace"].strip().lower()
        if flag not in ("true", "false"):
            raise InvalidInput("form field 'replace' must be true or false")
        replace = replace or flag == "true"
    metadata = None
    if fields["metadata"]:
        try:
            metadata = json.loads(fields["metadata"])
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"form field 'metadata' is not valid JSON ({exc.msg})") from None
        if not isinstance(metadata, dict):
            raise InvalidInput("form field 'metadata' must be a JSON object")
    tags = [t.strip() for t in (fields["tags"] or "").split(",") if t.strip()]
    collection = _writable(rt, caller, fields["collection"] or None)
    data = await upload.read()
    return IngestRequest.file(upload.filename or "upload", data, source=fields["source"] or None, replace=replace,
                              collection=collection, metadata=metadata, tags=tags)


class EntityController(Controller):
    path = "/entities"
    tags = ["entities"]

    @get("/", summary="Search entities by name", responses=problems(400, 401, 403, 429, 503))
    async def search(
        self,
        rt: Rt,
        caller: Caller,
        q: Annotated[str, Parameter(description="Name or part of one.", min_length=1, max_length=200)],
        collection: Annotated[str | None, Parameter(description="Only this collection.", max_length=64)] = None,
        limit: Annotated[int, Parameter(ge=1, le=100, description="Number of entities.")] = 20,
    ) -> EntitySearch:
        """Entities whose name matches ``q`` (fulltext index over entity names)."""
        entities.check_collection(collection)
        scope = caller.readable([collection] if collection else None)
        return checked(EntitySearch, await entities.search_entities(rt, q, collections=scope, limit=limit))

    @get("/{entity_id:str}", summary="Get an entity with relations and mentions",
         responses=problems(401, 404, 429, 503))
    async def detail(self, rt: Rt, caller: Caller, entity_id: FromPath[str]) -> EntityDetail:
        """An entity, its strongest relations with evidence chunks, and the chunks that mention it."""
        # Entities, their relations and their evidence all belong to one collection (the data model).
        found = await entities.get_entity(rt, entity_id, visible=caller.can_see)
        return checked(EntityDetail, found)


@get("/health", summary="Liveness", tags=["system"], security=[{}])  # open: no key needed
async def health_check() -> Health:
    """The process answers (no store is touched)."""
    return Health(status="ok", version=__version__)


@get("/ready", summary="Readiness", tags=["system"],
     responses={503: ResponseSpec(data_container=Readiness, description="Not ready", generate_examples=False),
                **{k: v for k, v in problems(401).items()}})
async def ready(rt: Rt) -> Response[Readiness]:
    """Both stores reachable and their schema current; 503 otherwise, with the reason per store."""
    report = await health.readiness(rt)
    return Response(checked(Readiness, report), status_code=200 if report["ready"] else 503)


@get("/stats", summary="Counts per collection and drift", tags=["system"], responses=problems(401, 429, 503))
async def stats(rt: Rt, caller: Caller) -> Stats:
    """Documents, chunks, entities and relations per collection in each store, and any drift between them
    (only the collections the API key may read)."""
    report = await health.collect_status(rt)
    if caller.collections is not None:
        report["collections"] = {k: v for k, v in report["collections"].items() if caller.can_see(k)}
        report["drift"] = [d for d in report["drift"] if caller.can_see(d["collection"])]
    return checked(Stats, report)
