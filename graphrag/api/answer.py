"""``POST /answer``: a grounded answer with citations, as JSON or as Server-Sent Events.

The request is a search (``query``, ``mode``, ``limit``, ``collections``, ``filters``, ``graph_leg``)
plus what to do with unsupported sentences. The search runs through the router with the API key's
scope, exactly as ``POST /search``; the configured model (``GRAPHRAG_ANSWER_MODEL``) answers from
the numbered hits; every sentence's citation is checked (:mod:`graphrag.answer.citations`).

With ``Accept: text/event-stream`` the answer streams as events (each ``data`` a JSON object):

- ``hits``: ``{"query", "hits", "legs"}``, first, as soon as the search is done;
- ``delta``: ``{"text"}``, pieces of the answer as the model writes them;
- ``done``: the JSON response without ``hits`` (its ``answer`` is the checked one: with
  ``on_unsupported: "drop"`` it can be shorter than the deltas joined);
- ``error``: problem details, when the model fails after the stream began (the last event).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from litestar import Controller, Request, Response, post
from litestar.openapi.spec import OpenAPIMediaType, OpenAPIResponse, OpenAPIType, Operation, Schema
from litestar.params import JSONBody
from litestar.response import ServerSentEvent
from litestar.response.sse import ServerSentEventMessage
from pydantic import BaseModel, ConfigDict, Field, StrictInt

from graphrag.answer import service
from graphrag.answer.model import require_model
from graphrag.api.openapi import problems
from graphrag.api.routes import Caller, Rt, checked, json_only
from graphrag.api.schemas import CollectionName, Hit, LegStatus, Mode, _Out
from graphrag.runtime import Runtime

SSE = "text/event-stream"


class AnswerRequest(BaseModel):
    """A question. ``{"query": "..."}`` alone is enough."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: str = Field(..., min_length=1, max_length=2000, description="The question.")
    mode: Mode = Field("auto", description="How to retrieve the context, as in /search.")
    limit: StrictInt = Field(service.DEFAULT_LIMIT, ge=1, le=service.MAX_LIMIT,
                             description="Hits given to the model as numbered sources [1]..[n].")
    collections: list[CollectionName] | None = Field(None, max_length=50, description="Only these collections.")
    filters: dict[str, Any] | None = Field(None, description="Metadata filter, as in /search.")
    graph_leg: Literal["auto", "always", "never"] = Field("auto", description="As in /search.")
    on_unsupported: Literal["flag", "drop"] = Field(
        "flag", description="Sentences the citation check finds unsupported: flag lists them in `unsupported`; "
        "drop also cuts them out of `answer`.")


class Citation(_Out):
    n: int = Field(description="the number cited in the answer: the n-th hit")
    chunk_id: str
    document_id: str
    source: str
    title: str


class Unsupported(_Out):
    sentence: str
    cited: list[int] = Field(description="the numbers the sentence cites (empty: none)")
    reason: Literal["not_supported", "unknown_citation", "uncited"]
    support: float = Field(description="share of the sentence's content words found in the cited hits")


class Usage(_Out):
    requests: int
    input_tokens: int
    output_tokens: int
    total_tokens: int


class AnswerResponse(_Out):
    query: str
    answer: str = Field(description="the answer, each sentence citing its hits as [n]")
    hits: list[Hit] = Field(description="the context, numbered from 1 in this order (the /search result shape)")
    citations: list[Citation] = Field(description="the hits the answer cites, in the order first cited")
    unsupported: list[Unsupported] = Field(description="sentences the citation check did not find supported")
    dropped: bool = Field(description="whether unsupported sentences were cut out of `answer`")
    model: str | None = Field(description="the model that answered (null: no hits, so no model was asked)")
    usage: Usage
    took_ms: float
    legs: dict[str, LegStatus]


@dataclass
class AnswerOperation(Operation):
    """Declares the event stream beside the JSON answer of ``POST /answer``."""

    def __post_init__(self) -> None:
        ok = (self.responses or {}).get("200")
        if isinstance(ok, OpenAPIResponse) and ok.content is not None:
            ok.content[SSE] = OpenAPIMediaType(schema=Schema(
                type=OpenAPIType.STRING,
                description="With Accept: text/event-stream. Events (data: a JSON object): hits {query, hits, legs}; "
                            "delta {text}, repeated; done (the JSON answer without hits); error (problem details, "
                            "when the model fails after the stream began)."))


def wants_events(request: Request[Any, Any, Any]) -> bool:
    """Whether the client asked for Server-Sent Events rather than JSON."""
    return request.accept.best_match(["application/json", SSE], default="application/json") == SSE


async def _events(rt: Runtime, prepared: service.Prepared) -> AsyncIterator[ServerSentEventMessage]:
    async for name, data in service.stream(rt, prepared):
        yield ServerSentEventMessage(event=name, data=json.dumps(data, ensure_ascii=False, default=str))


class AnswerController(Controller):
    path = "/answer"
    tags = ["answer"]
    before_request = json_only  # type: ignore[assignment]  # a plain function: Litestar passes the request

    @post("/", status_code=200, summary="Answer a question from the knowledge base, with citations",
          operation_class=AnswerOperation, responses=problems(400, 401, 403, 404, 415, 429, 500, 501, 503))
    async def answer(self, request: Request[Any, Any, Any], data: JSONBody[AnswerRequest], rt: Rt,
                     caller: Caller) -> Response[AnswerResponse]:
        """Retrieve (as ``POST /search``), answer from the numbered hits with ``GRAPHRAG_ANSWER_MODEL``, and
        check that each sentence is supported by the hit it cites ``[n]``.

        ``Accept: text/event-stream`` streams Server-Sent Events instead: ``hits``, then ``delta`` text
        pieces, then ``done`` (this response without ``hits``), or ``error`` (problem details) if the model
        fails mid-way. 501 when no answer model is configured.
        """
        require_model(rt.settings)
        collections = caller.readable(data.collections)
        await rt.postgres.require_collections(data.collections)
        options = service.AnswerOptions(mode=data.mode, limit=data.limit, collections=collections,
                                        filters=data.filters, graph_leg=data.graph_leg,
                                        drop_unsupported=data.on_unsupported == "drop")
        prepared = await service.prepare(rt, data.query, options)
        if wants_events(request):
            # No caching or proxy buffering of a stream that is meant to arrive piece by piece.
            return ServerSentEvent(_events(rt, prepared),  # type: ignore[return-value]
                                   headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
        return Response(checked(AnswerResponse, await service.complete(rt, prepared)))
