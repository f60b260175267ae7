"""Ingestion end to end against the real PostgreSQL+pgvector and Neo4j servers."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime
from graphrag.stores.neo4j import GraphWrites

from .test_loaders_chunkers import make_docx, make_pdf
from tests.helpers import run_cli

APPLE = "Tim Cook leads Apple Inc. in Cupertino, California. Apple makes the iPhone."
MICROSOFT = "Satya Nadella runs Microsoft in Redmond. Microsoft competes with Apple."


async def graph_facts(rt: Runtime, collection: str) -> dict[str, Any]:
    """What the graph holds for a collection: entity names, relations, counts."""
    rows, _, _ = await rt.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.name AS name, e.label AS label, e.mentions AS mentions",
        c=collection)
    rels, _, _ = await rt.neo4j.driver.execute_query(
        "MATCH (a:Entity {collection: $c})-[r:RELATED_TO]->(b:Entity) "
        "RETURN a.key AS a, b.key AS b, r.weight AS weight, r.predicates AS predicates, "
        "r.evidence_chunk_ids AS evidence", c=collection)
    counts = (await GraphWrites(rt.neo4j).collection_counts()).get(collection, {})
    return {"entities": {(r["name"], r["label"]): r["mentions"] for r in rows},
            "relations": {frozenset((r["a"], r["b"])): r for r in rels}, "counts": counts}


async def pg_counts(rt: Runtime, collection: str) -> dict[str, int]:
    return (await rt.postgres.collection_counts()).get(collection, {"documents": 0, "chunks": 0})


async def test_entities_and_relations_reach_neo4j(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                                  collection: str) -> None:
    (tmp_path / "apple.md").write_text(f"# Apple\n\n{APPLE}\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 1 and not report.failed
    facts = await graph_facts(runtime, collection)
    labels = {label for _, label in facts["entities"]}
    assert {"PERSON", "ORG", "GPE"} <= labels
    assert ("Apple Inc.", "ORG") in facts["entities"] or ("Apple", "ORG") in facts["entities"]
    # "Apple Inc." and "Apple" resolve to one entity.
    assert sum(1 for name, label in facts["entities"] if label == "ORG" and "apple" in name.lower()) == 1
    rel = facts["relations"][frozenset(("tim cook", "apple"))]
    assert rel["weight"] >= 1 and "lead" in rel["predicates"] and rel["evidence"]
    assert await pg_counts(runtime, collection) == {"documents": 1, "chunks": facts["counts"]["graph_chunks"]}


async def test_mixed_folder_reingest_modify_and_delete(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                                       collection: str) -> None:
    (tmp_path / "apple.md").write_text(f"# Apple\n\n{APPLE}\n")
    (tmp_path / "ms.txt").write_text(MICROSOFT)
    (tmp_path / "page.html").write_text("<title>Google</title><p>Larry Page founded Google in California.</p>")
    make_pdf(tmp_path / "lovelace.pdf", ["Ada Lovelace worked with Charles Babbage in London."])
    make_docx(tmp_path / "curie.docx")
    first = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (first.files, first.ingested, first.failed) == (5, 5, [])
    pg = await pg_counts(runtime, collection)
    facts = await graph_facts(runtime, collection)
    assert pg["documents"] == facts["counts"]["graph_documents"] == 5
    assert pg["chunks"] == facts["counts"]["graph_chunks"]

    again = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (again.unchanged, again.ingested, again.updated, again.chunks) == (5, 0, 0, 0)

    # Modify one file: exactly its chunks and entities are replaced; shared entities stay.
    (tmp_path / "ms.txt").write_text("Bill Gates founded Microsoft in Albuquerque. Microsoft competes with Apple.")
    changed = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (changed.updated, changed.unchanged) == (1, 4)
    after = await graph_facts(runtime, collection)
    assert ("Satya Nadella", "PERSON") not in after["entities"]
    assert ("Redmond", "GPE") not in after["entities"]
    assert ("Bill Gates", "PERSON") in after["entities"]
    assert frozenset(("apple", "satya nadella")) not in after["relations"]
    assert (await pg_counts(runtime, collection))["chunks"] == after["counts"]["graph_chunks"]

    # Delete the Microsoft document: its own entities go, Apple (also in apple.md) stays with fewer mentions.
    apple_before = next(m for (n, label), m in after["entities"].items() if label == "ORG" and "apple" in n.lower())
    assert await ingestor.delete(collection=collection, source=str((tmp_path / "ms.txt").resolve())) == 1
    final = await graph_facts(runtime, collection)
    assert ("Bill Gates", "PERSON") not in final["entities"]
    assert ("Microsoft", "ORG") not in final["entities"]
    apple_after = next(m for (n, label), m in final["entities"].items() if label == "ORG" and "apple" in n.lower())
    assert apple_after == apple_before - 1
    assert not any("microsoft" in pair for pair in final["relations"])
    assert (await pg_counts(runtime, collection))["documents"] == final["counts"]["graph_documents"] == 4


async def test_sync_and_changes_file(tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("a", "b", "c"):
        (docs / f"{name}.md").write_text(f"# {name}\n\nParis is in France. Document {name}.")
    assert (await ingestor.ingest_paths([docs], collection=collection)).ingested == 3
    (docs / "c.md").unlink()
    synced = await ingestor.ingest_paths([docs], collection=collection, sync=True)
    assert (synced.deleted, synced.unchanged) == (1, 2)
    (docs / "d.md").write_text("# d\n\nBerlin is in Germany.")
    (docs / "a.md").write_text("# a\n\nRome is in Italy.")
    changes = [{"path": str(docs / "d.md"), "added": True}, {"path": str(docs / "a.md"), "modified": True},
               {"path": str(docs / "b.md"), "deleted": True}]
    report = await ingestor.ingest_changes(changes, collection=collection)
    assert (report.ingested, report.updated, report.deleted) == (1, 1, 1)
    assert (await pg_counts(runtime, collection))["documents"] == 2
    facts = await graph_facts(runtime, collection)
    assert facts["counts"]["graph_documents"] == 2


async def test_sync_drops_what_the_folder_no_longer_gives(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                                          collection: str) -> None:
    """``--sync`` makes the collection what an ingest of the folder stores now: a file that became
    ignored, a page that became a template and a partial that a page now includes go from both stores;
    a file that fails to read and one outside ``--file-types`` keep their documents."""
    docs = tmp_path / "docs"
    (docs / "drafts").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    pages = {"guide.md": "# Guide\n\nAda Lovelace wrote notes in London.",
             "drafts/old.md": "# Old\n\nCharles Babbage built engines in Cambridge.",
             "layout.md": "# Layout\n\nGrace Hopper worked in Arlington.",
             "_note.md": "# Note\n\nAlan Turing worked in Manchester.",
             "page.txt": "Edsger Dijkstra taught in Austin."}
    for name, text in pages.items():
        (docs / name).write_text(text)
    (docs / "broken.pdf").write_bytes((REPO / "samples" / "eniac.pdf").read_bytes())
    first = await ingestor.ingest_paths([docs], collection=collection)
    assert first.ingested == 6, first.failed

    (tmp_path / ".gitignore").write_text("drafts/\n")
    (docs / "layout.md").write_text("{% extends 'base.html' %}\n{% block body %}\n{{ content }}\n{% endblock %}\n")
    (docs / "guide.md").write_text("# Guide\n\nAda Lovelace wrote notes in London.\n\n--8<-- \"_note.md\"\n")
    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 not really")
    (docs / "page.txt").write_text("Edsger Dijkstra taught in Austin and Eindhoven.")
    synced = await ingestor.ingest_paths([docs], collection=collection, sync=True, file_types={"md", "pdf"})
    assert synced.deleted == 3, synced.skipped
    stored = {r["source"] for r in await runtime.postgres.q.documents.sources(collection)}
    assert stored == {str(docs / n) for n in ("guide.md", "page.txt", "broken.pdf")}
    facts = await graph_facts(runtime, collection)
    names = {n for n, _ in facts["entities"]}
    assert {"Charles Babbage", "Grace Hopper"}.isdisjoint(names)
    assert {"Ada Lovelace", "Alan Turing"} <= names
    assert facts["counts"]["graph_documents"] == 3
    assert synced.failed and synced.failed[0]["path"] == str(docs / "broken.pdf")
    assert (await pg_counts(runtime, collection))["documents"] == 3


async def test_graph_write_neo4j_refuses_is_set_aside_and_others_go_in(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """PostgreSQL is the source of truth: both documents are stored; the graph write Neo4j refuses is set
    aside (for `graphrag repair`) without holding back the other document's graph or leaving a trace."""
    (tmp_path / "good.md").write_text("# Good\n\nMarie Curie lived in Warsaw.")
    (tmp_path / "poison.md").write_text("# Poison\n\nZephyrine Quallsworth visited Ouagadougou.\n\n"
                                        + "Second paragraph about Ouagadougou. " * 60)
    real = GraphWrites.replace_documents

    async def failing(self: GraphWrites, remove: list[str], docs: list[dict], *args: Any) -> None:
        for doc in docs:
            if "poison" in doc["source"] and len(doc["chunks"]) > 1:
                # Two chunks with one id: Neo4j's uniqueness constraint fails mid-transaction.
                doc["chunks"][1]["id"] = doc["chunks"][0]["id"]
        await real(self, remove, docs, *args)

    monkeypatch.setattr(GraphWrites, "replace_documents", failing)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 2 and not report.failed
    assert (await pg_counts(runtime, collection))["documents"] == 2
    facts = await graph_facts(runtime, collection)
    assert facts["counts"]["graph_documents"] == 1
    assert any("Marie Curie" in name for name, _ in facts["entities"])
    assert not any("Ouagadougou" in name or "Zephyrine" in name for name, _ in facts["entities"])
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (c:Chunk {collection: $c}) WHERE c.text CONTAINS 'Ouagadougou' RETURN count(c) AS n", c=collection)
    assert rows[0]["n"] == 0
    aside = await runtime.postgres.pool.fetch(
        "SELECT state, last_error, document_ids FROM graph_outbox WHERE collection = $1", collection)
    assert [r["state"] for r in aside] == ["failed"] and "already exists" in aside[0]["last_error"]
    await runtime.postgres.pool.execute("DELETE FROM graph_outbox WHERE collection = $1", collection)


async def test_bad_inputs_are_reported_and_do_not_stop_the_rest(tmp_path: Path, ingestor: Ingestor,
                                                                runtime: Runtime, collection: str) -> None:
    (tmp_path / "ok.md").write_text("# Fine\n\nA normal document about Lisbon.")
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "binary.md").write_bytes(b"\x00\x01\x02\x03")
    (tmp_path / "latin1.txt").write_bytes(b"A caf\xe9 in Lisbon.")  # Windows-1252: read as such
    (tmp_path / "noise.txt").write_bytes(bytes(range(128, 256)) * 4)  # no encoding makes text of it
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 nothing else")
    (tmp_path / "broken.docx").write_bytes(b"PK\x03\x04 truncated")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 2
    failed = {Path(f["path"]).name: f["error"] for f in report.failed}
    assert set(failed) == {"binary.md", "noise.txt", "broken.pdf", "broken.docx"}
    assert "UTF-8" in failed["noise.txt"]
    # An empty file loses nothing: skipped with its reason, as a file type we do not read.
    assert {Path(s["path"]).name: s["reason"] for s in report.skipped} == {
        "empty.md": "empty file", "image.png": "unsupported file type '.png'"}
    assert (await pg_counts(runtime, collection))["documents"] == 2


def _cli(settings_home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GRAPHRAG_HOME": str(settings_home)}
    return run_cli(*args, env=env)


def test_cli_counts_many_skipped_files_by_reason_and_lists_them_on_request(
        tmp_path: Path, settings: Any, services: Any, collection: str) -> None:
    # A repository: one page among source files and templates, which the summary counts by reason.
    (tmp_path / "guide.md").write_text("# Guide\n\nThe Quellport harbour opens at dawn.\n")
    for i in range(11):
        (tmp_path / f"module_{i:02d}.py").write_text("x = 1\n")
    (tmp_path / "layout.html").write_text("{% block body %}{% endblock %} {{ footer }}\n")
    result = _cli(settings.home_dir, "ingest", str(tmp_path), "--collection", collection)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    start = lines.index("  skipped 12 files, by reason (--list-skipped lists each):")
    assert lines[start + 1].split(None, 1) == ["11", f"unsupported file type '.py' (e.g. {tmp_path / 'module_00.py'})"]
    assert lines[start + 2].split(None, 1)[0] == "1" and lines[start + 2].endswith(f"not a page: {tmp_path / 'layout.html'}")
    listed = _cli(settings.home_dir, "ingest", str(tmp_path), "--collection", collection, "--list-skipped")
    each = [line for line in listed.stdout.splitlines() if line.startswith("  skipped /")]
    assert len(each) == 12 and f"  skipped {tmp_path / 'module_10.py'}: unsupported file type '.py'" in each


def test_cli_ingest_json_status_and_exit_codes(tmp_path: Path, settings: Any, services: Any,
                                               collection: str) -> None:
    (tmp_path / "a.md").write_text("# A\n\nAmsterdam is in the Netherlands.")
    (tmp_path / "bad.md").write_bytes(b"\x00")
    result = _cli(settings.home_dir, "ingest", str(tmp_path), "--collection", collection, "--json", "--tags", "x,y")
    assert result.returncode == 1, result.stderr  # partly failed
    data = json.loads(result.stdout)
    assert {"files", "ingested", "updated", "unchanged", "deleted", "skipped", "failed", "chunks", "entities",
            "relations", "seconds"} <= set(data)
    assert data["ingested"] == 1 and len(data["failed"]) == 1

    only_bad = tmp_path / "only"
    only_bad.mkdir()
    (only_bad / "bad.md").write_bytes(b"\x00")
    assert _cli(settings.home_dir, "ingest", str(only_bad), "--collection", collection).returncode == 2

    status = json.loads(_cli(settings.home_dir, "status", "--json").stdout)
    mine = status["collections"][collection]
    assert mine["documents"] == mine["graph_documents"] == 1
    assert mine["chunks"] == mine["graph_chunks"] >= 1
    assert not [d for d in status["drift"] if d["collection"] == collection]

    bad = _cli(settings.home_dir, "ingest", str(tmp_path), "--collection", "bad name!")
    assert bad.returncode == 2 and "invalid collection name" in bad.stderr and "Traceback" not in bad.stderr
    gone = _cli(settings.home_dir, "delete", "--source", "/no/such/file.md", "--collection", collection)
    assert gone.returncode == 2 and "no document" in gone.stderr
    deleted = _cli(settings.home_dir, "delete", "--source", str(tmp_path / "a.md"), "--collection", collection)
    assert deleted.returncode == 0, deleted.stderr


# --- feedback: missing paths, summary counts, progress, citations -------------------------------------
REPO = Path(__file__).resolve().parents[2]


async def test_missing_path_writes_nothing(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                           collection: str) -> None:
    """A mistyped path among good ones fails the whole call before anything is written."""
    from graphrag.errors import InvalidInput

    (tmp_path / "apple.md").write_text(f"# Apple\n\n{APPLE}\n")
    with pytest.raises(InvalidInput, match="no such file or directory: .*no-such-dir"):
        await ingestor.ingest_paths([tmp_path, tmp_path / "no-such-dir"], collection=collection)
    assert await pg_counts(runtime, collection) == {"documents": 0, "chunks": 0}

    # A change list with an added file that is not there: nothing deleted, nothing written.
    assert (await ingestor.ingest_paths([tmp_path], collection=collection)).ingested == 1
    changes = [{"path": str(tmp_path / "apple.md"), "deleted": True}, {"path": str(tmp_path / "gone.md"), "added": True}]
    with pytest.raises(InvalidInput, match="gone.md"):
        await ingestor.ingest_changes(changes, collection=collection)
    assert (await pg_counts(runtime, collection))["documents"] == 1

    # --sync on a folder that is gone removes what was stored under it (that is no mistyped path).
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "ms.txt").write_text(MICROSOFT)
    assert (await ingestor.ingest_paths([sub], collection=collection)).ingested == 1
    (sub / "ms.txt").unlink()
    sub.rmdir()
    synced = await ingestor.ingest_paths([sub], collection=collection, sync=True)
    assert synced.deleted == 1
    assert (await pg_counts(runtime, collection))["documents"] == 1
    with pytest.raises(InvalidInput, match="no such file or directory"):
        await ingestor.ingest_paths([tmp_path / "never-there"], collection=collection, sync=True)


async def test_summary_counts_equal_the_graph(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                              collection: str) -> None:
    """``entities`` and ``relations`` are distinct graph contributions: in a new collection exactly what
    Neo4j holds, although the documents share entities; ``totals`` is what the stores hold after."""
    (tmp_path / "apple.md").write_text(f"# Apple\n\n{APPLE}\n")
    (tmp_path / "ms.txt").write_text(MICROSOFT + " Tim Cook visited Redmond.")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 2 and not report.failed
    facts = await graph_facts(runtime, collection)
    per_doc, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (d:Document {collection: $c})-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(e:Entity) "
        "RETURN d.source AS source, count(DISTINCT e) AS n", c=collection)
    # The documents share entities, so a per-document sum would overcount.
    assert sum(r["n"] for r in per_doc) > facts["counts"]["entities"]
    assert report.entities == facts["counts"]["entities"] == len(facts["entities"])
    assert report.relations == facts["counts"]["relations"] == len(facts["relations"])
    assert report.totals == {"documents": 2, "chunks": report.chunks, "entities": report.entities,
                             "relations": report.relations}

    # A third document: the summary counts what it contributes, the totals what the collection holds.
    (tmp_path / "google.md").write_text("# Google\n\nSundar Pichai leads Google in Mountain View. Google competes with Apple.")
    more = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (more.ingested, more.unchanged) == (1, 2)
    source = str((tmp_path / "google.md").resolve())
    mine, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (d:Document {collection: $c, source: $s})-[:HAS_CHUNK]->(c:Chunk) "
        "OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity) "
        "WITH collect(DISTINCT c.id) AS chunk_ids, count(DISTINCT e) AS entities "
        "OPTIONAL MATCH (a:Entity {collection: $c})-[r:RELATED_TO]->() "
        "WHERE any(id IN r.evidence_chunk_ids WHERE id IN chunk_ids) "
        "RETURN entities, count(r) AS relations", c=collection, s=source)
    assert (more.entities, more.relations) == (mine[0]["entities"], mine[0]["relations"])
    after = (await graph_facts(runtime, collection))["counts"]
    assert more.totals == {"documents": 3, "chunks": (await pg_counts(runtime, collection))["chunks"],
                           "entities": after["entities"], "relations": after["relations"]}
    # Nothing changed: no totals to read (re-ingest stays a look-up), no counts.
    same = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (same.unchanged, same.entities, same.relations, same.totals) == (3, 0, 0, None)


async def test_progress_moves_per_document_before_the_batch_is_written(
        tmp_path: Path, ingestor: Ingestor, collection: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bar advances as documents finish their model work, long before their batch is written."""
    from graphrag.ingest import pipeline

    events: list[tuple[str, int]] = []

    class Bar:  # stands in for tqdm: records what the user would see on the documents' bar
        def __init__(self, *args: Any, total: int = 0, unit: str = "", **kwargs: Any) -> None:
            self.mine = unit == "doc"  # not the loader's bar (files)
            if self.mine:
                events.append(("total", total))

        def update(self, n: int = 1) -> None:
            if self.mine:
                events.append(("done", n))

        def set_postfix(self, **kwargs: Any) -> None:
            if self.mine:
                events.append(("written", kwargs["written"]))

        def close(self) -> None:
            pass

    monkeypatch.setattr(pipeline, "tqdm", Bar)
    monkeypatch.setattr(pipeline, "SLICE_CHUNKS", 1)  # one document per slice
    # One batch (a small ingest would start with a batch of one document: batch_bounds' ramp).
    monkeypatch.setattr(pipeline.Ingestor, "_batches", lambda self, items: [items])
    for n, city in enumerate(["Lisbon", "Madrid", "Rome", "Vienna"]):
        (tmp_path / f"d{n}.md").write_text(f"# Trip {n}\n\nAda Lovelace travelled to {city}.")
    report = await ingestor.ingest_paths([tmp_path], collection=collection, progress=True)
    assert report.ingested == 4
    # One batch, written once: every document moved the bar on its own before that.
    assert events == [("total", 4), ("done", 1), ("done", 1), ("done", 1), ("done", 1), ("written", 4)]


def test_cli_missing_path_exits_2_and_writes_nothing(tmp_path: Path, settings: Any, services: Any,
                                                     collection: str) -> None:
    (tmp_path / "a.md").write_text("# A\n\nAmsterdam is in the Netherlands.")
    for extra in ([], ["--json"]):
        result = _cli(settings.home_dir, "ingest", str(tmp_path / "a.md"), str(tmp_path / "typo.md"),
                      "--collection", collection, *extra)
        assert result.returncode == 2
        assert result.stderr.strip().splitlines() == [f"graphrag: error: no such file or directory: {tmp_path / 'typo.md'}"]
        assert result.stdout == ""
    status = json.loads(_cli(settings.home_dir, "status", "--json").stdout)
    assert collection not in status["collections"]


def test_cli_pdf_hits_show_their_page(tmp_path: Path, settings: Any, services: Any, collection: str) -> None:
    pdf = tmp_path / "eniac.pdf"
    pdf.write_bytes((REPO / "samples" / "eniac.pdf").read_bytes())
    (tmp_path / "notes.md").write_text("# Notes\n\nBetty Holberton later wrote a sort-merge generator.")
    ingested = json.loads(_cli(settings.home_dir, "ingest", str(tmp_path), "--collection", collection, "--json").stdout)
    assert ingested["ingested"] == 2
    # The summary matches the store counts `graphrag status` reads.
    status = json.loads(_cli(settings.home_dir, "status", "--json").stdout)["collections"][collection]
    assert (ingested["entities"], ingested["relations"]) == (status["entities"], status["relations"])

    query = "Kathleen McNulty Jean Bartik first programmers"
    human = _cli(settings.home_dir, "search", query, "--collection", collection, "--mode", "keyword", "-k", "3")
    assert human.returncode == 0, human.stderr
    lines = [line for line in human.stdout.splitlines() if re.match(r"\s*\d+\. ", line)]  # " 1. score  source"
    assert f"{pdf} p. 2" in lines[0], human.stdout
    assert not any("notes.md p." in line for line in lines)
    data = json.loads(_cli(settings.home_dir, "search", query, "--collection", collection, "--json", "-k", "3").stdout)
    top = data["results"][0]
    assert top["source"] == str(pdf) and top["metadata"]["page"] == 2


async def test_build_outputs_the_gitignore_names_stay_out_of_a_folders_ingest(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("site/\n")
    (tmp_path / ".graphragignore").write_text("drafts/\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "harbour.md").write_text("# Harbour\n\nThe Quellport harbour opens at dawn.\n")
    (tmp_path / "site" / "harbour").mkdir(parents=True)  # what `mkdocs build` wrote: the page again
    (tmp_path / "site" / "harbour" / "index.html").write_text(
        "<html><body><main><h1>Harbour</h1><p>The Quellport harbour opens at dawn.</p></main></body></html>")
    (tmp_path / "drafts").mkdir()
    (tmp_path / "drafts" / "tides.md").write_text("# Tides\n\nA Quellport draft.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    assert {(Path(s["path"]).name, s["reason"]) for s in report.skipped} >= {
        ("site", "ignored by .gitignore"), ("drafts", "ignored by .graphragignore")}
    rows = await runtime.postgres.pool.fetch("SELECT source FROM documents WHERE collection = $1", collection)
    assert [Path(r["source"]).name for r in rows] == ["harbour.md"]
    # the built folder named outright is read: the caller asked for it
    built = await ingestor.ingest_paths([tmp_path / "site"], collection=collection)
    assert built.ingested == 1, built


async def test_a_saved_web_pages_resources_are_not_documents(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> None:
    """A browser saves "Page.html" beside "Page_files/" (scripts, styles, the HTML of its ad frames)."""
    (tmp_path / "Harbour report.html").write_text(
        "<html><body><main><h1>Harbour report</h1><p>The Quellport harbour opens at dawn.</p></main></body></html>")
    (tmp_path / "Harbour report_files").mkdir()
    (tmp_path / "Harbour report_files" / "ad-frame.html").write_text(
        "<html><body><p>Buy zyxquart tickets now, the best offers of the season!</p></body></html>")
    (tmp_path / "Harbour report_files" / "notes.md").write_text("# Widget\n\nA frame's text.\n")
    (tmp_path / "field_files").mkdir()  # no page beside it: a folder of the user's own
    (tmp_path / "field_files" / "tides.md").write_text("# Tides\n\nThe Marrowgate tide tables.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (2, []), report
    assert [(Path(s["path"]).name, s["reason"]) for s in report.skipped] == [
        ("Harbour report_files", "the resources of the saved web page Harbour report.html")]
    rows = await runtime.postgres.pool.fetch("SELECT source FROM documents WHERE collection = $1 ORDER BY source",
                                             collection)
    assert [Path(r["source"]).name for r in rows] == ["Harbour report.html", "tides.md"]


async def test_the_users_global_git_excludes_stay_out_of_a_repositorys_ingest(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[core]\n\texcludesfile = ~/.gitignore_global\n")
    (home / ".gitignore_global").write_text(".idea/\nscratch.md\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / ".idea").mkdir()
    (repo / ".idea" / "notes.md").write_text("# IDE\n\nWorkspace state.\n")
    (repo / "scratch.md").write_text("# Scratch\n\nA Quellport note to self.\n")
    (repo / "guide.md").write_text("# Guide\n\nThe Quellport harbour opens at dawn.\n")
    report = await ingestor.ingest_paths([repo], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    assert {(Path(s["path"]).name, s["reason"]) for s in report.skipped} == {
        ("scratch.md", f"ignored by {home / '.gitignore_global'}")}
    rows = await runtime.postgres.pool.fetch("SELECT source FROM documents WHERE collection = $1", collection)
    assert [Path(r["source"]).name for r in rows] == ["guide.md"]


async def test_a_dry_run_reports_what_an_ingest_would_read_and_writes_nothing(
        tmp_path: Path, settings: Any, services: Any, runtime: Runtime, collection: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("site/\n")
    (tmp_path / "guide.md").write_text("# Guide\n\nThe Quellport harbour opens at dawn.\n")
    (tmp_path / "layout.html").write_text("{% block body %}{% endblock %} {{ footer }}\n")
    (tmp_path / "bad.md").write_bytes(b"\x00\x01")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "index.html").write_text("<main><p>The Quellport harbour opens at dawn.</p></main>")
    result = _cli(settings.home_dir, "ingest", str(tmp_path), "--collection", collection, "--dry-run")
    assert result.returncode == 1, result.stderr  # one file fails, as the ingest would report it
    assert result.stdout.splitlines()[0] == (
        "3 files: 1 documents to ingest (46 characters), 2 skipped, 1 failed (dry run: nothing written)")
    assert f"  skipped {tmp_path / 'site'}: ignored by .gitignore" in result.stdout
    assert result.stderr.startswith(f"  failed  {tmp_path / 'bad.md'}: ")
    data = json.loads(_cli(settings.home_dir, "ingest", str(tmp_path), "--dry-run", "--json").stdout)
    assert data["dry_run"] is True and data["files"] == 3
    assert data["documents"] == [{"path": str(tmp_path / "guide.md"), "title": "Guide", "characters": 46}]
    assert {Path(s["path"]).name for s in data["skipped"]} == {"site", "layout.html"}
    assert collection not in await runtime.postgres.collection_counts()  # nothing written
    missing = _cli(settings.home_dir, "ingest", str(tmp_path / "nowhere"), "--dry-run")
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr
