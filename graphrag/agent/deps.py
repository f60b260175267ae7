"""What every agent tool needs: the opened runtime, the caller's default collections and, for a
caller with an API key scoped to collections, the collections it may touch at all."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from graphrag.entities import check_collection
from graphrag.errors import Forbidden, InvalidInput, NotFound
from graphrag.runtime import Runtime

DEFAULT_LIMIT = 5
MAX_LIMIT = 20  # an agent's context fills up fast; more hits than this rarely help it


@dataclass
class AgentDeps:
    """Dependencies of the agent tools (pydantic-ai ``deps``, the MCP server's lifespan state).

    Attributes:
        runtime: The opened services (``graphrag.runtime.open_services``).
        collections: Collections a tool searches when the call names none; ``None`` means all.
        limit: Hits a search returns when the call gives no limit (1-20).
        allowed: The only collections the tools may read (an API key's scope, e.g. MCP over HTTP);
            ``None`` means all. Naming another is refused; ids from elsewhere look unknown.
    """

    runtime: Runtime
    collections: list[str] | None = None
    limit: int = DEFAULT_LIMIT
    allowed: frozenset[str] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or not 1 <= self.limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_LIMIT}, got {self.limit!r}")
        if self.collections is not None:
            if isinstance(self.collections, str):
                self.collections = [self.collections]
            self.collections = [c for c in self.collections if check_collection(c)] or None
        if self.allowed is not None:
            self.allowed = frozenset(self.allowed)
            self.scope(self.collections)  # default collections outside the scope are a mistake of the caller

    def scope(self, requested: Sequence[str] | None) -> list[str] | None:
        """The collections a read covers: the requested ones, else the default ones, else the allowed
        ones (``None``: all). A collection outside ``allowed`` is :class:`Forbidden`."""
        names = list(requested) if requested else self.collections
        if self.allowed is None:
            return names or None
        if not names:
            return sorted(self.allowed)
        outside = [c for c in names if c not in self.allowed]
        if outside:
            raise Forbidden(f"collection {outside[0]!r} is outside this caller's scope")
        return names

    def can_see(self, collection: str) -> bool:
        """Whether ``collection`` is inside ``allowed``."""
        return self.allowed is None or collection in self.allowed

    def check_visible(self, collection: str, what: str) -> None:
        """An object outside ``allowed`` is reported exactly like a missing one (no existence leak)."""
        if not self.can_see(collection):
            raise NotFound(what)
