"""The ``graphrag`` command line. Each command builds Settings, opens what it needs, makes one call.

Errors are one line on stderr: exit 2 for bad input, 1 for service problems. Heavy modules (the
stores, the models) are imported by the commands that use them, so ``--version``, ``completion``
and bad arguments answer at once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from graphrag.errors import GraphRAGError, InvalidInput, UserError
from graphrag.models import Hit, SearchResult

if TYPE_CHECKING:
    from graphrag.config import Settings


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
    from graphrag.health import collect_status
    from graphrag.runtime import open_services

    async def run() -> dict[str, Any]:
        async with open_services(settings) as rt:
            return await collect_status(rt)

    data = asyncio.run(run())
    if args.json:
        _print_json(data)
        return 0
    for name, health in data["services"].items():
        print(f"{name}: {'ok' if health['ok'] else 'down'} {health.get('version', '')}")
    if data["collections"]:
        print(f"{'collection':24} {'docs':>7} {'chunks':>8} {'g.docs':>7} {'g.chunks':>8} {'entities':>8} "
              f"{'relations':>9}  model (dims, text config)")
        for name, c in data["collections"].items():
            model = (f"{c['embedding_model']} ({c['embedding_dim']}, {c['text_config']})" if "embedding_model" in c
                     else "-")
            if c.get("reembed_model"):
                model += f", re-embedding to {c['reembed_model']}"
            if c.get("vector_index"):
                model += ", own vector index"
            print(f"{name:24} {c['documents']:>7} {c['chunks']:>8} {c['graph_documents']:>7} {c['graph_chunks']:>8} "
                  f"{c['entities']:>8} {c['relations']:>9}  {model}")
    else:
        print("no documents yet: try `graphrag ingest PATH`")
    for d in data["drift"]:
        awaiting = f" ({d['awaiting_graph_writes']} awaiting graph writes)" if d["awaiting_graph_writes"] else ""
        print(f"drift in {d['collection']}: documents {d['documents']}, chunks {d['chunks']}{awaiting}")
    box = data["graph_outbox"]
    if box["pending"] or box["failed"]:
        print(f"graph writes: {box['pending']} pending, {box['failed']} set aside (oldest {box['oldest']}); "
              f"last error: {box['last_error']}")
        print("  pending ones apply when Neo4j answers; `graphrag repair` rebuilds the rest")
    return 0


def _split_csv(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def cmd_ingest(args: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    from graphrag.errors import InvalidInput
    from graphrag.runtime import open_services

    collection = args.collection or settings.default_collection
    file_types = set(_split_csv(args.file_types)) or None
    tags = _split_csv(args.tags)
    changes = None
    if args.changes:
        try:
            changes = json.loads(Path(args.changes).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise InvalidInput(f"--changes {args.changes}: {exc}") from None
        if not isinstance(changes, list):
            raise InvalidInput("--changes must hold a JSON list")
    elif not args.paths:
        raise InvalidInput("give at least one PATH (or --changes FILE)")
    else:
        # Fail fast, before services start or models load, and before anything is written. With --sync
        # a gone folder may still have documents to remove: the ingestor decides that.
        missing = [p for p in args.paths if not Path(p).expanduser().exists()]
        if missing and not args.sync:
            raise InvalidInput("no such file or directory: " + ", ".join(missing))
    progress = sys.stderr.isatty() and not args.json
    if args.dry_run:
        if changes is not None:
            raise InvalidInput("--dry-run reads PATHs, not --changes")
        return _dry_run(args, settings, file_types, progress)

    async def run() -> Any:
        async with open_services(settings) as rt:
            if progress:
                print("loading models ...", file=sys.stderr, flush=True)
            ingestor = await rt.ingestor()
            if changes is not None:
                report = await ingestor.ingest_changes(changes, collection=collection, chunker=args.chunker,
                                                       tags=tags, progress=progress, extended_mode=args.extended)
            else:
                report = await ingestor.ingest_paths([Path(p) for p in args.paths], collection=collection,
                                                     chunker=args.chunker, tags=tags, file_types=file_types,
                                                     sync=args.sync, progress=progress, text_config=args.text_config,
                                                     extended_mode=args.extended)
            if settings.communities_after_ingest and (report.ingested or report.updated or report.deleted):
                from graphrag.cli_communities import recompute

                await recompute(rt, collection)
            return report

    report = asyncio.run(run())
    data = report.to_dict()
    if args.json:
        data.pop("documents", None)
        _print_json(data)
    else:
        print(f"{report.files} files: {report.ingested} ingested, {report.updated} updated, "
              f"{report.unchanged} unchanged, {report.deleted} deleted, {len(report.skipped)} skipped, "
              f"{len(report.failed)} failed in {report.seconds:.1f}s")
        print(f"  written: {report.chunks} chunks; {report.entities} distinct entities and {report.relations} "
              "relations in the documents written")
        if report.included:
            print(f"  includes: {report.included} files read into the pages that include them")
        if report.representations:
            print(f"  extended search: {report.representations} titles, summaries and propositions written")
        if report.totals:
            t = report.totals
            graph = (f"{t['entities']} entities, {t['relations']} relations" if t["entities"] is not None
                     else "graph not counted (Neo4j unavailable)")
            print(f"  collection {collection!r} now holds {t['documents']} documents, {t['chunks']} chunks; {graph}")
        if report.graph_pending:
            print(f"  {report.graph_pending} graph write(s) pending: they apply when Neo4j answers")
        _print_skipped_and_failed(report, every=args.list_skipped or args.verbose)
    written = report.ingested + report.updated + report.unchanged + report.deleted
    if report.failed:
        return 1 if written else 2
    return 0


def _dry_run(args: argparse.Namespace, settings: Settings, file_types: set[str] | None, progress: bool) -> int:
    """``graphrag ingest --dry-run``: what the ingest would read, skip and fail on; no service is started,
    no model loaded, nothing written."""
    from pathlib import Path

    from graphrag.ingest.reading import plan_paths

    report, docs = asyncio.run(plan_paths([Path(p) for p in args.paths], settings, file_types, progress))
    if args.json:
        _print_json({"dry_run": True, "files": report.files,
                     "documents": [{"path": path, "title": d.title, "characters": len(d.text)} for d, path in docs],
                     "skipped": report.skipped, "failed": report.failed, "included": report.included,
                     "seconds": round(report.seconds, 3)})
    else:
        chars = sum(len(d.text) for d, _ in docs)
        print(f"{report.files} files: {len(docs)} documents to ingest ({chars:,} characters), "
              f"{len(report.skipped)} skipped, {len(report.failed)} failed (dry run: nothing written)")
        if report.included:
            print(f"  includes: {report.included} files read into the pages that include them")
        _print_skipped_and_failed(report, every=args.list_skipped or args.verbose)
    if report.failed:
        return 1 if docs else 2
    return 0


# Past this many skipped files an ingest's summary counts them by reason (a repository holds thousands of
# source files that are not documents); --list-skipped (or -v) lists each.
SKIPPED_LISTED = 10


def _print_skipped_and_failed(report: Any, every: bool) -> None:
    """The summary's skipped files (:func:`skipped_lines`) on stdout, its failures on stderr."""
    for line in skipped_lines(report.skipped, every=every):
        print(line)
    for item in report.failed:
        print(f"  failed  {item['path']}: {item['error']}", file=sys.stderr)


def skipped_lines(skipped: list[dict[str, str]], every: bool = False) -> list[str]:
    """The summary's lines for skipped files: one per file up to :data:`SKIPPED_LISTED` (or with
    ``every``), else one per reason with its count and a first file, most frequent first."""
    if every or len(skipped) <= SKIPPED_LISTED:
        return [f"  skipped {item['path']}: {item['reason']}" for item in skipped]
    by_reason: dict[str, list[str]] = {}
    for item in skipped:
        by_reason.setdefault(item["reason"], []).append(item["path"])
    lines = [f"  skipped {len(skipped)} files, by reason (--list-skipped lists each):"]
    for reason, paths in sorted(by_reason.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        lines.append(f"  {len(paths):>6}  {reason}" + (f" (e.g. {paths[0]})" if len(paths) > 1 else f": {paths[0]}"))
    return lines


def _delete_collection(args: argparse.Namespace, settings: Settings) -> int:
    """``graphrag delete --all --collection C``: the collection and everything in it, from both stores."""
    from graphrag.documents import delete_collection
    from graphrag.entities import check_collection
    from graphrag.runtime import open_services

    if not args.collection:  # never the default collection by omission
        raise InvalidInput("--all needs --collection: name the collection to delete")
    check_collection(args.collection)

    async def run() -> dict[str, Any]:
        async with open_services(settings) as rt:
            return await delete_collection(rt, args.collection)

    done = asyncio.run(run())
    if args.json:
        print(json.dumps(done))
    else:
        pending = " (its graph follows when Neo4j is back: graphrag repair)" if done["graph_pending"] else ""
        print(f"deleted collection {done['collection']}: {done['documents']} document"
              f"{'s' if done['documents'] != 1 else ''}, {done['chunks']} chunk{'s' if done['chunks'] != 1 else ''}"
              f"{pending}")
    return 0


def cmd_delete(args: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    from graphrag.runtime import open_services

    if args.all:
        return _delete_collection(args, settings)
    collection = args.collection or settings.default_collection
    source = str(Path(args.source).expanduser().resolve()) if args.source and Path(args.source).exists() else args.source

    async def run() -> int:
        async with open_services(settings) as rt:
            ingestor = rt.deleter()
            if args.source and not Path(args.source).exists():
                # A source that is no file any more: try it as stored, then as an absolute path.
                n = await ingestor.delete(collection=collection, source=args.source, missing_ok=True)
                if n:
                    return n
                source_abs = str(Path(args.source).expanduser().absolute())
                return await ingestor.delete(collection=collection, source=source_abs)
            return await ingestor.delete(collection=collection, document_id=args.document, source=source)

    n = asyncio.run(run())
    print(f"deleted {n} document{'s' if n != 1 else ''}")
    return 0


def _highlight(text: str, terms: list[str], tty: bool) -> str:
    import re

    snippet = " ".join(text.split())[:240]
    if not terms:
        return snippet
    pattern = re.compile(r"\b(" + "|".join(re.escape(t) for t in terms) + r")\w*", re.I)
    return pattern.sub(lambda m: f"\033[1m{m.group(0)}\033[0m" if tty else f"*{m.group(0)}*", snippet)


def _marked(hit: Hit, tty: bool) -> str:
    """A hit's text with the server's highlights (bold on a terminal, [[term]] elsewhere): the snippet,
    or the whole text of a full-document hit."""
    from graphrag.search.highlight import render

    before, after = ("\033[1m", "\033[0m") if tty else ("[[", "]]")
    spans = hit.extra.get("highlights") or []
    if hit.extra.get("full_document"):
        cut = ", truncated" if hit.extra.get("truncated") else ""
        note = f"    (full document, {hit.extra.get('document_tokens')} tokens{cut})"
        body = render(hit.content, spans, before=before, after=after)
        return note + "\n" + "\n".join("    " + line for line in body.splitlines())
    start, end = hit.extra.get("snippet_start", 0), hit.extra.get("snippet_end", len(hit.content))
    text = render(hit.content, spans, start, end, before=before, after=after)
    text = ("… " if start > 0 else "") + " ".join(text.split()) + (" …" if end < len(hit.content) else "")
    return f"    {text}"


def print_results(result: SearchResult, explain: bool) -> None:
    """A readable table: rank, score, source (with the page for PDFs), heading path, highlighted snippet, legs."""
    import re

    tty = sys.stdout.isatty()
    terms = sorted({w.lower() for w in re.findall(r"\w{3,}", result.query)} - _STOP, key=len, reverse=True)
    legs = ", ".join(f"{k} {v.status} {v.hits} hits {v.took_ms:.0f} ms" for k, v in result.legs.items()
                     if v.status != "skipped")
    print(f"{len(result.hits)} results for {result.query!r} ({result.mode}, {result.took_ms:.0f} ms; {legs})")
    for name, v in result.legs.items():
        if v.details.get("expanded"):
            print(f"  {name} leg expanded with: {', '.join(v.details['expanded'])}")
        if v.error:
            print(f"  leg problem: {v.error}", file=sys.stderr)
        elif explain and v.reason:
            print(f"  {name} leg skipped: {v.reason}")
    for rank, hit in enumerate(result.hits, 1):
        path = " > ".join(hit.heading_path)
        cite = hit.citation
        if hit.kind == "community":  # a community report (mode global): its title, then its evidence
            info = hit.extra["community"]
            cite = f"{hit.title}  (community level {info['level']}, {info['size']} entities" + (
                ", stale" if info.get("stale") else "") + f"; evidence {cite})"
        print(f"\n{rank:>2}. {hit.score:.4f}  {cite}" + (f"  [{path}]" if path else ""))
        if "highlights" in hit.extra or hit.extra.get("full_document"):
            print(_marked(hit, tty))
        else:
            print(f"    {_highlight(hit.content, terms, tty)}")
        matched = hit.extra.get("matched")
        if matched and matched.get("text"):
            print(f"    matched {matched['kind']}: {' '.join(matched['text'].split())[:200]}")
        found_by = ", ".join(hit.legs)
        line = f"    found by: {found_by}"
        if explain:
            ranks = "; ".join(f"{leg} #{info['rank']} ({info['score']:.4f})" for leg, info in hit.legs.items())
            line += f"  |  {ranks}"
            via = hit.legs.get("graph", {}).get("entities") or []
            if via:
                line += "  |  graph via " + ", ".join(e["name"] for e in via)
        print(line)
    relations = (result.graph_context or {}).get("relations") or []
    if explain and relations:
        print("\ngraph context:")
        for rel in relations[:10]:
            print(f"  {rel['source']} -[{rel['type']}]- {rel['target']}  (evidence {rel['evidence_chunk_id']})")


_STOP = {"the", "and", "for", "with", "what", "which", "who", "how", "was", "were", "are", "that", "this", "from"}


def cmd_search(args: argparse.Namespace, settings: Settings) -> int:
    from graphrag.errors import InvalidInput
    from graphrag.models import is_collection_name
    from graphrag.search.config import validate_query
    from graphrag.search.filters import parse_filter
    from graphrag.stores.filters import compile_filter

    # Bad input fails here, before any store is opened or model loaded.
    validate_query(args.query)
    filters = parse_filter(args.filter)
    compile_filter(filters)
    from graphrag.search.extras import options

    options(args.highlight, args.full_document_threshold, args.token_limit)
    for name in args.collection or ():
        if not is_collection_name(name):
            raise InvalidInput(f"invalid collection name {name!r}")
    synonyms = None
    if args.synonyms:
        from pathlib import Path

        from graphrag.search.expansion import parse_synonyms

        try:
            text = Path(args.synonyms).expanduser().read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput(f"--synonyms {args.synonyms}: {getattr(exc, 'strerror', None) or exc}") from None
        synonyms = [list(group) for group in parse_synonyms(text, args.synonyms)]

    # A running `graphrag serve` of this home has its models loaded: ask it (same answer, no model load).
    result = None if args.local else _search_via_server(args, settings, filters, synonyms)
    if result is None:
        result = _search_locally(args, settings, synonyms)
    if args.format and not args.json:
        from graphrag.search import formats

        print(formats.render(result, args.format), end="")
    elif args.json:
        _print_json(result.to_dict(timings=False))
    else:
        print_results(result, args.explain)
    return 0


def _search_via_server(args: argparse.Namespace, settings: Settings, filters: dict[str, Any] | None,
                       synonyms: list[list[str]] | None) -> SearchResult | None:
    from graphrag import remote

    body = {"query": args.query, "mode": args.mode, "limit": args.k, "collections": args.collection,
            "filters": filters, "explain": args.explain, "graph_leg": args.graph_leg,
            "highlight": args.highlight or None, "full_document_threshold": args.full_document_threshold,
            "token_limit": args.token_limit, "extended": args.extended or None, "expand": args.expand,
            "synonyms": synonyms}
    response = remote.search(settings, {k: v for k, v in body.items() if v is not None})
    return None if response is None else SearchResult.from_dict(response)


def _search_locally(args: argparse.Namespace, settings: Settings,
                    synonyms: list[list[str]] | None) -> SearchResult:
    from graphrag.runtime import open_services

    async def run() -> SearchResult:
        async with open_services(settings) as rt:
            with rt.postgres.one_request():  # the check and the search share the collections' row
                await rt.postgres.require_collections(args.collection)
                router = await rt.router(args.mode)  # only the models this mode needs
                return await router.search(args.query, mode=args.mode, limit=args.k, collections=args.collection,
                                           filters=args.filter, explain=args.explain, graph_leg=args.graph_leg,
                                           highlight=args.highlight, full_document_threshold=args.full_document_threshold,
                                           token_limit=args.token_limit, extended=args.extended, expand=args.expand,
                                           synonyms=synonyms)

    return asyncio.run(run())


def cmd_eval(args: argparse.Namespace, settings: Settings) -> int:
    from pathlib import Path

    from graphrag.evaluation import run_eval
    from graphrag.runtime import open_services

    progress = sys.stderr.isatty()

    async def run() -> dict[str, Any]:
        async with open_services(settings) as rt:
            return await run_eval(rt, Path(args.dir), collection=args.collection, modes=args.mode, k=args.k,
                                  split=args.split, run_file=Path(args.run_file) if args.run_file else None,
                                  progress=progress, limit_queries=args.limit_queries, fusion=args.fusion,
                                  extended=args.extended, expand=args.expand)

    result = asyncio.run(run())
    if args.json:
        _print_json(result)
    else:
        print(f"{result['dataset']} ({args.split}): {result['documents']} documents, {result['queries']} queries")
        print(f"{'mode':8} {'nDCG@10':>8} {'R@2':>6} {'R@5':>6} {'R@10':>6} {'MRR@10':>7} {'p50 ms':>8} {'p95 ms':>8}")
        for mode, m in result["modes"].items():
            print(f"{mode:8} {m['ndcg@10']:>8.3f} {m['recall@2']:>6.3f} {m['recall@5']:>6.3f} {m['recall@10']:>6.3f} "
                  f"{m['mrr@10']:>7.3f} {m['latency_ms']['p50']:>8.1f} {m['latency_ms']['p95']:>8.1f}")
    return 0


def cmd_repair(args: argparse.Namespace, settings: Settings) -> int:
    from graphrag.repair import describe, repair
    from graphrag.runtime import open_services

    async def run() -> dict[str, Any]:
        async with open_services(settings) as rt:
            return await repair(rt, args.collection)

    report = asyncio.run(run())
    if args.json:
        _print_json(report)
    else:
        print(describe(report))
    return 0


def cmd_reembed(args: argparse.Namespace, settings: Settings) -> int:
    from graphrag.ingest.reembed import reembed
    from graphrag.runtime import open_services

    progress = sys.stderr.isatty() and not args.json

    async def run() -> Any:
        async with open_services(settings) as rt:
            return await reembed(rt.postgres, rt.neo4j, await rt.models(), collection=args.collection,
                                 model=args.model, progress=progress)

    report = asyncio.run(run())
    if args.json:
        _print_json(report.to_dict())
    elif not report.switched:
        print(f"{report.collection} already uses {report.to_model} ({report.dim} dims)")
    else:
        resumed = " (resumed)" if report.resumed else ""
        print(f"{report.collection}: {report.from_model} -> {report.to_model} ({report.dim} dims){resumed}; "
              f"{report.chunks} chunks and {report.entities} entity names embedded in {report.seconds:.1f}s")
    return 0


def cmd_serve(args: argparse.Namespace, settings: Settings) -> int:
    from graphrag.api.server import serve

    serve(settings, host=args.host or settings.api_host, port=args.port or settings.api_port, workers=args.workers)
    return 0


def cmd_mcp(args: argparse.Namespace, settings: Settings) -> int:
    from graphrag.agent.mcp import serve_stdio

    serve_stdio(settings)
    return 0


def cmd_keys(args: argparse.Namespace, settings: Settings) -> int:
    from graphrag.api.auth import new_key

    collections = [c.strip() for c in (args.collections or "").split(",") if c.strip()] or None
    key, entry = new_key(args.name, collections, args.read_only)
    if args.json:
        _print_json({"key": key, "entry": entry})
        return 0
    print(f"key (give it to the client; it is not stored anywhere): {key}")
    print("entry for GRAPHRAG_API_KEYS (a JSON list of such entries):")
    print(json.dumps(entry))
    return 0


def cmd_completion(args: argparse.Namespace, settings: Settings | None) -> int:
    from graphrag.completion import script

    print(script(build_parser(), args.shell), end="")
    return 0


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("graphrag-kg")
    except PackageNotFoundError:  # run from a source tree that is not installed
        from graphrag import __version__

        return __version__


def _k(value: str) -> int:
    try:
        k = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 1 <= k <= 100:
        raise argparse.ArgumentTypeError("must be from 1 to 100")
    return k


def _workers(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {value!r}") from None
    if not 1 <= n <= 256:
        raise argparse.ArgumentTypeError("must be from 1 to 256")
    return n


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphrag", description="Hybrid knowledge-graph RAG service")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    services = sub.add_parser("services", help="local PostgreSQL+pgvector and Neo4j servers")
    services.add_argument("action", choices=["up", "down", "status"])
    services.add_argument("--json", action="store_true", help="machine-readable output")
    services.set_defaults(func=cmd_services)

    status = sub.add_parser("status", help="counts in each store, drift between them, service health")
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=cmd_status)

    ingest = sub.add_parser("ingest", help="ingest files and folders (md, mdx, rst, adoc, ipynb, txt, html, pdf, docx, jsonl)")
    ingest.add_argument("paths", nargs="*", metavar="PATH")
    ingest.add_argument("--collection", help="collection to ingest into (default: GRAPHRAG_DEFAULT_COLLECTION)")
    ingest.add_argument("--chunker", help="markdown, sentence, paragraph, page, semantic or whole (default per type)")
    ingest.add_argument("--tags", help="comma-separated tags stored on every document")
    ingest.add_argument("--file-types", help="only these types, e.g. md,pdf")
    ingest.add_argument("--sync", action="store_true", help="also delete the documents under PATH that it no longer gives (file gone, ignored, skipped)")
    ingest.add_argument("--changes", metavar="FILE", help='JSON list [{"path", "added"|"modified"|"deleted": true}]')
    ingest.add_argument("--text-config", metavar="NAME",
                        help="text-search configuration of a new collection: english, simple (multilingual), "
                        "german, ... (default: GRAPHRAG_TEXT_SEARCH_CONFIG)")
    ingest.add_argument("--extended", nargs="?", const="extractive", choices=["off", "extractive", "llm"],
                        metavar="MODE", help="also make titles, summaries and propositions for extended search: "
                        "extractive (the default MODE), llm (GRAPHRAG_EXTENDED_MODEL) or off; recorded with the "
                        "collection, so later ingests keep them (default: GRAPHRAG_EXTENDED, else the collection's)")
    ingest.add_argument("--dry-run", action="store_true",
                        help="read the files and report what would be ingested, skipped or failed; start no "
                        "service, write nothing")
    ingest.add_argument("--list-skipped", action="store_true",
                        help=f"list every skipped file (past {SKIPPED_LISTED} the summary counts them by reason)")
    ingest.add_argument("--json", action="store_true")
    ingest.set_defaults(func=cmd_ingest)

    search = sub.add_parser("search", help="search with vector, keyword, hybrid, graph or auto (all fused)")
    search.add_argument("query")
    search.add_argument("--mode", default="auto", choices=["auto", "vector", "keyword", "hybrid", "graph", "global"])
    search.add_argument("-k", type=_k, default=10, help="number of results (1-100)")
    search.add_argument("--collection", action="append", help="restrict to a collection (repeatable)")
    search.add_argument("--filter", help='JSON metadata filter, e.g. \'{"year": {"$gte": 2020}}\'')
    search.add_argument("--explain", action="store_true", help="per-leg ranks and the graph path")
    search.add_argument("--graph-leg", choices=["auto", "always", "never"], default="auto",
                        help="fused modes: auto skips the graph leg where the graph prior makes its weight "
                             "negligible; always runs it; never leaves it out")
    search.add_argument("--highlight", action="store_true",
                        help="mark the query's terms (bold on a terminal, [[term]] otherwise); --json adds "
                             "highlights and a snippet to each result")
    search.add_argument("--full-document-threshold", type=float, metavar="SCORE",
                        help="results scoring at least SCORE show their whole document")
    search.add_argument("--token-limit", type=int, default=5000, metavar="N",
                        help="most tokens of whole-document text (default 5000)")
    search.add_argument("--format", choices=["text", "voice"],
                        help="print the results as text (a numbered citation list) or voice (sentences to read out)")
    search.add_argument("--extended", action="store_true",
                        help="also match titles, summaries and propositions (ingested with --extended)")
    search.add_argument("--expand", action=argparse.BooleanOptionalAction, default=None,
                        help="expand the keyword leg with synonyms and entity aliases (default: "
                             "GRAPHRAG_EXPAND_COLLECTIONS)")
    search.add_argument("--synonyms", metavar="FILE",
                        help="synonym groups for this search, one per line: car, automobile, auto (implies --expand)")
    search.add_argument("--json", action="store_true", help="the REST response shape")
    search.add_argument("--local", action="store_true",
                        help="search in this process even when `graphrag serve` runs for this home")
    search.set_defaults(func=cmd_search)

    from graphrag.answer.cli import add_ask_parser

    add_ask_parser(sub)

    evaluate = sub.add_parser("eval", help="retrieval quality on a BEIR-format folder")
    evaluate.add_argument("dir")
    evaluate.add_argument("--collection", help="collection for the corpus (default: the folder name)")
    evaluate.add_argument("--mode", action="append", choices=["auto", "vector", "keyword", "hybrid", "graph"])
    evaluate.add_argument("--split", default="test", help="judgements to evaluate: qrels/SPLIT.tsv (default: test)")
    evaluate.add_argument("-k", type=int, default=10,
                          help="documents retrieved per query, 10-100 (default 10); the metric cutoffs stay 2, 5, 10")
    evaluate.add_argument("--run-file", metavar="PATH",
                          help="also write each mode's ranking as a TREC run file: PATH with the mode before its "
                               "extension (run.trec -> run.hybrid.trec)")
    evaluate.add_argument("--limit-queries", type=int, help="only the first N queries (quick runs)")
    evaluate.add_argument("--fusion", choices=["convex", "rrf"], help="fusion of the fused modes (default: convex)")
    evaluate.add_argument("--extended", action="store_true",
                          help="ingest the corpus with extractive representations and search with extended: true")
    evaluate.add_argument("--expand", action="store_true", help="search with query expansion (expand: true)")
    evaluate.add_argument("--json", action="store_true")
    evaluate.set_defaults(func=cmd_eval)

    repair = sub.add_parser("repair", help="reconcile the graph in Neo4j with PostgreSQL (the source of truth)")
    repair.add_argument("--collection", help="only this collection")
    repair.add_argument("--json", action="store_true")
    repair.set_defaults(func=cmd_repair)

    reembed = sub.add_parser("reembed", help="move a collection to another embedding model, in place")
    reembed.add_argument("--collection", required=True)
    reembed.add_argument("--model", required=True,
                         help="a GRAPHRAG_EMBEDDING_MODEL spec: all-MiniLM-L6-v2, sentence-transformers:/path, "
                         "openai:<model>")
    reembed.add_argument("--json", action="store_true")
    reembed.set_defaults(func=cmd_reembed)

    serve = sub.add_parser("serve", help="run the REST API (OpenAPI at /schema)")
    serve.add_argument("--host", help="bind address (default: GRAPHRAG_API_HOST, 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default: GRAPHRAG_API_PORT, 8000)")
    serve.add_argument("--workers", type=_workers,
                       help="API processes on the port (default: GRAPHRAG_API_WORKERS, else one per CPU core)")
    serve.set_defaults(func=cmd_serve)

    mcp = sub.add_parser("mcp", help="serve the agent tools to MCP clients over stdio")
    mcp.set_defaults(func=cmd_mcp)

    keys = sub.add_parser("keys", help="API keys for the REST API")
    keys.add_argument("action", choices=["new"])
    keys.add_argument("--name", required=True, help="a name for logs and errors (never the key itself)")
    keys.add_argument("--collections", help="comma-separated collections the key may use (default: all)")
    keys.add_argument("--read-only", action="store_true", help="search and read only; no adding or deleting")
    keys.add_argument("--json", action="store_true")
    keys.set_defaults(func=cmd_keys)

    from graphrag.cli_communities import add_parser as add_communities

    add_communities(sub)
    from graphrag import cli_portable

    cli_portable.register(sub)  # export, import

    delete = sub.add_parser("delete", help="remove a document, or a whole collection, from both stores")
    which = delete.add_mutually_exclusive_group(required=True)
    which.add_argument("--document", metavar="ID")
    which.add_argument("--source", metavar="PATH")
    which.add_argument("--all", action="store_true",
                       help="every document of --collection (which must be named) and the collection itself")
    delete.add_argument("--collection")
    delete.add_argument("--json", action="store_true", help="with --all: what was deleted, as JSON")
    delete.set_defaults(func=cmd_delete)

    from graphrag import cli_suggest

    cli_suggest.register(sub)
    from graphrag import cli_aliases

    cli_aliases.register(sub)

    completion = sub.add_parser("completion", help="print a shell completion script (bash or zsh)",
                                description='Load it with eval "$(graphrag completion bash)" in ~/.bashrc '
                                '(zsh: in ~/.zshrc).')
    completion.add_argument("shell", choices=["bash", "zsh"])
    completion.set_defaults(func=cmd_completion, settings=False)
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
    func: Callable[[argparse.Namespace, Any], int] = args.func
    from pydantic import ValidationError

    from graphrag.config import Settings

    try:
        settings = Settings() if getattr(args, "settings", True) else None
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
    except BrokenPipeError:
        # The reader went away (`graphrag search ... | head`): stop quietly, as other CLI tools do.
        # stdout is pointed at devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as exc:  # noqa: BLE001 - last resort: one line, the traceback only with -v
        logging.getLogger("graphrag").debug("unexpected error", exc_info=True)
        print(f"graphrag: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
