"""ASGI middleware of the REST API: a request id and an access-log line per request, and API keys.

Plain ASGI (no per-request objects) because it wraps every call, search included.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

access_log = logging.getLogger("graphrag.api.access")
_REQUEST_ID = re.compile(r"^[A-Za-z0-9._\-]{1,64}$")
OPEN_PATHS = frozenset({"/health"})


def parse_keys(raw: str | None) -> list[bytes]:
    """SHA-256 digests of the configured keys. Entries are keys, or ``sha256:<hex>`` digests of keys,
    so a deployment need not keep the keys themselves in its environment."""
    digests = []
    for entry in (raw or "").split(","):
        entry = entry.strip()
        if not entry:
            continue
        if entry.startswith("sha256:") and re.fullmatch(r"[0-9a-fA-F]{64}", entry[7:]):
            digests.append(bytes.fromhex(entry[7:]))
        else:
            digests.append(hashlib.sha256(entry.encode()).digest())
    return digests


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
    """Gives each request an id (``X-Request-ID``, kept from the client when sane), checks API keys,
    and writes one access-log line: method, path, status, milliseconds, request id."""

    def __init__(self, app: ASGIApp, api_keys: list[bytes]) -> None:
        self.app = app
        self.api_keys = api_keys

    def _authorised(self, scope: Scope) -> bool:
        if not self.api_keys or scope["path"] in OPEN_PATHS or scope.get("method") == "OPTIONS":
            return True
        key = presented_key(scope)
        if not key:
            return False
        digest = hashlib.sha256(key.encode("utf-8", "replace")).digest()
        # Compare against every key so timing does not reveal which one matched.
        found = False
        for stored in self.api_keys:
            found |= hmac.compare_digest(digest, stored)
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = _header(scope, b"x-request-id")
        request_id = given if given and _REQUEST_ID.match(given) else uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = request_id
        started = time.perf_counter()
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            if self._authorised(scope):
                await self.app(scope, receive, send_with_id)
            else:
                await _unauthorised(scope, send_with_id, request_id)
        finally:
            access_log.info("%s %s %s %.1fms id=%s", scope.get("method"), scope["path"], status,
                            (time.perf_counter() - started) * 1000, request_id)


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
