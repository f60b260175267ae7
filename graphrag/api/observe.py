"""What the app needs for observability, from the settings: the ``/metrics`` controller and request
metrics (``GRAPHRAG_METRICS``), request spans (``GRAPHRAG_TRACING``) and the log format
(``GRAPHRAG_LOG_FORMAT``). ``create_app`` adds these pieces; the modules named here do the work."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from litestar.logging.config import LoggingConfig

from graphrag.config import Settings
from graphrag.errors import ConfigurationError
from graphrag.observability import logs, tracing


@dataclass
class Observability:
    """Route handlers, middleware and plugins to add to the app, its logging config, and a callback
    for requests the outer middleware refuses (counted as ``graphrag_http_rejected_total``)."""

    handlers: list[Any] = field(default_factory=list)
    middleware: list[Any] = field(default_factory=list)
    plugins: list[Any] = field(default_factory=list)
    logging_config: LoggingConfig | None = None
    on_reject: Callable[[int], None] | None = None
    metrics: bool = False

    def process_exiting(self) -> None:
        """At shutdown of the app's process (a worker among several): see metrics.process_exited."""
        if self.metrics:
            from graphrag.api import metrics

            metrics.process_exited()


def observability(settings: Settings) -> Observability:
    """The pieces for ``settings``; turns tracing on for the process when it is configured."""
    found = Observability(logging_config=LoggingConfig(**logs.litestar_config(settings.log_format)))
    if settings.metrics:
        from graphrag.api import metrics

        counters = metrics.process_metrics()
        found.metrics = True
        found.handlers.append(metrics.MetricsController)
        found.middleware.append(metrics.prometheus_config().middleware)
        found.on_reject = counters.record_rejected
    if settings.tracing:
        tracing.enable()
        try:
            from graphrag.api import otel
        except ImportError:  # Litestar's plugin needs opentelemetry-instrumentation-asgi
            tracing.disable()
            raise ConfigurationError(f"GRAPHRAG_TRACING is on but the ASGI instrumentation is missing: "
                                     f"{tracing.INSTALL_HINT}") from None
        found.plugins.append(otel.plugin())
        found.middleware.append(otel.route_spans)
    return found
