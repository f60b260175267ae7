"""The agent tools over MCP Streamable HTTP at ``/mcp``, inside the REST API's app.

The endpoint sits behind the API's middleware, so it takes the same API keys, rate limit, request ids
and access log as REST; each tool call runs with the calling key's collections as its scope
(:attr:`AgentDeps.allowed <graphrag.agent.deps.AgentDeps.allowed>`). The tools use the app's runtime:
no second pool, no second copy of the models.

The session manager runs *stateless*: every POST carries one complete JSON-RPC exchange and no
``Mcp-Session-Id`` is kept in memory. ``graphrag serve --workers N`` runs N processes on one port and the
kernel hands each connection to any of them, so a session held by one worker would be unknown to the
next ("session not found"). The tools need nothing a session gives: they answer one request at a
time and never call back into the client. Answers are plain JSON rather than SSE streams, for the
same reason.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from litestar.handlers import ASGIRouteHandler, asgi
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from graphrag.agent.deps import AgentDeps
from graphrag.agent.mcp import tool_server
from graphrag.api.auth import Principal
from graphrag.api.middleware import Receive, Scope, Send
from graphrag.errors import ServiceError
from graphrag.runtime import Runtime

log = logging.getLogger(__name__)

PATH = "/mcp"


def deps_for(rt: Runtime, ctx: ServerRequestContext[Runtime]) -> AgentDeps:
    """The tools' dependencies for one call: the runtime and the scope of the key that sent it."""
    request = ctx.request
    principal = getattr(request, "scope", {}).get("state", {}).get("principal")
    if not isinstance(principal, Principal):
        # The middleware sets a principal on every request it lets through; without one, refuse.
        raise ServiceError("the request was not authenticated")
    return AgentDeps(rt, allowed=principal.collections)


def build_server(rt: Runtime) -> Server[Runtime]:
    """An MCP server of the agent tools on an already opened runtime."""

    @asynccontextmanager
    async def lifespan(_: Server[Runtime]) -> AsyncIterator[Runtime]:
        yield rt  # the app's lifespan owns the runtime

    return tool_server(lifespan, lambda ctx: deps_for(ctx.lifespan_context, ctx),
                       answer=rt.settings.answer_model is not None)


class McpEndpoint:
    """The ASGI app mounted at ``/mcp``. It answers once :meth:`run` has started its session manager
    (inside the app's lifespan, after the runtime is open), 503 before and after."""

    def __init__(self, allowed_origins: Sequence[str] = ()) -> None:
        self.allowed_origins = frozenset(allowed_origins)
        self._manager: StreamableHTTPSessionManager | None = None

    @asynccontextmanager
    async def run(self, rt: Runtime) -> AsyncIterator[None]:
        """Serve MCP on ``rt`` for the duration of the context (a manager runs only once: a new one each time)."""
        transport_log = logging.getLogger("mcp.server.streamable_http")
        if transport_log.level == logging.NOTSET:  # it logs every stateless request at INFO
            transport_log.setLevel(logging.WARNING)
        manager = StreamableHTTPSessionManager(build_server(rt), stateless=True, json_response=True)
        async with manager.run():
            self._manager = manager
            try:
                yield
            finally:
                self._manager = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # MCP is plain HTTP; the key check runs on HTTP requests only
            await send({"type": "websocket.close", "code": 1008})
            return
        origin = _header(scope, b"origin")
        # A browser page must not reach the tools through DNS rebinding: only listed origins (the MCP
        # transport's own advice); clients that are not browsers send no Origin.
        if origin is not None and origin not in self.allowed_origins:
            await _problem(scope, send, 403, "Forbidden",
                           f"origin {origin!r} may not use {PATH}: list it in GRAPHRAG_CORS_ORIGINS")
            return
        manager = self._manager
        if manager is None:
            await _problem(scope, send, 503, "Service unavailable", "the MCP endpoint is not running")
            return
        await manager.handle_request(scope, receive, send)

    def route(self) -> ASGIRouteHandler:
        """The Litestar handler that mounts this endpoint at ``/mcp`` (and below)."""

        async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
            await self(scope, receive, send)

        return asgi(PATH, is_mount=True, copy_scope=True, name="mcp")(mcp_endpoint)


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return str(value.decode("latin-1"))
    return None


async def _problem(scope: Scope, send: Send, status: int, title: str, detail: str) -> None:
    state: dict[str, Any] = scope.get("state", {})
    body = json.dumps({"type": "about:blank", "title": title, "status": status, "detail": detail,
                       "instance": PATH, "request_id": state.get("request_id")}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/problem+json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
