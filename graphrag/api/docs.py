"""The API docs UI, served offline: Swagger UI's files come from the installed ``swagger-ui-py``
package (pinned in pyproject.toml), not from a CDN, so /schema works on a machine without internet.

Scalar (Litestar's default UI) has no package of its own on PyPI (its standalone script ships only
inside a Flask plugin), so /schema and /schema/swagger both show Swagger UI. Also here: the API-key
security schemes, so the UI's "Authorize" button and generated clients know how keys are sent.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from litestar import Router
from litestar.datastructures import CacheControlHeader
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components, Reference, SecurityRequirement, SecurityScheme
from litestar.static_files import create_static_files_router

from graphrag.errors import ConfigurationError

DOCS_PATH = "/schema"
ASSETS_PATH = f"{DOCS_PATH}/assets"
#: The files the Swagger UI page loads (everything it references is in this list).
ASSETS = ("swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-standalone-preset.js", "favicon-32x32.png")

SECURITY_SCHEMES: dict[str, SecurityScheme | Reference] = {
    "bearer": SecurityScheme(type="http", scheme="bearer",
                             description="An API key (GRAPHRAG_API_KEYS) as `Authorization: Bearer <key>`."),
    "apiKey": SecurityScheme(type="apiKey", name="X-API-Key", security_scheme_in="header",
                             description="The same API key in the `X-API-Key` header."),
}
#: Either scheme will do (a list of alternatives, as OpenAPI reads it).
SECURITY: list[SecurityRequirement] = [{"bearer": []}, {"apiKey": []}]


def swagger_ui_dir() -> Path:
    """The folder of Swagger UI's files inside the installed ``swagger_ui`` package (not imported)."""
    spec = importlib.util.find_spec("swagger_ui")
    folder = Path(next(iter(spec.submodule_search_locations or ()), "")) / "static" if spec else None
    if folder is None or not all((folder / name).is_file() for name in ASSETS):
        raise ConfigurationError("the API docs need the swagger-ui-py package: pip install 'swagger-ui-py==25.7.1'")
    return folder


def components() -> Components:
    return Components(security_schemes=SECURITY_SCHEMES)


def render_plugins() -> list[SwaggerRenderPlugin]:
    """Swagger UI at /schema and /schema/swagger, with its files from :data:`ASSETS_PATH`."""
    return [SwaggerRenderPlugin(
        js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
        css_url=f"{ASSETS_PATH}/swagger-ui.css",
        standalone_preset_js_url=f"{ASSETS_PATH}/swagger-ui-standalone-preset.js",
        favicon=f"<link rel='icon' type='image/png' href='{ASSETS_PATH}/favicon-32x32.png'>",
        path=["/", "/swagger"],
    )]


def assets_router() -> Router:
    """Serves the docs UI files (cached by browsers for a day)."""
    return create_static_files_router(path=ASSETS_PATH, directories=[swagger_ui_dir()], name="docs-assets",
                                      cache_control=CacheControlHeader(max_age=86400), include_in_schema=False)
