"""Ask the knowledge base a question through an LLM agent that searches, reads and cites.

    python examples/agent_chat.py "Who founded Apex Logistics?" --model openai:gpt-4o --collection demo

The model string is any pydantic-ai model you have credentials for (e.g. ``OPENAI_API_KEY`` for
``openai:...``, ``ANTHROPIC_API_KEY`` for ``anthropic:...``); the provider's package must be installed
(``pip install "pydantic-ai-slim[openai]"``). The stores come from the usual settings (``GRAPHRAG_*``,
``.env``); local services are started if they are not running.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys

from pydantic_ai.exceptions import AgentRunError, UserError

from graphrag.agent import AgentDeps, build_agent
from graphrag.config import Settings
from graphrag.errors import GraphRAGError
from graphrag.runtime import open_services


async def ask(question: str, model: str, collections: list[str] | None, verbose: bool) -> str:
    """Open the runtime, run the agent once and return its answer."""
    agent = build_agent(model)  # first: a bad model string or a missing provider package fails fast
    async with open_services(Settings()) as rt:
        result = await agent.run(question, deps=AgentDeps(rt, collections=collections))
        if verbose:
            for message in result.all_messages():
                for part in message.parts:
                    if part.part_kind == "tool-call":
                        print(f"  -> {part.tool_name}({part.args_as_json_str()})", file=sys.stderr)
        return result.output


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("question")
    parser.add_argument("--model", required=True, help="pydantic-ai model string, e.g. openai:gpt-4o")
    parser.add_argument("--collection", action="append", dest="collections", metavar="C",
                        help="collection to search (repeatable; default: all)")
    parser.add_argument("-v", "--verbose", action="store_true", help="show the tool calls on stderr")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the embedding and spaCy models are packaged
    try:
        print(asyncio.run(ask(args.question, args.model, args.collections, args.verbose)))
    except GraphRAGError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    except (UserError, AgentRunError, ImportError) as exc:  # model string, credentials, provider package
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
