"""The REST API (Litestar): ``create_app(settings)``."""

from graphrag.api.app import create_app

__all__ = ["create_app"]
