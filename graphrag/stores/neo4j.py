"""Neo4j access: one AsyncDriver, the graph schema, health, and typed methods."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from neo4j import AsyncDriver, AsyncGraphDatabase, GraphDatabase
from neo4j.exceptions import AuthError, ClientError, Neo4jError, ServiceUnavailable as DriverUnavailable

from graphrag.errors import ConfigurationError, ServiceUnavailable
from graphrag.stores import queries

log = logging.getLogger(__name__)

_CONNECT_ERRORS = (DriverUnavailable, OSError)


@dataclass(frozen=True)
class Neo4jHealth:
    ok: bool
    version: str = ""
    edition: str = ""
    error: str = ""


def _auth_error(uri: str, user: str) -> ConfigurationError:
    return ConfigurationError(
        f"Neo4j at {uri} rejected user {user!r}: check GRAPHRAG_NEO4J_PASSWORD (and GRAPHRAG_NEO4J_USER)"
    )


class Neo4jStore:
    """Owns the AsyncDriver. Create with :meth:`connect`, close with :meth:`close`."""

    def __init__(self, driver: AsyncDriver, database: str) -> None:
        self.driver = driver
        self.database = database

    @classmethod
    async def connect(cls, uri: str, user: str, password: str, database: str = "neo4j") -> Neo4jStore:
        """Open the driver and verify the credentials, so a wrong password fails here, clearly."""
        driver = AsyncGraphDatabase.driver(uri, auth=(user, password), connection_timeout=10)
        try:
            await driver.verify_connectivity()
            # verify_authentication answers False (it does not raise) when the server rejects the login.
            if not await driver.verify_authentication():
                raise AuthError("rejected")
        except AuthError:
            await driver.close()
            raise _auth_error(uri, user) from None
        except ClientError as exc:
            await driver.close()
            if exc.code and ".Security." in exc.code:  # e.g. AuthenticationRateLimit after wrong passwords
                raise _auth_error(uri, user) from None
            raise
        except _CONNECT_ERRORS as exc:
            await driver.close()
            raise ServiceUnavailable(f"cannot connect to Neo4j at {uri}: {exc}") from None
        return cls(driver, database)

    async def close(self) -> None:
        await self.driver.close()

    async def run(self, file: str, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run the named Cypher statement and return its records as dicts."""
        result = await self.driver.execute_query(
            queries.cypher(file, name), parameters_=params, database_=self.database
        )
        return [record.data() for record in result.records]

    async def apply_schema(self, wait_seconds: int = 120) -> None:
        """Create constraints and indexes (idempotent) and wait until they are online."""
        for statement in queries.cypher_script("schema"):
            await self.driver.execute_query(statement, database_=self.database)
        await self.run("admin", "await_indexes", seconds=wait_seconds)

    async def health(self) -> Neo4jHealth:
        """Version and edition, or the reason the server cannot be reached."""
        try:
            rows = await self.run("admin", "components")
        except (Neo4jError, *_CONNECT_ERRORS) as exc:
            return Neo4jHealth(ok=False, error=str(exc))
        kernel = next((r for r in rows if r["name"] == "Neo4j Kernel"), rows[0] if rows else {})
        return Neo4jHealth(ok=True, version=str(kernel.get("version", "")), edition=str(kernel.get("edition", "")))


def set_initial_password(uri: str, user: str, old: str, new: str) -> None:
    """Replace a fresh server's default password (the server forces this before any other query)."""
    with GraphDatabase.driver(uri, auth=(user, old), connection_timeout=10) as driver:
        with driver.session(database="system") as session:
            session.run(queries.cypher("admin", "change_initial_password"), old=old, new=new).consume()


def check_login(uri: str, user: str, password: str) -> bool:
    """True when the credentials work, False when the server rejects them."""
    with GraphDatabase.driver(uri, auth=(user, password), connection_timeout=10) as driver:
        try:
            return bool(driver.verify_authentication())
        except AuthError:
            return False
        except ClientError as exc:
            if exc.code and "AuthenticationRateLimit" in exc.code:
                raise ConfigurationError(
                    f"Neo4j at {uri} is refusing logins for a few seconds after repeated wrong passwords"
                ) from None
            raise
