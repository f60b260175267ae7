"""``graphrag export`` and ``graphrag import``: a collection of both stores as one archive file.

Registered by :func:`graphrag.cli.build_parser`; like the other commands, the heavy modules load inside
the command, so ``--help`` and bad arguments answer at once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphrag.config import Settings


def _compression(choice: str, file: str) -> str:
    if choice != "auto":
        return choice
    return "none" if file.endswith(".tar") else "gzip"


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


def cmd_export(args: argparse.Namespace, settings: Settings) -> int:
    from graphrag.errors import InvalidInput
    from graphrag.portable import check_name

    check_name(args.collection)
    to_stdout = args.file == "-"
    path = None if to_stdout else Path(args.file).expanduser()
    if path is not None and not path.parent.is_dir():
        raise InvalidInput(f"no such directory: {path.parent}")
    if to_stdout and sys.stdout.isatty():
        raise InvalidInput("refusing to write an archive to a terminal: give a FILE or redirect standard output")

    from graphrag.portable import export_to_file
    from graphrag.runtime import open_services

    async def run() -> Any:
        async with open_services(settings) as rt:
            return await export_to_file(rt, args.collection, path, compression=_compression(args.compress, args.file))

    report = asyncio.run(run())
    out = sys.stderr if to_stdout else sys.stdout
    if args.json:
        print(json.dumps(report.to_dict(), indent=2), file=out)
    else:
        print(f"exported {report.collection}: {report.documents} documents, {report.chunks} chunks, "
              f"{report.entities} entities, {report.relations} relations ({report.embedding_model}, {report.dim} dims) "
              f"-> {args.file} ({_human(report.bytes)}, {report.compression}) in {report.seconds:.1f}s", file=out)
        if report.representations:
            print(f"  with {report.representations} extended-search titles, summaries and propositions", file=out)
    return 0


def cmd_import(args: argparse.Namespace, settings: Settings) -> int:
    from graphrag.errors import InvalidInput
    from graphrag.portable import check_name

    if args.collection is not None:
        check_name(args.collection)
    from_stdin = args.file == "-"
    path = None if from_stdin else Path(args.file).expanduser()
    if path is not None and not path.is_file():
        raise InvalidInput(f"no such file: {args.file}")
    progress = sys.stderr.isatty() and not args.json

    from graphrag.portable import import_archive, stage
    from graphrag.runtime import open_services

    async def stdin_chunks() -> Any:
        while data := await asyncio.to_thread(sys.stdin.buffer.read, 1 << 20):
            yield data

    async def run() -> Any:
        staged = await stage(stdin_chunks()) if path is None else None
        try:
            async with open_services(settings) as rt:
                return await import_archive(rt, staged or path, collection=args.collection,  # type: ignore[arg-type]
                                            progress=progress)
        finally:
            if staged is not None:
                staged.unlink(missing_ok=True)

    report = asyncio.run(run())
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
        return 0
    how = "new collection" if report.created else "existing collection"
    print(f"imported {report.documents} documents, {report.chunks} chunks, {report.entities} entities, "
          f"{report.relations} relations into {how} {report.collection!r} (from {report.source_collection!r}, "
          f"{report.embedding_model}) in {report.seconds:.1f}s")
    if report.representations:
        print(f"  with {report.representations} extended-search titles, summaries and propositions "
              f"({report.extended})")
    if report.replaced:
        print(f"  {report.replaced} document(s) with the same id or source were replaced")
    t = report.totals
    if t:
        graph = (f"{t['entities']} entities, {t['relations']} relations" if t.get("entities") is not None
                 else "graph not counted (Neo4j unavailable)")
        print(f"  collection {report.collection!r} now holds {t['documents']} documents, {t['chunks']} chunks; {graph}")
    if report.graph_pending:
        print(f"  {report.graph_pending} graph write(s) pending: they apply when Neo4j answers")
    return 0


def register(sub: Any) -> None:
    """Add ``export`` and ``import`` to the ``graphrag`` sub-command parser."""
    export = sub.add_parser("export", help="write a collection (documents, chunks, vectors, graph) to one archive",
                            description="Write a collection of both stores to one versioned archive (a tar of "
                            "JSON-lines members with a manifest of checksums), to import anywhere.")
    export.add_argument("file", metavar="FILE", help="archive to write (written whole or not at all); '-' for stdout")
    export.add_argument("--collection", required=True, help="the collection to export")
    export.add_argument("--compress", choices=["auto", "gzip", "none"], default="auto",
                        help="auto (default): gzip, unless FILE ends in .tar")
    export.add_argument("--json", action="store_true", help="machine-readable summary")
    export.set_defaults(func=cmd_export)

    imp = sub.add_parser("import", help="restore a collection from an archive of `graphrag export`",
                         description="Verify an archive (checksums, every row) and restore it into both stores; "
                         "a damaged or foreign archive is refused before anything is written. Importing the "
                         "same archive again gives the same state.")
    imp.add_argument("file", metavar="FILE", help="archive to read; '-' for stdin")
    imp.add_argument("--collection", help="import under this name (default: the archive's collection)")
    imp.add_argument("--json", action="store_true", help="machine-readable summary")
    imp.set_defaults(func=cmd_import)
