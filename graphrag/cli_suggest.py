"""``graphrag suggest``: completions of a typed prefix (``GET /suggest`` on the command line), and
``--rebuild`` to refill a collection's suggestion terms from its titles and its graph.

Kept apart from :mod:`graphrag.cli`, which only registers it; heavy modules load inside the command.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag.config import Settings


def register(sub: Any) -> None:
    """Add the ``suggest`` command to the ``graphrag`` subparsers."""
    parser = sub.add_parser("suggest", help="completions of a prefix: entity names, document titles, key phrases")
    parser.add_argument("prefix", nargs="?", help="what was typed so far")
    parser.add_argument("--collection", action="append", help="restrict to a collection (repeatable)")
    parser.add_argument("-n", "--limit", type=_limit, default=10, help="number of suggestions (1-50)")
    parser.add_argument("--rebuild", action="store_true",
                        help="fill in the suggestion terms of the --collection's documents that have none (stored "
                             "before suggestions existed, or bulk-loaded) from their titles and the graph")
    parser.add_argument("--json", action="store_true", help="the GET /suggest response shape")
    parser.set_defaults(func=cmd_suggest)


def _limit(value: str) -> int:
    from graphrag.search.suggest import MAX_LIMIT

    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 1 <= n <= MAX_LIMIT:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_LIMIT}")
    return n


def cmd_suggest(args: argparse.Namespace, settings: Settings) -> int:
    """Print the suggestions for ``args.prefix`` (or rebuild a collection's terms)."""
    from graphrag.errors import InvalidInput
    from graphrag.models import is_collection_name
    from graphrag.search import suggest as suggestions

    for name in args.collection or ():
        if not is_collection_name(name):
            raise InvalidInput(f"invalid collection name {name!r}")
    if args.rebuild:
        if args.prefix is not None or not args.collection:
            raise InvalidInput("--rebuild takes --collection (repeatable) and no prefix")
    elif args.prefix is None:
        raise InvalidInput("give the prefix to complete, e.g. graphrag suggest 'marie c'")
    else:
        suggestions.check(args.prefix, args.limit, what="the prefix")  # bad input fails before any store is opened

    from graphrag.runtime import open_services

    async def run() -> dict[str, Any]:
        async with open_services(settings) as rt:
            await rt.postgres.require_collections(args.collection)
            if args.rebuild:
                from graphrag.ingest import terms

                return {c: await terms.rebuild(rt.postgres, rt.neo4j, c) for c in args.collection}
            return await suggestions.suggest(rt.postgres, args.prefix, collections=args.collection,
                                             limit=args.limit)

    result = asyncio.run(run())
    if args.json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
    elif args.rebuild:
        for collection, counts in result.items():
            filled = counts.pop("documents")
            print(f"{collection}: {filled} document{'s' if filled != 1 else ''} filled in; "
                  + ", ".join(f"{n} {kind} terms" for kind, n in counts.items()))
    else:
        for s in result["suggestions"]:
            docs = f"{s['documents']} document{'s' if s['documents'] != 1 else ''}"
            print(f"{s['text']}\t{s['kind']}\t{s['score']:.3f}\t{docs}")
    return 0
