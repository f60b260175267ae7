"""The REST API (Litestar): ``create_app(settings)``.

``create_app`` is imported on first use, so that reading :mod:`graphrag.api.schemas` (the Python
client does) does not load the server's stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag.api.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from graphrag.api.app import create_app

        return create_app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
