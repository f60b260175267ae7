"""ASGI middleware of the REST API: a request id and an access-log line per request, API keys (the
caller's :class:`~graphrag.api.auth.Principal` goes into the request state) and a per-key rate limit.

Plain ASGI (no per-request objects) because it wraps every call, search included.
"""

from __future__ import annotations

import json
import logging
import math
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from graphrag.api.auth import OPEN, ApiKey, Principal, RateLimiter, identify
from graphrag.observability import logs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

access_log = logging.getLogger("graphrag.api.access")
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")
OPEN_PATHS = frozenset({"/health"})
#: The API docs (pages, schema, UI files) hold no data and are read without a key: a browser cannot
#: send one with a page load, and the docs' "Authorize" button is where a key is entered.
DOCS_PREFIX = "/schema"


def is_docs(scope: Scope) -> bool:
    path = scope["path"]
    return scope.get("method") in ("GET", "HEAD") and (path == DOCS_PREFIX or path.startswith(DOCS_PREFIX + "/"))


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def presented_key(scope: Scope) -> str | None:
    """The key a request presents in ``Authorization: Bearer`` or ``X-API-Key``."""
    auth = _header(scope, b"authorization")
    if auth and auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return _header(scope, b"x-api-key")


class RequestContext:
    """Gives each request an id (``X-Request-ID``, kept from the client when sane), identifies the
    caller by API key, applies the rate limit, and writes one access-log line: method, path, status,
    milliseconds, request id and key name (never the key). ``on_reject`` hears of each request it
    refuses (its status: 401 or 429). The request id is also the log context of everything the
    request logs (graphrag.observability.logs)."""

    def __init__(self, app: ASGIApp, api_keys: list[ApiKey], limiter: RateLimiter | None = None,
                 on_reject: Callable[[int], None] | None = None) -> None:
        self.app = app
        self.api_keys = api_keys
        self.limiter = limiter
        self.on_reject = on_reject

    def _principal(self, scope: Scope) -> Principal | None:
        if not self.api_keys:
            return OPEN
        if scope["path"] in OPEN_PATHS or scope.get("method") == "OPTIONS" or is_docs(scope):
            return OPEN
        key = presented_key(scope)
        return identify(self.api_keys, key) if key else None

    def _caller(self, scope: Scope, principal: Principal) -> str:
        if principal is not OPEN:
            return "key:" + principal.name
        client = scope.get("client")
        return "ip:" + (client[0] if client else "?")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = _header(scope, b"x-request-id")
        request_id = given if given and _REQUEST_ID.match(given) else uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        context = logs.request_id.set(request_id)
        started = time.perf_counter()
        path = scope["path"]  # before routing: a mounted app (/mcp) sees the path below its mount point
        status = 500
        principal: Principal | None = None

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            principal = self._principal(scope)
            if principal is None:
                self._rejected(401)
                await _unauthorised(scope, send_with_id, request_id)
                return
            state["principal"] = principal
            if self.limiter is not None and self.limiter.enabled and scope["path"] not in OPEN_PATHS:
                wait = self.limiter.take(self._caller(scope, principal))
                if wait > 0:
                    self._rejected(429)
                    await _too_many(scope, send_with_id, request_id, wait)
                    return
            await self.app(scope, receive, send_with_id)
        finally:
            who = principal.name if principal is not None else "-"
            access_log.info("%s %s %s %.1fms id=%s key=%s", scope.get("method"), path, status,
                            (time.perf_counter() - started) * 1000, request_id, who)
            logs.request_id.reset(context)

    def _rejected(self, status: int) -> None:
        if self.on_reject is not None:
            self.on_reject(status)


async def _too_many(scope: Scope, send: Send, request_id: str, wait: float) -> None:
    body = json.dumps({
        "type": "about:blank", "title": "Too Many Requests", "status": 429,
        "detail": f"rate limit reached (GRAPHRAG_RATE_LIMIT_PER_MINUTE); retry in {wait:.1f}s",
        "instance": scope["path"], "request_id": request_id,
    }).encode()
    await send({"type": "http.response.start", "status": 429, "headers": [
        (b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(max(1, math.ceil(wait))).encode()),
    ]})
    await send({"type": "http.response.body", "body": body})


async def _unauthorised(scope: Scope, send: Send, request_id: str) -> None:
    had_key = presented_key(scope) is not None
    body = json.dumps({
        "type": "about:blank", "title": "Unauthorized", "status": 401,
        "detail": "wrong API key" if had_key else "an API key is required: send Authorization: Bearer <key> or X-API-Key",
        "instance": scope["path"], "request_id": request_id,
    }).encode()
    await send({"type": "http.response.start", "status": 401, "headers": [
        (b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", b'Bearer realm="graphrag"'),
    ]})
    await send({"type": "http.response.body", "body": body})
