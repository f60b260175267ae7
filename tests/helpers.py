"""Helpers the integration tests share: the CLI run in this process, and writing and ingesting a corpus."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from graphrag.search import walk
from graphrag.stores.repo.graph import ENTITY_CHUNKS, ENTITY_NEIGHBOURS


def run_cli(*args: str, env: Mapping[str, str] | None = None, stdin: bytes | None = None,
            replace_env: bool = False, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``graphrag ARGS`` in this process: ``graphrag.cli.main`` with ``env`` added to the environment
    (``replace_env``: instead of it), in ``cwd`` if given (where Settings looks for a ``.env``), stdout and
    stderr captured, the exit code returned as a spawned command's would be. It runs in a thread of its own, so that its ``asyncio.run`` works from async
    tests too; the models and modules this process already imported are not loaded again."""
    from graphrag.cli import main

    saved_env = dict(os.environ)
    out, err = io.StringIO(), io.StringIO()
    in_stream = io.TextIOWrapper(io.BytesIO(stdin or b""))
    code: list[int] = []
    handler = logging.StreamHandler(err)  # the CLI's warnings reach its stderr, as in a process of its own
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    # What the CLI's own logging.basicConfig shows: warnings, and graphrag's debug lines with -v.
    verbose = bool({"-v", "--verbose"} & set(args))
    handler.addFilter(lambda r: r.levelno >= logging.WARNING or (verbose and r.name.startswith("graphrag")))
    graphrag_log = logging.getLogger("graphrag")
    level = graphrag_log.level

    def call() -> None:
        try:
            code.append(main(list(args)))
        except SystemExit as exc:  # argparse: --help, --version, usage errors
            code.append(exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2))
            if isinstance(exc.code, str):
                err.write(exc.code + "\n")

    if replace_env:
        os.environ.clear()
    os.environ.update(env or {})
    logging.getLogger().addHandler(handler)
    saved_stdin, saved_cwd = sys.stdin, Path.cwd()
    try:
        if cwd is not None:
            os.chdir(cwd)
        sys.stdin = in_stream
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            worker = threading.Thread(target=call)
            worker.start()
            worker.join()
    finally:
        os.chdir(saved_cwd)
        sys.stdin = saved_stdin
        logging.getLogger().removeHandler(handler)
        graphrag_log.setLevel(level)
        os.environ.clear()
        os.environ.update(saved_env)
    assert code, "the CLI raised: " + err.getvalue()
    return subprocess.CompletedProcess(["graphrag", *args], code[0], out.getvalue(), err.getvalue())


def write_docs(folder: Path, docs: Mapping[str, str]) -> Path:
    """Write ``docs`` (file name -> text) into ``folder`` (created if missing); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text)
    return folder


async def ingest_docs(ingestor: Any, folder: Path, collection: str, docs: Mapping[str, str],
                      **options: Any) -> Any:
    """Write ``docs`` into ``folder``, ingest the folder into ``collection`` and check every document
    went in; returns the ingestion report."""
    write_docs(folder, docs)
    report = await ingestor.ingest_paths([folder], collection=collection, **options)
    assert report.ingested == len(docs) and not report.failed, report.failed
    return report


__all__: Sequence[str] = ("ingest_docs", "run_cli", "write_docs")


async def explain(conn: Any, file: str, name: str, *, dim: int | None = None, **params: Any) -> str:
    """EXPLAIN of a product statement as the stores run it (no filter: ``/*FILTER*/`` is TRUE)."""
    from graphrag.stores import queries

    st = queries.variant(file, name, "TRUE", dim)
    return "\n".join(r[0] for r in await conn.fetch("EXPLAIN " + st.text, *st.bind(params)))


async def rest_search(router: Any, query: str, **options: Any) -> dict[str, Any]:
    """A search's result in its REST shape (``SearchResult.to_dict()``): what most search tests check,
    since that shape is the contract every interface maps to."""
    return (await router.search(query, **options)).to_dict()


async def graph_rows(runtime: Any, statement: str, **params: Any) -> list[dict[str, Any]]:
    """The rows of a Cypher statement on the runtime's Neo4j, as dicts."""
    records, _, _ = await runtime.neo4j.driver.execute_query(statement, parameters_=params)
    return [r.data() for r in records]


async def entity_lists_match_the_graph(runtime: Any, collection: str) -> int:
    """Every entity's stored chunk and neighbour lists equal the ones its mentions and relationships give
    now; returns the entities."""
    entities = await graph_rows(runtime, "MATCH (e:Entity {collection: $c}) RETURN e.id AS id, e.chunk_ids AS ids, "
                                    "e.chunk_focus AS focus, e.chunk_titled AS titled, e.name AS name, e.mentions AS mentions, "
                                    "e.neighbour_ids AS near, e.neighbour_weights AS near_w, "
                                    "e.neighbour_elements AS near_el", c=collection)
    element = {r["id"]: r["el"] for r in await graph_rows(
        runtime, "MATCH (e:Entity {collection: $c}) RETURN e.id AS id, elementId(e) AS el", c=collection)}
    edges: dict[str, dict[str, float]] = {}
    for r in await graph_rows(runtime, "MATCH (a:Entity {collection: $c})-[r:RELATED_TO]->(b:Entity) WHERE a <> b "
                                  "RETURN a.id AS a, b.id AS b, r.weight AS w", c=collection):
        for x, y in ((r["a"], r["b"]), (r["b"], r["a"])):
            edges.setdefault(x, {})[y] = edges.get(x, {}).get(y, 0.0) + r["w"]
    mentions = await graph_rows(runtime, "MATCH (c:Chunk {collection: $c})-[m:MENTIONS]->(e) RETURN e.id AS entity, "
                                    "c.id AS chunk, COLLECT { MATCH (c)<-[:HAS_CHUNK]-(d) RETURN d.title }[0] AS title, "
                                    "m.count AS count, COUNT { (c)-[:MENTIONS]->() } AS degree", c=collection)
    title_of = {m["chunk"]: m["title"] for m in mentions}
    for e in entities:
        mine = [(m["chunk"], m["count"], m["degree"]) for m in mentions if m["entity"] == e["id"]]
        expected = walk.chunk_list(mine, ENTITY_CHUNKS)
        assert e["ids"] == [c for c, _ in expected], e
        assert e["focus"] == pytest.approx([f for _, f in expected], rel=1e-12)
        assert e["titled"] == [title_of[c] is not None and e["name"].lower() in title_of[c].lower() for c, _ in expected]
        assert e["mentions"] == len(mine)
        near = sorted(edges.get(e["id"], {}).items(), key=lambda kv: (-kv[1], kv[0]))[:ENTITY_NEIGHBOURS]
        assert e["near"] == [n for n, _ in near] and e["near_w"] == [w for _, w in near], e
        assert e["near_el"] == [element[n] for n, _ in near]
    return len(entities)
