"""``graphrag services up|down|status`` and the endpoints every other command connects to.

With ``GRAPHRAG_POSTGRES_DSN`` / ``GRAPHRAG_NEO4J_URI`` set, the external servers are used and no
local one is ever started; otherwise the local servers of ``GRAPHRAG_HOME`` are (started on demand).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from graphrag.config import Settings
from graphrag.services.common import home_lock
from graphrag.services.local_neo4j import LocalNeo4j
from graphrag.services.local_postgres import LocalPostgres

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Endpoints:
    """Where the stores are and how to log in (secrets included: never log this object)."""

    postgres_dsn: str
    neo4j_uri: str
    neo4j_user: str
    neo4j_password: str

    def __repr__(self) -> str:  # keep secrets out of tracebacks and logs
        return f"Endpoints(neo4j_uri={self.neo4j_uri!r}, neo4j_user={self.neo4j_user!r})"


def _lock_timeout(settings: Settings) -> float:
    # Long enough for a holder to start both servers; a killed holder releases the lock at once.
    return 3 * settings.service_start_timeout


def up(settings: Settings) -> dict[str, Any]:
    """Start whichever local services are configured (idempotent) and return the status.

    Holds the home's lock, so concurrent calls start one pair of servers and the later ones find it
    running. Each server comes back on its recorded port when free, else the configured one, else any.
    """
    settings.home_dir.mkdir(parents=True, exist_ok=True)
    if settings.uses_local_postgres or settings.uses_local_neo4j:
        with home_lock(settings.home_dir, _lock_timeout(settings)):
            used: set[int] = set()
            if settings.uses_local_postgres:
                used.add(LocalPostgres(settings).start())
            if settings.uses_local_neo4j:
                used.update(LocalNeo4j(settings).start(avoid_ports=used))
    return status(settings)


def down(settings: Settings) -> dict[str, bool]:
    """Stop the local services of this home (under its lock); returns which ones were running."""
    if not (settings.uses_local_postgres or settings.uses_local_neo4j):
        return {"postgres": False, "neo4j": False}
    with home_lock(settings.home_dir, _lock_timeout(settings)):
        return {
            "postgres": LocalPostgres(settings).stop() if settings.uses_local_postgres else False,
            "neo4j": LocalNeo4j(settings).stop() if settings.uses_local_neo4j else False,
        }


def endpoints(settings: Settings, *, start: bool = True) -> Endpoints:
    """Connection details, starting local services first when ``start`` and they are down."""
    if start and (settings.uses_local_postgres or settings.uses_local_neo4j):
        up(settings)
    if settings.postgres_dsn is not None:
        dsn = settings.postgres_dsn.get_secret_value()
    else:
        local = LocalPostgres(settings)
        port = local.running_port()
        dsn = local.dsn(port) if port else ""
    if settings.neo4j_uri is not None:
        uri = settings.neo4j_uri
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
    else:
        neo = LocalNeo4j(settings)
        ports = neo.ports()
        uri = f"bolt://127.0.0.1:{ports[0]}" if ports else ""
        password = neo.password()
    return Endpoints(dsn, uri, settings.neo4j_user, password)


async def _external_status(settings: Settings) -> dict[str, Any]:
    from graphrag.errors import GraphRAGError
    from graphrag.stores.neo4j import Neo4jStore
    from graphrag.stores.postgres import PostgresStore, redact_dsn

    result: dict[str, Any] = {}
    if settings.postgres_dsn is not None:
        dsn = settings.postgres_dsn.get_secret_value()
        entry: dict[str, Any] = {"running": False, "dsn": redact_dsn(dsn), "version": "", "pgvector": "",
                                 "data_dir": ""}
        try:
            store = await PostgresStore.connect(dsn, min_size=1, max_size=1)
            health = await store.health()
            await store.close()
            entry.update(running=health.ok, version=health.version, pgvector=health.pgvector)
        except GraphRAGError as exc:
            entry["error"] = exc.message
        result["postgres"] = entry
    if settings.neo4j_uri is not None:
        uri = settings.neo4j_uri
        neo: dict[str, Any] = {"running": False, "bolt_uri": uri, "http_url": "", "browser_url": "",
                               "version": "", "edition": "", "data_dir": ""}
        password = settings.neo4j_password.get_secret_value() if settings.neo4j_password else ""
        try:
            graph = await Neo4jStore.connect(uri, settings.neo4j_user, password, settings.neo4j_database)
            graph_health = await graph.health()
            await graph.close()
            neo.update(running=graph_health.ok, version=graph_health.version, edition=graph_health.edition)
        except GraphRAGError as exc:
            neo["error"] = exc.message
        result["neo4j"] = neo
    return result


def status(settings: Settings) -> dict[str, Any]:
    """The ``services status --json`` document (contract in docs/architecture.md)."""
    result: dict[str, Any] = {}
    if settings.uses_local_postgres:
        result["postgres"] = LocalPostgres(settings).status()
    if settings.uses_local_neo4j:
        result["neo4j"] = LocalNeo4j(settings).status()
    if not (settings.uses_local_postgres and settings.uses_local_neo4j):
        result.update(asyncio.run(_external_status(settings)))
    return {"postgres": result["postgres"], "neo4j": result["neo4j"]}
