"""``graphrag mcp``: the agent tools served to MCP clients over stdio (``graphrag serve`` serves them
over Streamable HTTP too, at ``/mcp``: :mod:`graphrag.api.mcp_http`).

The tools, their descriptions and their input schemas are the ones the pydantic-ai toolset derives from
:mod:`graphrag.agent.tools`; a call validates its arguments with that schema and runs the same function.
The ``answer`` tool (the server's own model answers, with citations) is listed when ``GRAPHRAG_ANSWER_MODEL``
is set. The runtime is opened once for the server's lifetime. Stdout is the protocol: everything else (logs,
stray prints of libraries) goes to stderr, which the MCP stdio transport arranges by diverting fd 1.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager, suppress
from typing import Any, TypeVar

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from pydantic import ValidationError

import graphrag
from graphrag.agent.agent import INSTRUCTIONS
from graphrag.agent.deps import AgentDeps
from graphrag.agent.tools import ANSWER_TOOLS, TOOLS, build_toolset
from graphrag.config import Settings
from graphrag.errors import GraphRAGError, UserError, one_line
from graphrag.runtime import Runtime, open_services

log = logging.getLogger(__name__)
State = TypeVar("State")

SERVER_NAME = "graphrag"
ALL_TOOLS = {**TOOLS, **ANSWER_TOOLS}
_schemas = build_toolset(answer=True)  # every tool's description and argument validator


def list_tools(*, answer: bool = False) -> list[Tool]:
    """The MCP descriptions of the agent tools (schemas from the pydantic-ai toolset); with ``answer``, the
    ``answer`` tool too."""
    out = []
    for name, tool in _schemas.tools.items():
        if name in ANSWER_TOOLS and not answer:
            continue
        spec = tool.tool_def
        out.append(Tool(name=name, description=spec.description, input_schema=spec.parameters_json_schema,
                        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False)))
    return out


async def call_tool(deps: AgentDeps, name: str, arguments: dict[str, Any] | None) -> CallToolResult:
    """Run one tool; bad input and failures come back as an error result (``isError``), never as a raise."""
    if name not in ALL_TOOLS:
        return _error(f"unknown tool {name!r}; the tools are {', '.join(TOOLS)}")
    try:
        kwargs = _schemas.tools[name].function_schema.validator.validate_python(arguments or {})
    except ValidationError as exc:
        return _error(f"invalid arguments for {name}: {_problems(exc)}")
    try:
        result = await ALL_TOOLS[name](deps, **kwargs)
    except UserError as exc:
        log.info("tool %s rejected its arguments: %s", name, exc.message)
        return _error(exc.message)
    except GraphRAGError as exc:
        log.warning("tool %s failed: %s", name, exc.message)
        return _error(f"{name} failed: {exc.message}")
    except Exception as exc:  # noqa: BLE001 - one failing call must not end the session
        log.exception("tool %s raised", name)
        return _error(f"{name} failed: internal error ({type(exc).__name__}: {one_line(exc)})")
    data = result.model_dump(mode="json")
    return CallToolResult(content=[TextContent(type="text", text=json.dumps(data, ensure_ascii=False))],
                          structured_content=data)


def build_server(settings: Settings) -> Server[AgentDeps]:
    """A low-level MCP server whose lifespan opens the runtime (and loads the models in the background)."""

    @asynccontextmanager
    async def lifespan(_: Server[AgentDeps]) -> AsyncIterator[AgentDeps]:
        async with open_services(settings) as rt:
            # Loading the models takes a while; start now so the first search does not wait for all of it.
            warm = asyncio.create_task(_warm_up(rt))
            try:
                yield AgentDeps(rt)
            finally:
                warm.cancel()
                with suppress(asyncio.CancelledError):
                    await warm

    return tool_server(lifespan, lambda ctx: ctx.lifespan_context, answer=settings.answer_model is not None)


def tool_server(lifespan: Callable[[Server[State]], AbstractAsyncContextManager[State]],
                deps_of: Callable[[ServerRequestContext[State]], AgentDeps], *, answer: bool = False) -> Server[State]:
    """An MCP server of the agent tools: ``lifespan`` sets up its state once, ``deps_of`` gives each call
    its :class:`AgentDeps` (the same for every call over stdio, the caller's scope over HTTP); ``answer``
    lists the ``answer`` tool (the server has an answer model)."""

    async def on_list_tools(ctx: ServerRequestContext[State],
                            params: PaginatedRequestParams | None) -> ListToolsResult:
        return ListToolsResult(tools=list_tools(answer=answer))

    async def on_call_tool(ctx: ServerRequestContext[State], params: CallToolRequestParams) -> CallToolResult:
        try:
            deps = deps_of(ctx)
        except GraphRAGError as exc:
            return _error(exc.message)
        return await call_tool(deps, params.name, params.arguments)

    return Server(SERVER_NAME, version=graphrag.__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
                  on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def serve(settings: Settings) -> None:
    """Serve the tools on stdin/stdout until the client closes the connection."""
    server = build_server(settings)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def serve_stdio(settings: Settings) -> None:
    """Entry point of ``graphrag mcp``: run :func:`serve` in a fresh event loop."""
    # Logs must never reach stdout; route any handler the host set on a std stream to stderr.
    _logs_to_stderr()
    anyio.run(serve, settings, backend="asyncio")


async def _warm_up(rt: Runtime) -> None:
    try:
        await rt.router()
    except Exception as exc:  # noqa: BLE001 - the first tool call will report the problem
        log.warning("loading the models failed: %s", one_line(exc))


def _logs_to_stderr() -> None:
    root = logging.getLogger()
    for handler in root.handlers:
        if isinstance(handler, logging.StreamHandler) and getattr(handler, "stream", None) is sys.stdout:
            handler.setStream(sys.stderr)
    if not root.handlers:
        logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                            format="%(levelname)s %(name)s: %(message)s")


def _problems(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())


def _error(message: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)
