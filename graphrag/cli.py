"""The ``graphrag`` command line. Each command builds Settings, opens what it needs, makes one call.

Errors are one line on stderr: exit 2 for bad input, 1 for service problems.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from graphrag.config import Settings
from graphrag.errors import GraphRAGError, UserError


def _print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, default=str))


def _services_text(status: dict[str, Any]) -> str:
    pg, neo = status["postgres"], status["neo4j"]
    lines = [
        f"PostgreSQL  {'running' if pg['running'] else 'stopped'}  {pg['version']} pgvector {pg['pgvector']}",
        f"  dsn       {pg['dsn'] or '-'}",
        f"  data      {pg['data_dir'] or '-'}",
        f"Neo4j       {'running' if neo['running'] else 'stopped'}  {neo['version']} {neo['edition']}",
        f"  bolt      {neo['bolt_uri'] or '-'}",
        f"  browser   {neo['browser_url'] or '-'}",
        f"  data      {neo['data_dir'] or '-'}",
    ]
    for name in ("postgres", "neo4j"):
        if status[name].get("error"):
            lines.append(f"{name}: {status[name]['error']}")
    return "\n".join(lines)


def cmd_services(args: argparse.Namespace, settings: Settings) -> int:
    from graphrag.services import manager

    if args.action == "up":
        status = manager.up(settings)
    elif args.action == "down":
        stopped = manager.down(settings)
        if args.json:
            _print_json({"stopped": stopped})
        else:
            for name, was_running in stopped.items():
                print(f"{name}: {'stopped' if was_running else 'was not running'}")
        return 0
    else:
        status = manager.status(settings)
    if args.json:
        _print_json(status)
    else:
        print(_services_text(status))
        if status["neo4j"]["running"] and settings.uses_local_neo4j:
            secret = settings.home_dir / "secrets" / "neo4j_password"
            where = "GRAPHRAG_NEO4J_PASSWORD" if settings.neo4j_password else str(secret)
            print(f"Neo4j Browser login: user {settings.neo4j_user}, password in {where}")
    return 0


def cmd_status(args: argparse.Namespace, settings: Settings) -> int:
    from graphrag.runtime import open_services

    async def run() -> dict[str, Any]:
        async with open_services(settings) as rt:
            pg = await rt.postgres.health()
            neo = await rt.neo4j.health()
            return {
                "collections": {},
                "drift": [],
                "services": {
                    "postgres": {"ok": pg.ok, "version": pg.version, "pgvector": pg.pgvector},
                    "neo4j": {"ok": neo.ok, "version": neo.version, "edition": neo.edition},
                },
            }

    data = asyncio.run(run())
    if args.json:
        _print_json(data)
    else:
        for name, health in data["services"].items():
            print(f"{name}: {'ok' if health['ok'] else 'down'} {health.get('version', '')}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphrag", description="Hybrid knowledge-graph RAG service")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True)

    services = sub.add_parser("services", help="local PostgreSQL+pgvector and Neo4j servers")
    services.add_argument("action", choices=["up", "down", "status"])
    services.add_argument("--json", action="store_true", help="machine-readable output")
    services.set_defaults(func=cmd_services)

    status = sub.add_parser("status", help="counts in each store, drift between them, service health")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=cmd_status)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``graphrag`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.verbose:
        logging.getLogger("graphrag").setLevel(logging.DEBUG)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # models are packaged; never reach for a hub
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    func: Callable[[argparse.Namespace, Settings], int] = args.func
    try:
        settings = Settings()
        return func(args, settings)
    except UserError as exc:
        print(f"graphrag: error: {exc.message}", file=sys.stderr)
        return 2
    except GraphRAGError as exc:
        print(f"graphrag: error: {exc.message}", file=sys.stderr)
        return 1
    except ValidationError as exc:
        problems = "; ".join(f"GRAPHRAG_{'_'.join(map(str, e['loc'])).upper()}: {e['msg']}" for e in exc.errors())
        print(f"graphrag: error: invalid settings: {problems}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("graphrag: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - last resort: one line, the traceback only with -v
        logging.getLogger("graphrag").debug("unexpected error", exc_info=True)
        print(f"graphrag: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
