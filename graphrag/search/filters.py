"""The JSON filter language's input: a filter given as a dict or a JSON string (CLI, REST, agent tools).

The language itself, and its compilation to SQL with parameters, is described in
:mod:`graphrag.stores.filters`.
"""

from __future__ import annotations

import json
from typing import Any

from graphrag.errors import InvalidInput


def parse_filter(value: Any) -> dict[str, Any] | None:
    """Accept a filter as a dict or a JSON string (CLI); None or {} means no filter."""
    if value is None or value == {} or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"filter is not valid JSON: {exc.msg} at position {exc.pos}") from None
    if not isinstance(value, dict):
        raise InvalidInput("filter must be a JSON object")
    return value or None
