"""``graphrag communities``: compute a collection's communities and reports, or list the stored ones."""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag.config import Settings


def _positive_float(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 0 < number <= 100:
        raise argparse.ArgumentTypeError("must be above 0 and at most 100")
    return number


def _int_range(low: int, high: int) -> Any:
    def parse(value: str) -> int:
        try:
            number = int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
        if not low <= number <= high:
            raise argparse.ArgumentTypeError(f"must be from {low} to {high}")
        return number

    return parse


async def recompute(rt: Any, collection: str, args: argparse.Namespace | None = None) -> dict[str, Any]:
    """Compute ``collection``'s communities with the runtime's stores and models (the report model is
    ``GRAPHRAG_COMMUNITY_REPORT_MODEL`` when set)."""
    from graphrag.communities.build import compute_communities
    from graphrag.communities.detect import DetectOptions

    settings = rt.settings
    seed = getattr(args, "seed", None)
    options = DetectOptions(
        levels=getattr(args, "levels", None) or 2,
        resolution=getattr(args, "resolution", None) or 1.0,
        seed=42 if seed is None else int(seed),
        min_size=getattr(args, "min_size", None) or 3,
    )
    return await compute_communities(rt.postgres, rt.neo4j, rt.embedders, collection, options=options,
                                     report_model=settings.community_report_model,
                                     report_limit=settings.community_report_limit)


def cmd_communities(args: argparse.Namespace, settings: Settings) -> int:
    from graphrag.entities import check_collection
    from graphrag.errors import InvalidInput
    from graphrag.runtime import open_services

    if not args.collection:
        raise InvalidInput("give --collection C")
    check_collection(args.collection)

    async def run() -> Any:
        async with open_services(settings) as rt:
            if args.show:
                from graphrag.communities.build import list_communities

                await rt.postgres.require_collections([args.collection])
                return await list_communities(rt.postgres, rt.neo4j, [args.collection], level=args.level,
                                              limit=args.limit)
            return await recompute(rt, args.collection, args)

    data = asyncio.run(run())
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    elif args.show:
        if not data:
            print(f"no communities in {args.collection!r}: run `graphrag communities --collection {args.collection}`")
        for c in data:
            stale = "  (stale)" if c["stale"] else ""
            print(f"L{c['level']} {c['size']:>5} entities  rank {c['rank']:>9}  {c['title']}  [{c['id']}]{stale}")
    else:
        levels = ", ".join(f"level {k}: {v}" for k, v in data["levels"].items()) or "none"
        print(f"{data['collection']}: {data['communities']} communities ({levels}) over {data['entities']} entities "
              f"of {data['graph_entities']} related ones; {data['generated_reports']} reports written by the model; "
              f"{data['seconds']:.1f}s")
    return 0


def add_parser(sub: Any) -> None:
    """Register ``graphrag communities`` on the CLI's subparsers."""
    parser = sub.add_parser("communities", help="compute a collection's entity communities and their reports "
                            "(the global search mode ranks them)")
    parser.add_argument("--collection", required=True)
    parser.add_argument("--levels", type=_int_range(1, 4), default=2,
                        help="hierarchy depth: level 0 coarse, each next level splits the one above (default 2)")
    parser.add_argument("--resolution", type=_positive_float, default=1.0,
                        help="Leiden resolution: higher gives more, smaller communities (default 1.0)")
    parser.add_argument("--seed", type=_int_range(0, 2**31 - 1), default=42,
                        help="random seed: the same graph and seed give the same communities (default 42)")
    parser.add_argument("--min-size", type=_int_range(1, 1000), default=3,
                        help="smallest community kept, in entities (default 3)")
    parser.add_argument("--show", action="store_true", help="list the stored communities instead of computing")
    parser.add_argument("--level", type=_int_range(0, 3), help="--show: only this level")
    parser.add_argument("--limit", type=_int_range(1, 10000), default=50, help="--show: at most this many")
    parser.add_argument("--json", action="store_true")
    parser.set_defaults(func=cmd_communities)
