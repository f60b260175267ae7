"""``build_agent``: a pydantic-ai Agent that answers from the knowledge base and cites its sources."""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.models import Model
from pydantic_ai.toolsets import AbstractToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from graphrag.agent.deps import AgentDeps
from graphrag.agent.tools import build_toolset
from graphrag.entities import check_collection

INSTRUCTIONS = """\
You answer questions from a knowledge base that you reach through tools.
- Search before answering: call `search` first (or `graph_search` for questions that connect people,
  places and organisations across documents). Search again with other words if the hits do not answer.
- Answer only from the text the tools returned. If it does not contain the answer, say so; never fill
  gaps from memory.
- Cite every claim with the `citation` of the passage it comes from, in square brackets: [source], or
  [source p. N] for a page of a PDF.
- For questions about the collection as a whole (main themes, an overview), call `global_search`: it
  returns community reports, each citing its evidence chunks.
- Use `get_document` to read the text around a hit, `get_entity` for what is known about a named entity,
  `list_documents` to see what the knowledge base holds.
- Be concise."""
"""The default instructions (also served to MCP clients by ``graphrag mcp``)."""


@dataclasses.dataclass
class _DefaultScope(WrapperToolset[AgentDeps]):
    """Gives the run's deps a collection scope when they have none (``build_agent(collections=...)``)."""

    collections: list[str] | None = None

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[AgentDeps],
                        tool: ToolsetTool[AgentDeps]) -> Any:
        if self.collections and ctx.deps.collections is None:
            ctx = dataclasses.replace(ctx, deps=dataclasses.replace(ctx.deps, collections=self.collections))
        return await super().call_tool(name, tool_args, ctx, tool)


def build_agent(model: Model | str, *, instructions: str | None = None, collections: list[str] | None = None,
                toolset: AbstractToolset[AgentDeps] | None = None, retries: int = 2,
                **agent_options: Any) -> Agent[AgentDeps, str]:
    """An agent that searches the knowledge base and answers with [source] citations.

    Args:
        model: A pydantic-ai model or model string (``"openai:gpt-4o"``, ``"anthropic:claude-sonnet-4-5"``...).
        instructions: Replaces :data:`INSTRUCTIONS`.
        collections: Collections the tools search when the run's ``AgentDeps`` name none.
        toolset: Replaces the graphrag toolset (e.g. a ``filtered`` or ``prepared`` variant of it).
        retries: How often the model may retry a tool call that was rejected (bad argument, unknown id).
        **agent_options: Passed on to :class:`pydantic_ai.Agent` (``model_settings``, ``name``...).

    Run it with ``await agent.run(question, deps=AgentDeps(runtime))``.
    """
    scope = [c for c in collections if check_collection(c)] if collections else None
    tools: AbstractToolset[AgentDeps] = toolset if toolset is not None else build_toolset()
    if scope:
        tools = _DefaultScope(tools, collections=scope)
    agent: Agent[AgentDeps, str] = Agent(
        model,
        deps_type=AgentDeps,
        output_type=str,
        instructions=instructions if instructions is not None else INSTRUCTIONS,
        toolsets=[tools],
        retries=retries,
        **agent_options,
    )

    @agent.instructions
    def _scope(ctx: RunContext[AgentDeps]) -> str | None:
        # Tell the model which collections it is searching, so it can say what it could not see.
        names = ctx.deps.collections or scope
        return f"The tools search these collections by default: {', '.join(names)}." if names else None

    return agent
