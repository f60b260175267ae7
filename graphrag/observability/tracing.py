"""Optional OpenTelemetry spans. Off by default: :func:`span` is then a no-op and OpenTelemetry is
never imported, so the library need not be installed. :func:`enable` (``GRAPHRAG_TRACING=true``)
turns spans on for the process.

Spans made here: one per search leg (``search.leg.<leg>``) and one per store call (``postgresql <file>.<name>``,
``neo4j <file>.<name>``), named after the statement, never its values. The API adds the request spans.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

from graphrag.errors import ConfigurationError

log = logging.getLogger(__name__)

#: The tracer while tracing is on, else None (the one check every span makes).
_tracer: Any = None

INSTALL_HINT = "install the optional OpenTelemetry packages: pip install 'graphrag-kg[otel]'"


def enabled() -> bool:
    """Whether spans are being recorded in this process."""
    return _tracer is not None


def enable(service_name: str = "graphrag") -> None:
    """Record spans from now on, in this process.

    A tracer provider already configured (by ``opentelemetry-instrument``, or a test's in-memory
    exporter) is used as it is. Otherwise an SDK provider is installed that sends spans in batches
    over OTLP/HTTP to ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``
    (default ``http://localhost:4318``); the other standard ``OTEL_*`` variables (service name,
    resource attributes, sampler, headers) apply as usual.
    """
    global _tracer
    try:
        from opentelemetry import trace
    except ImportError:
        raise ConfigurationError(f"GRAPHRAG_TRACING is on but OpenTelemetry is missing: {INSTALL_HINT}") from None
    from graphrag import __version__

    if isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider):  # none configured yet
        trace.set_tracer_provider(_sdk_provider(service_name))
    _tracer = trace.get_tracer("graphrag", __version__)


def disable() -> None:
    """Stop recording spans (the provider stays configured)."""
    global _tracer
    _tracer = None


def _sdk_provider(service_name: str) -> Any:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        raise ConfigurationError(
            f"GRAPHRAG_TRACING is on but the OpenTelemetry SDK or OTLP exporter is missing: {INSTALL_HINT}"
        ) from None
    # OTEL_SERVICE_NAME, when set, names the service; Resource.create reads it.
    resource = Resource.create({} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": service_name})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    log.info("tracing on: OTLP/HTTP to %s", os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
             or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "http://localhost:4318")
    return provider


def span(name: str, attributes: Mapping[str, Any] | None = None) -> AbstractContextManager[Any]:
    """A span around a block, the current span inside it (None and no cost while tracing is off).
    An exception leaving the block is recorded on the span and marks it as an error."""
    if _tracer is None:
        return nullcontext()
    return _tracer.start_as_current_span(name, attributes=dict(attributes) if attributes else None)


def annotate(current: Any, attributes: Mapping[str, Any], error: str | None = None) -> None:
    """Add ``attributes`` to a span from :func:`span` (None is ignored); ``error`` marks it failed."""
    if current is None:
        return
    current.set_attributes({k: v for k, v in attributes.items() if v is not None})
    if error is not None:
        from opentelemetry.trace import Status, StatusCode

        current.set_status(Status(StatusCode.ERROR, error))


def current_ids() -> tuple[str, str] | None:
    """The trace and span ids (hex) of the current span, for log lines; None when there is none."""
    if _tracer is None:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return f"{context.trace_id:032x}", f"{context.span_id:016x}"
