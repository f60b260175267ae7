"""Follow the local servers of a home when they come back on other ports.

A long-running process (the API, the MCP server) keeps its Neo4j driver and its asyncpg pool. When a
local server is restarted with ``graphrag services up`` it may come back on another port (its
recorded one was taken meanwhile). So the driver and the pool ask :class:`LocalAddresses` where the
server is each time they open a new connection, which they do after a connection fails: the answer is
re-read from ``$GRAPHRAG_HOME/services.json``. Connections already open are never touched, so
requests in flight are not disturbed; those to a dead server fail as they would anyway and are
replaced.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from graphrag.config import Settings
from graphrag.services.local_neo4j import LocalNeo4j
from graphrag.services.local_postgres import LocalPostgres

log = logging.getLogger(__name__)


class LocalAddresses:
    """Where this home's local servers listen now (read from the state file, never started here)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._bolt: tuple[str, int] | None = None
        self._postgres_port: int | None = None

    def _bolt_now(self) -> tuple[str, int] | None:
        ports = LocalNeo4j(self.settings).ports()
        return ("127.0.0.1", ports[0]) if ports else None

    async def neo4j_resolver(self, address: Any) -> list[tuple[str, int]]:
        """A Neo4j driver ``resolver``: the Bolt address the local server has now.

        An empty answer (the server is not running) makes the driver fail this attempt at once,
        instead of reaching whatever else may listen on the old port meanwhile.
        """
        now = await asyncio.to_thread(self._bolt_now)
        if now is None:
            log.debug("the local Neo4j is not running; not connecting")
            return []
        if self._bolt is not None and now != self._bolt:
            log.warning("the local Neo4j moved from port %s to %s; following it", self._bolt[1], now[1])
        self._bolt = now
        return [now]

    def _postgres_now(self) -> tuple[int, str] | None:
        local = LocalPostgres(self.settings)
        port = local.running_port()
        return (port, local.dsn(port)) if port else None

    async def postgres_dsn(self) -> str:
        """The DSN of the local PostgreSQL now; ``ConnectionRefusedError`` when it is not running."""
        now = await asyncio.to_thread(self._postgres_now)
        if now is None:
            raise ConnectionRefusedError("the local PostgreSQL is not running")
        port, dsn = now
        if self._postgres_port is not None and port != self._postgres_port:
            log.warning("the local PostgreSQL moved from port %s to %s; following it", self._postgres_port, port)
        self._postgres_port = port
        return dsn
