"""CLI commands answered by the home's running ``graphrag serve`` (its models are already loaded).

A command asks the server only when :func:`graphrag.api.running.find_server` finds one for this home
with the same answer-shaping settings, and it answers ``/health`` at once with this graphrag version;
otherwise, or when the server cannot serve the request (gone, wrong key, rate limit), the command does
the work itself. An error about the request itself (an unknown collection) is reported as the local
command would report it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from graphrag import __version__
from graphrag.config import Settings
from graphrag.errors import ServiceError, UserError

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 2.0  # a server still loading its models does not answer: search locally instead
#: Answers that say this server will not serve this caller, though the local command could.
_NOT_FOR_US = frozenset({401, 403, 429})


def search(settings: Settings, body: dict[str, Any]) -> dict[str, Any] | None:
    """The REST search response for ``body`` from the home's server, or None when the caller should
    search locally."""
    from graphrag.api.running import find_server

    record = find_server(settings)
    if record is None:
        return None
    key = settings.api_key.get_secret_value() if settings.api_key else None
    if record.keys and not key:
        log.debug("the server at %s wants an API key and GRAPHRAG_API_KEY is unset: searching locally", record.url)
        return None
    return asyncio.run(_search(record.url, key, body))


async def _search(url: str, key: str | None, body: dict[str, Any]) -> dict[str, Any] | None:
    import httpx

    from graphrag.client import APIError, GraphRAGClient

    async with GraphRAGClient(url, key) as client:
        try:
            health = await client.request("GET", "/health", timeout=PROBE_TIMEOUT_S)
        except (httpx.HTTPError, APIError, ValueError) as exc:
            log.debug("the server at %s does not answer (%s): searching locally", url, exc)
            return None
        if health.get("status") != "ok" or health.get("version") != __version__:
            log.debug("the server at %s runs graphrag %s: searching locally", url, health.get("version"))
            return None
        try:
            response: dict[str, Any] = await client.request("POST", "/search", json=body)
        except httpx.HTTPError as exc:
            log.debug("the server at %s went away (%s): searching locally", url, exc)
            return None
        except APIError as exc:
            if exc.status_code in _NOT_FOR_US:
                log.debug("the server at %s answered %d: searching locally", url, exc.status_code)
                return None
            if exc.status_code < 500:
                raise UserError(exc.detail) from None
            raise ServiceError(exc.detail) from None
        log.debug("searched through the server at %s", url)
        return response
