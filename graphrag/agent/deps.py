"""What every agent tool needs: the opened runtime and the caller's default scope."""

from __future__ import annotations

from dataclasses import dataclass

from graphrag.entities import check_collection
from graphrag.errors import InvalidInput
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
    """

    runtime: Runtime
    collections: list[str] | None = None
    limit: int = DEFAULT_LIMIT

    def __post_init__(self) -> None:
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or not 1 <= self.limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be an integer from 1 to {MAX_LIMIT}, got {self.limit!r}")
        if self.collections is not None:
            if isinstance(self.collections, str):
                self.collections = [self.collections]
            self.collections = [c for c in self.collections if check_collection(c)] or None
