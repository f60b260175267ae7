"""``GET /suggest``: search-as-you-type completions (entity names, document titles, key phrases)."""

from __future__ import annotations

from typing import Annotated, Literal

from litestar import get
from litestar.params import Parameter
from pydantic import Field

from graphrag.api.openapi import problems
from graphrag.api.routes import Caller, Rt, checked
from graphrag.api.schemas import _Out
from graphrag.entities import check_collection
from graphrag.search import suggest as suggestions


class Suggestion(_Out):
    text: str = Field(description="the completion, as written in the documents")
    kind: Literal["entity", "title", "phrase"]
    score: float = Field(description="ranking score: log of the documents it occurs in, plus small priors "
                                     "for the kind and for an exact match")
    documents: int = Field(description="documents it occurs in (the largest count over its collections)")
    collections: list[str]


class Suggestions(_Out):
    query: str
    suggestions: list[Suggestion]
    took_ms: float


def _names(values: list[str] | None) -> list[str] | None:
    """``collections=a,b`` and ``collections=a&collections=b`` alike."""
    if not values:
        return None
    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    return [check_collection(n) or n for n in names] or None


@get("/suggest", summary="Suggestions for a typed prefix", tags=["search"],
     responses=problems(400, 401, 403, 404, 429, 503))
async def suggest(
    rt: Rt,
    caller: Caller,
    q: Annotated[str, Parameter(description="What the user typed so far (a prefix of a term).",
                                min_length=1, max_length=200)],
    collections: Annotated[list[str] | None, Parameter(
        description="Only these collections (repeat the parameter or separate names by commas).")] = None,
    limit: Annotated[int, Parameter(ge=1, le=suggestions.MAX_LIMIT, description="Number of suggestions.")] = 10,
) -> Suggestions:
    """Completions of ``q`` from the entity names, document titles and key phrases of the collections
    the caller may read, each with its kind and a score, best first."""
    named = _names(collections)
    scope = caller.readable(named)
    await rt.postgres.require_collections(named)
    return checked(Suggestions, await suggestions.suggest(rt.postgres, q, collections=scope, limit=limit))
