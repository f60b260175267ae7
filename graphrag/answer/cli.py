"""``graphrag ask "QUESTION"``: a grounded answer with citations on the command line.

The text output streams the answer as the model writes it, then lists the cited sources and any
sentence the citation check did not find supported; ``--json`` prints the ``POST /answer`` response.
Heavy modules are imported by the command itself, so building the parser stays cheap.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag.config import Settings

MODES = ["auto", "vector", "keyword", "hybrid", "graph"]


def _hits(value: str) -> int:
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 1 <= k <= 20:
        raise argparse.ArgumentTypeError("must be from 1 to 20")
    return k


def add_ask_parser(sub: Any) -> None:
    """Add the ``ask`` command to the CLI's subparsers."""
    ask = sub.add_parser("ask", help="answer a question from the knowledge base, citing the passages "
                                     "(needs GRAPHRAG_ANSWER_MODEL)")
    ask.add_argument("question")
    ask.add_argument("--collection", action="append", help="restrict to a collection (repeatable)")
    ask.add_argument("--mode", default="auto", choices=MODES, help="how to retrieve the context (default: auto)")
    ask.add_argument("-k", type=_hits, default=5, help="hits given to the model as sources [1]..[k] (1-20, default 5)")
    ask.add_argument("--filter", help='JSON metadata filter, e.g. \'{"year": {"$gte": 2020}}\'')
    ask.add_argument("--drop-unsupported", action="store_true",
                     help="cut sentences the citation check finds unsupported out of the answer (default: flag them)")
    ask.add_argument("--json", action="store_true", help="the REST /answer response")
    ask.set_defaults(func=cmd_ask)


def cmd_ask(args: argparse.Namespace, settings: Settings) -> int:
    """Answer one question; exit 0 even when sentences were flagged (they are listed)."""
    from graphrag.answer.model import require_model
    from graphrag.errors import InvalidInput
    from graphrag.models import is_collection_name
    from graphrag.search.config import validate_query
    from graphrag.search.filters import parse_filter
    from graphrag.stores.filters import compile_filter

    # Without a model, or with bad input, fail here: before any store is opened or model loaded.
    require_model(settings)
    validate_query(args.question)
    filters = parse_filter(args.filter)
    compile_filter(filters)
    for name in args.collection or ():
        if not is_collection_name(name):
            raise InvalidInput(f"invalid collection name {name!r}")

    from graphrag.answer import service
    from graphrag.errors import GraphRAGError
    from graphrag.runtime import open_services

    options = service.AnswerOptions(mode=args.mode, limit=args.k, collections=args.collection, filters=filters,
                                    drop_unsupported=args.drop_unsupported)

    async def run() -> dict[str, Any]:
        async with open_services(settings) as rt:
            await rt.postgres.require_collections(args.collection)
            prepared = await service.prepare(rt, args.question, options)
            if args.json:
                return await service.complete(rt, prepared)
            done: dict[str, Any] = {}
            hits: list[dict[str, Any]] = []
            live = not args.drop_unsupported  # a dropped sentence must not have been shown already
            async for name, data in service.stream(rt, prepared):
                if name == "hits":
                    hits = data["hits"]
                elif name == "delta" and live:
                    sys.stdout.write(data["text"])
                    sys.stdout.flush()
                elif name == "error":
                    if live:
                        print()
                    raise GraphRAGError(data["detail"])
                elif name == "done":
                    done = data
            done["hits"] = hits
            if live:
                print()
            else:
                print(done["answer"])
            return done

    result = asyncio.run(run())
    if args.json:
        print(json.dumps(result, indent=2, default=str))
        return 0
    _print_sources(result)
    return 0


def _print_sources(result: dict[str, Any]) -> None:
    if result["citations"]:
        print("\nSources:")
        for c in result["citations"]:
            print(f"  [{c['n']}] {c['title']} ({c['source']})")
    if result["unsupported"]:
        verb = "dropped" if result["dropped"] else "flagged"
        print(f"\nNot supported by the cited sources ({verb}):")
        for u in result["unsupported"]:
            cites = "".join(f"[{n}]" for n in u["cited"]) or "no citation"
            print(f"  {u['sentence']}  ({cites}: {u['reason'].replace('_', ' ')})")
