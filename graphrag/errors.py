"""One exception tree for the whole service.

::

    GraphRAGError
    ├── UserError                 the caller sent something wrong -> HTTP 4xx, CLI exit 2
    │   ├── InvalidInput          bad value, malformed filter, unsupported type   (400/422)
    │   ├── Forbidden             the API key's scope does not cover this          (403)
    │   ├── NotFound              unknown document / entity id                     (404)
    │   ├── Conflict              the collection is busy (a job runs in it)        (409)
    │   ├── PayloadTooLarge       file or upload over the size limit               (413)
    │   └── UnsupportedMedia      content type we cannot read                      (415)
    └── ServiceError              something on our side -> HTTP 5xx, CLI exit 1
        ├── ConfigurationError    settings that cannot work (wrong password, missing java)
        ├── NotConfigured         a feature whose setting is unset (answer model)  (501)
        ├── ServiceUnavailable    a store is down or unreachable                   (503)
        └── ServiceStartError     a local service failed to start

Messages are one line, name the offending setting or field, and never contain secrets.
"""

from __future__ import annotations


class GraphRAGError(Exception):
    """Base of every error this package raises on purpose."""

    status_code: int = 500
    title: str = "Internal error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UserError(GraphRAGError):
    status_code = 400
    title = "Bad request"


class InvalidInput(UserError):
    status_code = 400
    title = "Invalid input"


class Forbidden(UserError):
    status_code = 403
    title = "Forbidden"


class NotFound(UserError):
    status_code = 404
    title = "Not found"


class Conflict(UserError):
    """The request cannot run now, given what else is under way (say so, and when to try again)."""

    status_code = 409
    title = "Conflict"


class PayloadTooLarge(UserError):
    status_code = 413
    title = "Payload too large"


class UnsupportedMedia(UserError):
    status_code = 415
    title = "Unsupported media type"


class ServiceError(GraphRAGError):
    status_code = 500
    title = "Service error"


class ConfigurationError(ServiceError):
    status_code = 500
    title = "Configuration error"


class NotConfigured(ServiceError):
    """A feature that needs a setting nobody set (e.g. ``GRAPHRAG_ANSWER_MODEL``); the message names it."""

    status_code = 501
    title = "Not configured"


class ServiceUnavailable(ServiceError):
    status_code = 503
    title = "Service unavailable"


class ServiceStartError(ServiceError):
    status_code = 503
    title = "Service failed to start"


def one_line(exc: BaseException, limit: int = 300) -> str:
    """An exception as a single line for reports and logs (our message when it has one)."""
    text = getattr(exc, "message", None) or str(exc) or type(exc).__name__
    return " ".join(str(text).split())[:limit]
