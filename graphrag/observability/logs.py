"""Log format: plain text (the default) or one JSON object per line (``GRAPHRAG_LOG_FORMAT=json``),
with the id of the request a line was written for.

The request id lives in a context variable that the API middleware sets for each request, so every
line written while serving it (access line, a failing leg's warning) carries it. A filter stamps it on
the record when the record is made: Litestar hands records to a queue and formats them in another
thread, where the context is no longer the request's.
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any, Literal

from graphrag.observability import tracing

LogFormat = Literal["text", "json"]

#: The id of the request being served (set by the API middleware), else None.
request_id: ContextVar[str | None] = ContextVar("graphrag_request_id", default=None)

#: Litestar's line format plus the process id: with several workers, a line says which one wrote it.
TEXT_FORMAT = "%(levelname)s - %(asctime)s - %(process)d - %(name)s - %(module)s - %(message)s"


class ContextFilter(logging.Filter):
    """Stamps ``request_id`` (and, with tracing on, ``trace_id`` / ``span_id``) on each record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = request_id.get()
        if getattr(record, "trace_id", None) is None:
            ids = tracing.current_ids()
            if ids is not None:
                record.trace_id, record.span_id = ids
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``time`` (UTC, ISO 8601), ``level``, ``logger``, ``message``,
    ``process``, and when known ``request_id``, ``trace_id``, ``span_id``, ``exception``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace(
                "+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "process": record.process,
        }
        for key in ("request_id", "trace_id", "span_id"):
            value = getattr(record, key, None)
            if value is not None:
                entry[key] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def formatter_config(fmt: LogFormat) -> dict[str, Any]:
    """A ``logging.config.dictConfig`` formatter entry for ``fmt``."""
    if fmt == "json":
        return {"()": JsonFormatter}
    return {"format": TEXT_FORMAT}


def litestar_config(fmt: LogFormat) -> dict[str, Any]:
    """Keyword arguments for Litestar's ``LoggingConfig``: its handlers with our formatter and the
    context filter (which runs in the logging thread, before the queue)."""
    from litestar.logging.config import default_handlers

    handlers = {name: {**spec, "filters": ["context"]} for name, spec in default_handlers.items()}
    return {"formatters": {"standard": formatter_config(fmt)}, "filters": {"context": {"()": ContextFilter}},
            "handlers": handlers}


def uvicorn_config(fmt: LogFormat) -> dict[str, Any] | None:
    """uvicorn's ``log_config`` for ``fmt``: None keeps uvicorn's own (text) format."""
    if fmt != "json":
        return None
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"context": {"()": ContextFilter}},
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {"default": {"class": "logging.StreamHandler", "formatter": "json", "filters": ["context"],
                                 "stream": "ext://sys.stderr"}},
        "loggers": {"uvicorn": {"handlers": ["default"], "level": "INFO", "propagate": False},
                    "uvicorn.error": {"level": "INFO"},
                    "uvicorn.access": {"handlers": ["default"], "level": "INFO", "propagate": False}},
    }


def use_format(fmt: LogFormat) -> None:
    """Give the root logger's handlers ``fmt`` (the CLI configured them as text), with the context
    filter; with JSON, Python warnings are logged too, so that every line is JSON."""
    if fmt != "json":
        return
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(logging.StreamHandler())
    for handler in root.handlers:
        handler.setFormatter(JsonFormatter())
        if not any(isinstance(f, ContextFilter) for f in handler.filters):
            handler.addFilter(ContextFilter())
    logging.captureWarnings(True)
