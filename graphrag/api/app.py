"""``create_app(settings)``: the Litestar application. The lifespan opens the stores and loads the
models once per process; controllers reach them through the ``rt`` dependency."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from litestar import Litestar
from litestar.config.cors import CORSConfig
from litestar.di import Provide
from litestar.openapi import OpenAPIConfig
from litestar.plugins.pydantic import PydanticPlugin

from graphrag import __version__
from graphrag.api import docs, problems, routes, suggest_routes
from graphrag.api.answer import AnswerController
from graphrag.api.jobs import JobController
from graphrag.api.collections import CollectionController
from graphrag.api.portable import CollectionTransferController
from graphrag.api.auth import RateLimiter, parse_keys
from graphrag.api.mcp_http import McpEndpoint
from graphrag.api.middleware import RequestContext
from graphrag.api.observe import observability
from graphrag.config import Settings
from graphrag.ingest.ingest_models import IngestModels
from graphrag.ingest.outbox import OutboxWorker
from graphrag.jobs import JobWorker
from graphrag.runtime import Runtime, open_services

log = logging.getLogger("graphrag.api")


def create_app(settings: Settings, *, start_local: bool = True, runtime: Runtime | None = None,
               models: IngestModels | None = None) -> Litestar:
    """The REST API. With ``runtime`` given, the app uses it (and does not close it); otherwise the
    lifespan opens the stores (starting local services when configured and ``start_local``), sharing
    ``models`` when they are already loaded."""
    app_state: Any = None  # the app's State, once the lifespan has started

    @asynccontextmanager
    async def serving(rt: Runtime) -> AsyncIterator[None]:
        app_state.runtime = rt
        await rt.router()  # load the models before the first request
        # Graph writes left pending by a Neo4j outage drain by themselves while the API runs.
        worker = OutboxWorker(rt.outbox, interval=settings.outbox_interval_s)
        worker.start()
        # Documents posted with `Prefer: respond-async` are ingested by whichever process claims them.
        jobs = JobWorker(rt, settings)
        app_state.job_worker = jobs
        jobs.start()
        try:
            async with mcp.run(rt):  # the agent tools over MCP Streamable HTTP, on this runtime
                yield
        finally:
            await jobs.stop()
            await worker.stop()
            observed.process_exiting()

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        nonlocal app_state
        app_state = app.state
        if runtime is not None:
            async with serving(runtime):
                yield
            return
        async with open_services(settings, start_local=start_local, models=models) as rt, serving(rt):
            log.info("API ready")
            yield

    mcp = McpEndpoint(settings.cors_origins)

    api_keys = parse_keys(settings.api_keys.get_secret_value() if settings.api_keys else None)
    limiter = RateLimiter(settings.rate_limit_per_minute, settings.rate_limit_burst)
    observed = observability(settings)
    max_body = int(settings.max_file_mb * 1024 * 1024) + 1024 * 1024  # the file plus multipart framing
    app = Litestar(
        route_handlers=[routes.SearchController, routes.DocumentController, routes.EntityController, JobController,
                        CollectionTransferController, CollectionController, routes.health_check, routes.ready,
                        routes.stats,
                        suggest_routes.suggest, docs.assets_router(), AnswerController, *observed.handlers,
                        mcp.route()],
        dependencies={"rt": Provide(routes.runtime, sync_to_thread=False),
                      "caller": Provide(routes.principal, sync_to_thread=False)},
        lifespan=[lifespan],
        exception_handlers={Exception: problems.handle},
        cors_config=CORSConfig(allow_origins=list(settings.cors_origins)) if settings.cors_origins else None,
        openapi_config=OpenAPIConfig(
            title="graphrag",
            version=__version__,
            description="Hybrid knowledge-graph RAG: vector, keyword (BM25) and graph search over your documents, "
            "fused into one ranked list with provenance. Errors are application/problem+json.",
            path=docs.DOCS_PATH,
            render_plugins=docs.render_plugins(),
            components=docs.components(),
            # Keys are declared only where the server asks for them, so clients of an open server need none.
            security=docs.SECURITY if api_keys else None,
            # The handlers' docstrings are written for API users: each endpoint's description on the docs page.
            use_handler_docstrings=True,
        ),
        request_max_body_size=max_body,
        # Strict: what the schema does not allow ("5" for a limit, 0 for a boolean) is a 400, not coerced.
        plugins=[PydanticPlugin(validate_strict=True), *observed.plugins],
        middleware=observed.middleware,
        # GRAPHRAG_LOG_FORMAT: Litestar's text format plus the process id (which worker wrote a line), or JSON.
        logging_config=observed.logging_config,
        debug=False,
    )
    # Around the whole app rather than per route: answers of the router itself (404, 405) get a
    # request id and an access-log line too.
    # Litestar's ASGI types are narrower TypedDicts than the middleware's plain mappings.
    app.asgi_handler = RequestContext(app.asgi_handler, api_keys=api_keys,  # type: ignore[assignment,arg-type]
                                      limiter=limiter, on_reject=observed.on_reject)
    return app


def app_factory() -> Any:
    """For ``uvicorn --factory graphrag.api.app:app_factory``: settings from the environment."""
    return create_app(Settings())
