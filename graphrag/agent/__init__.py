"""Agent tools over the knowledge base: a pydantic-ai toolset, a ready agent, and an MCP server.

::

    from graphrag.agent import AgentDeps, build_agent
    async with open_services(Settings()) as rt:
        agent = build_agent("openai:gpt-4o")
        result = await agent.run("Who founded Apex Logistics?", deps=AgentDeps(rt))

``graphrag mcp`` serves the same tools to MCP clients (:mod:`graphrag.agent.mcp`).
"""

from graphrag.agent.agent import INSTRUCTIONS, build_agent
from graphrag.agent.deps import AgentDeps
from graphrag.agent.tools import TOOLS, build_toolset, toolset

__all__ = ["AgentDeps", "INSTRUCTIONS", "TOOLS", "build_agent", "build_toolset", "toolset"]
