"""``graphrag serve``: run the REST API with uvicorn."""

from __future__ import annotations

import logging

from graphrag.config import Settings


def serve(settings: Settings, *, host: str, port: int) -> None:
    """Serve the API until interrupted. Access-log lines come from our middleware (with request ids)."""
    import uvicorn

    from graphrag.api.app import create_app

    logging.getLogger("graphrag").setLevel(logging.INFO)
    uvicorn.run(create_app(settings), host=host, port=port, access_log=False, log_level="info",
                timeout_graceful_shutdown=10)
