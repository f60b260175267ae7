"""``graphrag.client``: an async Python client of the REST API (``graphrag serve``).

::

    from graphrag.client import GraphRAGClient

    async with GraphRAGClient("http://127.0.0.1:8000", api_key="grk_...") as client:
        await client.add_document("# Apex\\n\\nApex Logistics was founded by Sarah Johnson.", source="apex.md")
        found = await client.search("Who founded Apex Logistics?", limit=3)
        for hit in found.results:
            print(hit.score, hit.source)

Answers are the API's own response models (:mod:`graphrag.api.schemas`), which keep keys they do not
declare, so a newer server never breaks an older client. An error answer (4xx, 5xx) raises
:class:`APIError` carrying its problem details; a server that cannot be reached raises httpx's
transport errors (:class:`httpx.TransportError`).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, ValidationError

from graphrag.api.schemas import (
    CollectionDeleted,
    Deleted,
    DocumentDetail,
    DocumentPage,
    EntityDetail,
    EntitySearch,
    Health,
    IngestedDocument,
    Mode,
    Problem,
    Readiness,
    SearchResponse,
    Stats,
)

__all__ = ["APIError", "GraphRAGClient"]

Model = TypeVar("Model", bound=BaseModel)
DEFAULT_TIMEOUT = httpx.Timeout(300.0, connect=10.0)  # an ingest or a first search can take a while


class APIError(Exception):
    """An error answer of the API: ``status_code`` and its RFC 9457 ``problem`` (detail, request id...)."""

    def __init__(self, status_code: int, problem: Problem, response: httpx.Response | None = None) -> None:
        super().__init__(f"{status_code} {problem.title}: {problem.detail}")
        self.status_code = status_code
        self.problem = problem
        self.response = response

    @property
    def detail(self) -> str:
        """What went wrong, in one line."""
        return self.problem.detail

    @property
    def request_id(self) -> str | None:
        """The id the server logged the request under."""
        return self.problem.request_id


class GraphRAGClient:
    """An async client of one graphrag API, used as ``async with GraphRAGClient(url, api_key) as c``.

    Args:
        base_url: Where the API answers, e.g. ``http://127.0.0.1:8000``.
        api_key: Sent as ``Authorization: Bearer`` when the server requires keys.
        timeout: Seconds (or an :class:`httpx.Timeout`) per request.
        transport: An httpx transport to use instead of the network (e.g. ``httpx.ASGITransport``).
    """

    def __init__(self, base_url: str, api_key: str | None = None, *,
                 timeout: float | httpx.Timeout = DEFAULT_TIMEOUT,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._http = httpx.AsyncClient(base_url=base_url.rstrip("/"), headers=headers, timeout=timeout,
                                       transport=transport)

    async def __aenter__(self) -> GraphRAGClient:
        await self._http.__aenter__()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self._http.__aexit__(exc_type, exc, tb)

    async def aclose(self) -> None:
        """Close the connections (``async with`` does it on exit)."""
        await self._http.aclose()

    # --- any endpoint ------------------------------------------------------------------------------
    async def request(self, method: str, path: str, **kwargs: Any) -> Any:
        """Call ``path`` and return the decoded JSON answer; an error answer raises :class:`APIError`.
        ``kwargs`` go to :meth:`httpx.AsyncClient.request` (``json``, ``params``, ``files``...)."""
        response = await self._http.request(method, path, **kwargs)
        if response.is_error:
            raise _error(response)
        return response.json()

    async def _get(self, model: type[Model], method: str, path: str, **kwargs: Any) -> Model:
        return model.model_validate(await self.request(method, path, **kwargs))

    # --- search ------------------------------------------------------------------------------------
    async def search(self, query: str, *, mode: Mode = "auto", limit: int = 10,
                     collections: list[str] | None = None, filters: dict[str, Any] | None = None,
                     threshold: float | None = None, explain: bool = False, token_budget: int | None = None,
                     mmr: float | None = None, collapse: bool = False, metadata_only: bool = False,
                     rerank: bool = False, fusion: Literal["convex", "rrf"] | None = None,
                     graph_leg: Literal["auto", "always", "never"] = "auto") -> SearchResponse:
        """``POST /search``: ranked chunks with provenance, and the graph context."""
        body = {"query": query, "mode": mode, "limit": limit, "collections": collections, "filters": filters,
                "threshold": threshold, "explain": explain, "token_budget": token_budget, "mmr": mmr,
                "collapse": collapse, "metadata_only": metadata_only, "rerank": rerank, "fusion": fusion,
                "graph_leg": graph_leg}
        return await self._get(SearchResponse, "POST", "/search",
                               json={k: v for k, v in body.items() if v is not None})

    # --- documents ---------------------------------------------------------------------------------
    async def add_document(self, text: str, *, title: str | None = None, source: str | None = None,
                           collection: str | None = None, metadata: dict[str, Any] | None = None,
                           tags: list[str] | None = None) -> IngestedDocument:
        """``POST /documents`` with a text (Markdown allowed). Its ``status`` says created, updated or unchanged."""
        body = {"text": text, "title": title, "source": source, "collection": collection, "metadata": metadata,
                "tags": tags}
        return await self._get(IngestedDocument, "POST", "/documents",
                               json={k: v for k, v in body.items() if v is not None})

    async def upload(self, file: str | os.PathLike[str] | bytes, *, filename: str | None = None,
                     collection: str | None = None, source: str | None = None,
                     metadata: dict[str, Any] | None = None, tags: list[str] | None = None,
                     replace: bool = False) -> IngestedDocument:
        """``POST /documents`` with a file (PDF, DOCX, HTML, Markdown, text...): a path, or bytes with ``filename``.

        The document's identity is ``source`` when given, else the file name (see the API's docs for
        what happens when other bytes already have that name, and ``replace``)."""
        if isinstance(file, bytes):
            if not filename:
                raise ValueError("uploading bytes needs a filename (its extension tells the file type)")
            data = file
        else:
            path = Path(file)
            data = await asyncio.to_thread(path.read_bytes)
            filename = filename or path.name
        fields = {"collection": collection, "source": source,
                  "metadata": json.dumps(metadata) if metadata is not None else None,
                  "tags": ",".join(tags) if tags else None, "replace": "true" if replace else None}
        return await self._get(IngestedDocument, "POST", "/documents", files={"file": (filename, data)},
                               data={k: v for k, v in fields.items() if v is not None})

    async def list_documents(self, *, collection: str | None = None, limit: int = 50,
                             offset: int = 0) -> DocumentPage:
        """``GET /documents``: one page, newest first, with the total."""
        params: dict[str, Any] = {"limit": limit, "offset": offset}
        if collection:
            params["collection"] = collection
        return await self._get(DocumentPage, "GET", "/documents", params=params)

    async def get_document(self, document_id: str) -> DocumentDetail:
        """``GET /documents/{id}``: a document with its chunks."""
        return await self._get(DocumentDetail, "GET", f"/documents/{_segment(document_id)}")

    async def delete_document(self, document_id: str) -> Deleted:
        """``DELETE /documents/{id}``: remove it from both stores."""
        return await self._get(Deleted, "DELETE", f"/documents/{_segment(document_id)}")

    async def delete_collection(self, collection: str) -> CollectionDeleted:
        """``DELETE /collections/{name}``: the collection and everything in it, from both stores."""
        return await self._get(CollectionDeleted, "DELETE", f"/collections/{_segment(collection)}")

    # --- entities ----------------------------------------------------------------------------------
    async def search_entities(self, q: str, *, collection: str | None = None, limit: int = 20) -> EntitySearch:
        """``GET /entities``: entities whose name matches ``q``."""
        params: dict[str, Any] = {"q": q, "limit": limit}
        if collection:
            params["collection"] = collection
        return await self._get(EntitySearch, "GET", "/entities", params=params)

    async def get_entity(self, entity_id: str) -> EntityDetail:
        """``GET /entities/{id}``: an entity with its relations and the chunks that mention it."""
        return await self._get(EntityDetail, "GET", f"/entities/{_segment(entity_id)}")

    # --- system ------------------------------------------------------------------------------------
    async def health(self) -> Health:
        """``GET /health``: the process answers (needs no key)."""
        return await self._get(Health, "GET", "/health")

    async def ready(self) -> Readiness:
        """``GET /ready``: whether both stores answer; a not-ready server's report is returned, not raised."""
        response = await self._http.get("/ready")
        if response.status_code == 503:
            try:
                return Readiness.model_validate(response.json())
            except (ValueError, ValidationError):
                pass  # not a readiness report: an error like any other
        if response.is_error:
            raise _error(response)
        return Readiness.model_validate(response.json())

    async def stats(self) -> Stats:
        """``GET /stats``: counts per collection in each store and any drift (the key's collections only)."""
        return await self._get(Stats, "GET", "/stats")


def _segment(value: str) -> str:
    return quote(value, safe="")


def _error(response: httpx.Response) -> APIError:
    """The problem details of an error answer; a body that is not one still gives a typed error."""
    try:
        problem = Problem.model_validate(response.json())
    except (ValueError, ValidationError):
        problem = Problem(title=response.reason_phrase or "Error", status=response.status_code,
                          detail=response.text.strip()[:500] or response.reason_phrase or "error",
                          instance=response.request.url.path)
    return APIError(response.status_code, problem, response)
