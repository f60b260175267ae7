"""Named search recipes: a frozen base config per mode. Requests derive from them with ``model_copy``."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from pydantic import ValidationError

from graphrag.errors import InvalidInput
from graphrag.search.config import SearchConfig

RECIPES = MappingProxyType({
    # Everything fused. Graph evidence is weighted a little lower: it is recall-oriented.
    "auto": SearchConfig(legs=("vector", "keyword", "graph"), weights={"vector": 1.0, "keyword": 1.0, "graph": 0.8}),
    "hybrid": SearchConfig(legs=("vector", "keyword")),
    "vector": SearchConfig(legs=("vector",)),
    "keyword": SearchConfig(legs=("keyword",)),
    "graph": SearchConfig(legs=("graph",)),
})


def recipe(mode: str) -> SearchConfig:
    """The base config of a mode; a clear error for an unknown one."""
    try:
        return RECIPES[mode]
    except KeyError:
        raise InvalidInput(f"unknown mode {mode!r}; choose one of {', '.join(RECIPES)}") from None


def derive(mode: str, **options: Any) -> SearchConfig:
    """The mode's recipe with the request's options (None values keep the recipe's)."""
    base = recipe(mode)
    update = {k: v for k, v in options.items() if v is not None}
    try:
        # model_copy skips validation, so validate the merged result explicitly.
        return SearchConfig.model_validate({**base.model_dump(), **update})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "options"
        raise InvalidInput(f"{where}: {first['msg']}") from None
