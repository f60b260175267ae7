"""``graphrag aliases --collection C``: record the abbreviations a collection's stored documents define
on their entities, for query expansion (documents ingested before aliases were kept have none).

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
    """Add the ``aliases`` command to the ``graphrag`` subparsers."""
    parser = sub.add_parser("aliases", help="record the abbreviations stored documents define (query expansion)")
    parser.add_argument("--collection", action="append", required=True, help="a collection (repeatable)")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=cmd_aliases)


def cmd_aliases(args: argparse.Namespace, settings: Settings) -> int:
    """Backfill the entity aliases of each ``--collection``."""
    from graphrag.errors import InvalidInput
    from graphrag.models import is_collection_name

    for name in args.collection:
        if not is_collection_name(name):
            raise InvalidInput(f"invalid collection name {name!r}")

    from graphrag.ingest.alias_backfill import backfill_aliases
    from graphrag.runtime import open_services

    async def run() -> list[dict[str, Any]]:
        async with open_services(settings) as rt:
            await rt.postgres.require_collections(args.collection)
            return [(await backfill_aliases(rt.postgres, rt.neo4j, c)).to_dict() for c in args.collection]

    reports = asyncio.run(run())
    if args.json:
        print(json.dumps({r["collection"]: r for r in reports}, indent=2))
    else:
        for r in reports:
            print(f"{r['collection']}: {r['documents']} documents read; {r['aliases']} aliases added to "
                  f"{r['entities']} entities in {r['seconds']:.1f}s")
    return 0
