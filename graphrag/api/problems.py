"""The one error mapper: every error becomes ``application/problem+json`` (RFC 9457).

Client mistakes are 4xx with a detail that names the problem; a store that is down is 503; anything
unexpected is logged with its request id and answered 500 without internals.
"""

from __future__ import annotations

import logging
from typing import Any

from litestar import Request, Response
from litestar.exceptions import HTTPException, ValidationException
from neo4j.exceptions import ServiceUnavailable as Neo4jUnavailable
from neo4j.exceptions import SessionExpired

from graphrag.errors import GraphRAGError
from graphrag.stores.postgres import CONNECTION_ERRORS

log = logging.getLogger("graphrag.api")
PROBLEM_JSON = "application/problem+json"
_TITLES = {400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found", 405: "Method not allowed",
           413: "Payload too large", 415: "Unsupported media type", 422: "Unprocessable content",
           429: "Too many requests", 500: "Internal error", 503: "Service unavailable"}


def problem(request: Request[Any, Any, Any], status: int, detail: str, *, title: str | None = None,
            errors: list[dict[str, Any]] | None = None, headers: dict[str, str] | None = None) -> Response[Any]:
    """A problem+json response carrying the request id."""
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": title or _TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "instance": request.url.path,
        "request_id": request.scope.get("state", {}).get("request_id"),
    }
    if errors:
        body["errors"] = errors
    return Response(body, status_code=status, media_type=PROBLEM_JSON, headers=headers)


def _validation(request: Request[Any, Any, Any], exc: ValidationException) -> Response[Any]:
    errors = []
    for item in exc.extra if isinstance(exc.extra, list) else []:
        if isinstance(item, dict):
            key = item.get("key") or ""
            errors.append({"field": key, "message": str(item.get("message", ""))})
    if errors:
        detail = "; ".join(f"{e['field']}: {e['message']}" if e["field"] else e["message"] for e in errors[:5])
    else:
        detail = exc.detail or "invalid request"
    return problem(request, 400, detail, title="Invalid input", errors=errors or None)


def handle(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """Map any exception to problem details."""
    if isinstance(exc, GraphRAGError):
        if exc.status_code >= 500:
            log.warning("%s %s: %s", request.method, request.url.path, exc.message)
        return problem(request, exc.status_code, exc.message, title=exc.title)
    if isinstance(exc, ValidationException):
        return _validation(request, exc)
    if isinstance(exc, HTTPException):
        # Litestar's own details ("Not Found") only repeat the title: ours say more.
        generic = exc.detail.lower() == _TITLES.get(exc.status_code, "").lower() if exc.detail else True
        detail = _default(exc.status_code) if generic else exc.detail
        return problem(request, exc.status_code, detail, headers=exc.headers)
    if isinstance(exc, UnicodeEncodeError):
        return problem(request, 400, "the request holds text that is not valid Unicode (a lone surrogate)",
                       title="Invalid input")
    if isinstance(exc, CONNECTION_ERRORS):
        log.warning("%s %s: PostgreSQL unavailable: %s", request.method, request.url.path, type(exc).__name__)
        return problem(request, 503, "PostgreSQL is unavailable; retry shortly", headers={"Retry-After": "5"})
    if isinstance(exc, (Neo4jUnavailable, SessionExpired)):
        log.warning("%s %s: Neo4j unavailable: %s", request.method, request.url.path, type(exc).__name__)
        return problem(request, 503, "Neo4j is unavailable; retry shortly", headers={"Retry-After": "5"})
    if isinstance(exc, TimeoutError):
        return problem(request, 503, "the request took too long; retry shortly", headers={"Retry-After": "5"})
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return problem(request, 500, "internal error; the server log has the details under this request id")


def _default(status: int) -> str:
    return {
        404: "no such endpoint",
        405: "method not allowed on this endpoint",
        413: "the request body is over the size limit (GRAPHRAG_MAX_FILE_MB)",
        415: "unsupported content type",
    }.get(status, _TITLES.get(status, "error"))
