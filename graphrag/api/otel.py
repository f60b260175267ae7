"""Request spans of the REST API (``GRAPHRAG_TRACING``): Litestar's ``OpenTelemetryPlugin`` (the ASGI
instrumentation) around the app, and a small route middleware that names each span after its route
template (``POST /search``, ``GET /documents/{document_id}``) and adds the request id.

Imported only when tracing is on, so OpenTelemetry is needed only then.
"""

from __future__ import annotations

from typing import Any

from litestar.plugins.opentelemetry import OpenTelemetryConfig, OpenTelemetryPlugin
from opentelemetry import trace

from graphrag.api.metrics import METRICS_PATH
from graphrag.api.middleware import ASGIApp, Receive, Scope, Send

#: Scrapes and liveness probes come every few seconds and say nothing a trace needs.
UNTRACED = [f"^{METRICS_PATH}$", "^/health$"]


def plugin() -> OpenTelemetryPlugin:
    """A server span per request, on the global tracer provider (see graphrag.observability.tracing)."""
    return OpenTelemetryPlugin(OpenTelemetryConfig(exclude=UNTRACED, exclude_spans=["receive", "send"]))


def route_spans(app: ASGIApp) -> ASGIApp:
    """Route-level middleware: runs after routing, inside the request's span."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        span: Any = trace.get_current_span()
        if span.is_recording() and scope["type"] == "http":
            route = scope.get("path_template") or scope["path"]
            span.update_name(f"{scope['method']} {route}")
            span.set_attribute("http.route", route)
            request_id = scope.get("state", {}).get("request_id")
            if request_id:
                span.set_attribute("graphrag.request_id", request_id)
        await app(scope, receive, send)

    return middleware
