"""Portable collections against the real stores: export -> import round trips (library, CLI, REST),
idempotent re-imports, and damaged, foreign or unusable archives refused with nothing written."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import tarfile
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from pydantic import SecretStr

from graphrag import archive
from graphrag.archive import ArchiveError, ArchiveWriter, iter_members
from graphrag.config import Settings
from graphrag.errors import InvalidInput, PayloadTooLarge
from graphrag.ingest.pipeline import Ingestor
from graphrag.models import Document
from graphrag.portable import export_to_file, import_archive, stage
from graphrag.runtime import Runtime
from graphrag.search.router import SearchRouter
from tests.conftest import REPO, InProcessApi
from tests.helpers import run_cli, rest_search

# People and places shared across documents, so that relations cite chunks of several documents (and,
# with two chunks per part, of several parts); two documents have sections (several chunks each).
DOCS = {
    "curie.md": "# Marie Curie\n\nMarie Curie worked with Pierre Curie in Paris on radium and polonium.\n\n"
                "## Nobel Prize\n\nMarie Curie received the Nobel Prize in Physics with Pierre Curie and "
                "Henri Becquerel in Stockholm.",
    "becquerel.md": "# Henri Becquerel\n\nHenri Becquerel discovered radioactivity in Paris. Pierre Curie "
                    "and Marie Curie continued his work on radium.",
    "bohr.md": "# Niels Bohr\n\nNiels Bohr founded an institute in Copenhagen.\n\n## Visitors\n\n"
               "Werner Heisenberg and Marie Curie visited Niels Bohr in Copenhagen.",
    "heisenberg.md": "# Werner Heisenberg\n\nWerner Heisenberg worked with Niels Bohr in Copenhagen on "
                     "quantum mechanics before he returned to Leipzig.",
    "lovelace.md": "# Ada Lovelace\n\nAda Lovelace wrote the first program for the Analytical Engine of "
                   "Charles Babbage in London.",
}
QUERIES = ["Who worked with Pierre Curie on radium?", "Copenhagen institute", "Analytical Engine program",
           "Nobel Prize in Physics Stockholm", "quantum mechanics Leipzig"]
MODES = ("vector", "keyword", "hybrid", "graph", "auto")


@pytest.fixture
async def source(tmp_path: Path, ingestor: Ingestor, collection: str, runtime: Runtime) -> AsyncIterator[str]:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    report = await ingestor.ingest_paths([folder], collection=collection, tags=["science"])
    assert report.ingested == len(DOCS), report.failed
    yield collection
    # The same entities in many collections would crowd each other out of the graph leg's entity
    # look-up (a global vector index, filtered by collection): leave none behind.
    names = [r["name"] for r in await runtime.postgres.pool.fetch(
        "SELECT name FROM collections WHERE name LIKE $1", f"{collection}%")]
    for name in names:
        await drop(runtime, name)


@pytest.fixture
async def dropped(runtime: Runtime) -> AsyncIterator[list[str]]:
    """Collection name prefixes whose collections are removed after the test."""
    prefixes: list[str] = []
    yield prefixes
    for prefix in prefixes:
        for row in await runtime.postgres.pool.fetch("SELECT name FROM collections WHERE name LIKE $1", f"{prefix}%"):
            await drop(runtime, row["name"])


async def drop(rt: Runtime, collection: str) -> None:
    """Remove a collection from both stores."""
    async with rt.postgres.pool.acquire() as conn, conn.transaction():
        for table, column in (("documents", "collection"), ("lexeme_stats", "collection"), ("chunk_postings", "collection"),
                              ("collection_stats", "collection"), ("graph_outbox", "collection"),
                              ("collections", "name")):
            await conn.execute(f"DELETE FROM {table} WHERE {column} = $1", collection)
    await rt.neo4j.driver.execute_query("MATCH (n) WHERE n.collection = $collection DETACH DELETE n",
                                        {"collection": collection}, database_=rt.neo4j.database)


async def _export(rt: Runtime, collection: str, path: Path, part_chunks: int = 2) -> Path:
    report = await export_to_file(rt, collection, path, part_chunks=part_chunks)
    assert report.documents == len(DOCS) and report.parts > 1, report
    return path


# --- what the stores hold, for comparisons ------------------------------------------------------------
async def state(rt: Runtime, collection: str, *, ids: bool) -> dict[str, Any]:
    """Everything both stores hold for a collection. With ``ids=False`` every id is replaced by what
    identifies the row within the collection (a document's source, a chunk's source and index), so
    that a collection and its copy under another name compare equal."""
    pool = rt.postgres.pool
    docs = await pool.fetch("SELECT id, source, title, content_hash, metadata, tags, created_at, updated_at "
                            "FROM documents WHERE collection = $1", collection)
    source_of = {str(d["id"]): d["source"] for d in docs}
    chunks = await pool.fetch(
        "SELECT id, document_id, chunk_index, content, heading_path, char_start, char_end, token_count, has_code, "
        "metadata, embedding, embedding_model, text_config, tsv::text AS tsv FROM chunks WHERE collection = $1",
        collection)
    name_of = {str(c["id"]): (source_of[str(c["document_id"])], c["chunk_index"]) for c in chunks}

    def cid(value: str) -> Any:
        return value if ids else name_of.get(value, ("?", value))

    def did(value: str) -> Any:
        return value if ids else source_of.get(value, value)

    out: dict[str, Any] = {
        "documents": sorted(((did(str(d["id"])), d["source"], d["title"], d["content_hash"], d["metadata"],
                              tuple(d["tags"]), d["created_at"], d["updated_at"]) for d in docs), key=repr),
        "chunks": sorted(((cid(str(c["id"])), did(str(c["document_id"])), c["chunk_index"], c["content"],
                           tuple(c["heading_path"]), c["char_start"], c["char_end"], c["token_count"], c["has_code"],
                           c["metadata"], tuple(c["embedding"].to_list()), c["embedding_model"], c["text_config"],
                           c["tsv"]) for c in chunks), key=repr),
        "collection_stats": tuple(await pool.fetchrow(
            "SELECT chunks, tokens FROM collection_stats WHERE collection = $1", collection) or ()),
        "lexemes": sorted(tuple(r) for r in await pool.fetch(
            "SELECT lexeme, df FROM lexeme_stats WHERE collection = $1 AND df > 0", collection)),
        "model": tuple(await pool.fetchrow(
            "SELECT embedding_model, text_config::text, extended FROM collections WHERE name = $1", collection) or ()),
        "representations": sorted(((did(str(r["document_id"])), cid(str(r["chunk_id"])) if r["chunk_id"] else None,
                                    r["kind"], r["content"], r["token_count"], r["generator"],
                                    tuple(r["embedding"].to_list()), r["embedding_model"], r["text_config"], r["tsv"])
                                   for r in await pool.fetch(
            "SELECT document_id, chunk_id, kind, content, token_count, generator, embedding, embedding_model, "
            "text_config, tsv::text AS tsv FROM representations WHERE collection = $1", collection)), key=repr),
    }

    async def graph(query: str) -> list[dict[str, Any]]:
        result = await rt.neo4j.driver.execute_query(query, parameters_={"c": collection},
                                                     database_=rt.neo4j.database)
        return [r.data() for r in result.records]

    out["graph_documents"] = sorted((did(r["id"]), r["source"], r["title"], r["title_norm"]) for r in await graph(
        "MATCH (d:Document {collection: $c}) RETURN d.id AS id, d.source AS source, d.title AS title, "
        "d.title_norm AS title_norm"))
    out["graph_chunks"] = sorted(((cid(r["id"]), did(r["doc"]), r["index"], r["text"],
                                   cid(r["next"]) if r["next"] else None) for r in await graph(
        "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk {collection: $c}) OPTIONAL MATCH (c)-[:NEXT]->(n:Chunk) "
        "RETURN c.id AS id, d.id AS doc, c.index AS index, c.text AS text, n.id AS next")), key=repr)
    entities = await graph(
        "MATCH (e:Entity {collection: $c}) RETURN e.id AS id, e.key AS key, e.name AS name, e.label AS label, "
        "e.norm AS norm, e.mentions AS mentions, e.embedding AS vector, e.aliases AS aliases")
    key_of = {e["id"]: e["key"] for e in entities}
    out["entities"] = sorted(((e["id"] if ids else None), e["key"], e["name"], e["label"], e["norm"], e["mentions"],
                              tuple(np.float32(e["vector"] or []).tolist()), tuple(sorted(e["aliases"] or [])))
                             for e in entities)
    out["mentions"] = sorted((cid(r["chunk"]), key_of[r["entity"]], r["count"], r["label"]) for r in await graph(
        "MATCH (c:Chunk {collection: $c})-[m:MENTIONS]->(e:Entity) RETURN c.id AS chunk, e.id AS entity, "
        "m.count AS count, m.label AS label"))
    relations = []
    for r in await graph("MATCH (a:Entity {collection: $c})-[r:RELATED_TO]->(b:Entity) RETURN a.id AS a, b.id AS b, "
                         "r.evidence_chunk_ids AS evidence, r.chunk_weights AS weights, r.weight AS weight, "
                         "r.predicates AS predicates, r.predicate_evidence AS predicate_evidence"):
        pair = (r["a"], r["b"]) if ids else tuple(sorted((key_of[r["a"]], key_of[r["b"]])))
        evidence = [f"{p.rpartition('@')[0]}@{cid(p.rpartition('@')[2])}" for p in r["predicate_evidence"]]
        relations.append((pair, tuple(cid(c) for c in r["evidence"]), tuple(r["weights"]), r["weight"],
                          tuple(r["predicates"]), tuple(evidence)))
    out["relations"] = sorted(relations, key=repr)
    return out


async def nothing_of(rt: Runtime, collection: str) -> dict[str, int]:
    """Rows of ``collection`` anywhere (all zero when an import wrote nothing)."""
    pool = rt.postgres.pool
    counts = {
        "documents": await pool.fetchval("SELECT count(*) FROM documents WHERE collection = $1", collection),
        "chunks": await pool.fetchval("SELECT count(*) FROM chunks WHERE collection = $1", collection),
        "collections": await pool.fetchval("SELECT count(*) FROM collections WHERE name = $1", collection),
        "outbox": await pool.fetchval("SELECT count(*) FROM graph_outbox WHERE collection = $1", collection),
        "stats": await pool.fetchval("SELECT count(*) FROM collection_stats WHERE collection = $1", collection),
    }
    result = await rt.neo4j.driver.execute_query("MATCH (n {collection: $c}) RETURN count(n) AS n",
                                                 parameters_={"c": collection}, database_=rt.neo4j.database)
    counts["graph_nodes"] = result.records[0]["n"]
    return counts


def ranked(response: dict[str, Any]) -> list[list[str]]:
    """Chunk texts in rank order, those with equal scores grouped (ties may break by id, and ids differ)."""
    groups: list[tuple[float, list[str]]] = []
    for hit in response["results"]:
        score = round(hit["score"], 6)
        if groups and groups[-1][0] == score:
            groups[-1][1].append(hit["content"])
        else:
            groups.append((score, [hit["content"]]))
    return [sorted(texts) for _, texts in groups]


def _debug(r: dict[str, Any]) -> list[Any]:
    return [(h["score"], {k: (v["rank"], v["score"]) for k, v in h["legs"].items()}, h["content"][:30])
            for h in r["results"]]


# --- archives made to order -------------------------------------------------------------------------
def rewrite(src: Path, dst: Path, edit: Callable[[str, bytes], bytes | None], *,
            manifest: Callable[[dict[str, Any]], None] | None = None, recompute: bool = True) -> Path:
    """A copy of an archive with members edited (``edit`` returns new bytes, or None to keep them); with
    ``recompute`` the manifest gets the new checksums (a valid archive with other content)."""
    members = list(iter_members(src))
    body = json.loads(dict(members)[archive.MANIFEST])
    with dst.open("wb") as handle:
        writer = ArchiveWriter(handle, compression="gzip")
        for name, data in members:
            if name == archive.MANIFEST:
                continue
            new = edit(name, data)
            writer.add(name, data if new is None else new)
        listed = {m["name"]: m for m in body["members"]}
        if recompute:
            for m in writer.members:
                listed[m.name].update(sha256=m.sha256, bytes=m.bytes)
        body["members"] = list(listed.values())
        if manifest is not None:
            manifest(body)
        writer.members = []  # the manifest below is body's own list
        info = tarfile.TarInfo(archive.MANIFEST)
        data = json.dumps(body).encode()
        info.size = len(data)
        writer._tar.addfile(info, io.BytesIO(data))
        writer._tar.close()
        writer._gzip.close()  # type: ignore[union-attr]
    return dst


def with_model(model: dict[str, Any]) -> Callable[[str, bytes], bytes | None]:
    def edit(name: str, data: bytes) -> bytes | None:
        if name != archive.HEADER:
            return None
        header = json.loads(data)
        header["embedding_model"] = model
        return json.dumps(header).encode()

    return edit


# --- pure: the format ---------------------------------------------------------------------------------
def test_vectors_round_trip_exactly_and_bad_ones_are_archive_errors() -> None:
    vec = np.random.default_rng(0).standard_normal(384).astype(np.float32)
    assert np.array_equal(archive.decode_vector(archive.encode_vector(vec), 384, "x"), vec)
    assert archive.encode_vector(None) is None and archive.decode_vector(None, 384, "x") is None
    for bad, words in [(archive.encode_vector(vec[:10]), "10 dimensions"), ("not base64!", "base64"),
                       (5, "base64 string"), (archive.encode_vector(np.full(384, np.nan)), "NaN")]:
        with pytest.raises(ArchiveError, match=words):
            archive.decode_vector(bad, 384, "chunks line 1")


def test_writer_streams_members_and_verify_reads_them_back(tmp_path: Path) -> None:
    header = {"format": archive.FORMAT, "format_version": archive.FORMAT_VERSION, "collection": "c",
              "text_config": "english",
              "embedding_model": {"name": "m", "provider": "sentence-transformers", "spec": "m", "dim": 4}}
    writer = ArchiveWriter(compression="gzip")
    writer.add(archive.HEADER, json.dumps(header).encode())
    chunks = [writer.take()]
    rows = [{"text": f"row {n} " + "lorem ipsum dolor " * 40} for n in range(400)]
    for kind in archive.PART_KINDS:
        writer.add_rows(archive.part_member(1, kind), rows if kind == "documents" else [])
        chunks.append(writer.take())
    assert sum(map(len, chunks)) > 0, "a part's bytes are handed over before the archive is finished"
    writer.finish(header)
    chunks.append(writer.take())
    path = tmp_path / "a.tar.gz"
    path.write_bytes(b"".join(chunks))
    seen: list[str] = []
    manifest = archive.verify(path, lambda name, data: seen.append(name))
    assert manifest.parts == 1 and manifest.collection == "c" and len(seen) == len(archive.PART_KINDS)
    assert [m.name for m in manifest.members][0] == archive.HEADER
    newer = tmp_path / "newer.tar.gz"
    rewrite(path, newer, lambda n, d: json.dumps({**header, "format_version": 99}).encode()
            if n == archive.HEADER else None)
    with pytest.raises(ArchiveError, match="format version 99"):
        archive.verify(newer)


async def test_staging_an_upload_stops_at_the_limit_and_leaves_no_file(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    async def upload() -> AsyncIterator[bytes]:
        for _ in range(10):
            yield b"x" * 1000

    with pytest.raises(PayloadTooLarge, match="size limit"):
        await stage(upload(), limit_bytes=5000)
    assert list(tmp_path.iterdir()) == []
    staged = await stage(upload(), limit_bytes=10_000)
    assert staged.read_bytes() == b"x" * 10_000 and staged.parent == tmp_path
    staged.unlink()


# --- real stores --------------------------------------------------------------------------------------
async def test_round_trip_into_a_new_collection_gives_the_same_search_graph_and_vectors(
        rt: Runtime, source: str, tmp_path: Path, models: Any) -> None:
    router = SearchRouter(rt.postgres, rt.neo4j, models.embedders, models.nlp)

    async def searches(collection: str) -> dict[tuple[str, str], dict[str, Any]]:
        # A generous leg timeout: the comparison is about results, not about a loaded machine's speed.
        return {(q, m): await rest_search(router, q, mode=m, limit=5, collections=[collection], leg_timeout_s=120)
                for q in QUERIES for m in MODES}

    before, searched = await state(rt, source, ids=False), await searches(source)
    path = await _export(rt, source, tmp_path / "a.tar.gz")
    # The archive replaces the original, as in a move to another deployment (and the copy's entities do
    # not compete with the original's identical ones in the entity look-up).
    await drop(rt, source)
    copy = f"{source}_copy"
    report = await import_archive(rt, path, collection=copy, embedders=models.embedders)
    assert report.created and report.source_collection == source and report.documents == len(DOCS)
    after = await state(rt, copy, ids=False)
    assert after["entities"] and after["relations"] and after["mentions"]
    for key in before:
        assert after[key] == before[key], key
    # Relations whose evidence spans documents of several parts came back whole, evidence in order.
    assert any(len({c[0] for c in r[1]}) > 1 for r in after["relations"])
    assert report.totals == {"documents": len(DOCS), "chunks": len(after["chunks"]),
                             "entities": len(after["entities"]), "relations": len(after["relations"])}
    for (query, mode), a in searched.items():
        b = await rest_search(router, query, mode=mode, limit=5, collections=[copy], leg_timeout_s=120)
        assert all(leg["status"] in ("ok", "skipped") for r in (a, b) for leg in r["legs"].values()), (a, b)
        assert ranked(a) == ranked(b), (query, mode, _debug(a), _debug(b))
        assert a["results"] or mode == "graph"


async def test_importing_twice_gives_the_same_state(rt: Runtime, source: str, tmp_path: Path, models: Any) -> None:
    path = await _export(rt, source, tmp_path / "a.tar.gz")
    copy = f"{source}_twice"
    await import_archive(rt, path, collection=copy, embedders=models.embedders)
    first = await state(rt, copy, ids=True)
    again = await import_archive(rt, path, collection=copy, embedders=models.embedders)
    assert again.replaced == len(DOCS) and not again.created
    assert await state(rt, copy, ids=True) == first
    # Restoring a collection under its own name keeps its ids: the original is unchanged by it.
    original = await state(rt, source, ids=True)
    await import_archive(rt, path, embedders=models.embedders)
    assert await state(rt, source, ids=True) == original


async def test_damaged_or_foreign_archives_are_refused_with_nothing_written(
        rt: Runtime, source: str, tmp_path: Path, models: Any) -> None:
    good = await _export(rt, source, tmp_path / "a.tar.gz")
    raw = good.read_bytes()
    truncated = tmp_path / "truncated.tar.gz"
    truncated.write_bytes(raw[: len(raw) // 2])
    uncompressed = gzip.decompress(raw)
    cut = tmp_path / "cut.tar"  # a whole-member cut: a tar that ends cleanly but lacks its manifest
    cut.write_bytes(uncompressed[: uncompressed.rfind(b"manifest.json")] + b"\0" * 1024)
    tampered_sum = rewrite(good, tmp_path / "sum.tar.gz", lambda n, d: None, recompute=False,
                           manifest=lambda m: m["members"][2].update(sha256="0" * 64))
    tampered_data = rewrite(good, tmp_path / "data.tar.gz",
                            lambda n, d: d.replace(b"Copenhagen", b"Kopenhagen") if n.endswith("chunks.jsonl") else None,
                            recompute=False)
    foreign = tmp_path / "foreign.tar.gz"
    with tarfile.open(foreign, "w:gz") as tar:
        tar.add(REPO / "README.md", arcname="README.md")
    noise = tmp_path / "noise.bin"
    noise.write_bytes(b"\x00\x01 not an archive " * 100)
    empty = tmp_path / "empty.tar"
    empty.write_bytes(b"")
    bad_row = rewrite(good, tmp_path / "row.tar.gz",  # checksums fine, content not an import can write
                      lambda n, d: d.replace(b'"has_code":false', b'"has_code":"no"', 1)
                      if n.endswith("chunks.jsonl") else None)
    cases = {truncated: "damaged", cut: "incomplete", tampered_sum: "checksum", tampered_data: "checksum",
             foreign: "not a graphrag collection archive", noise: "not a graphrag collection archive",
             empty: "not a graphrag collection archive", bad_row: "has_code"}
    target = f"{source}_bad"
    for path, words in cases.items():
        with pytest.raises(ArchiveError, match=words):
            await import_archive(rt, path, collection=target, embedders=models.embedders)
        assert set((await nothing_of(rt, target)).values()) == {0}, path.name
    # The CLI: one line on stderr, exit status 2.
    env = {"GRAPHRAG_HOME": str(rt.settings.home_dir), "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    proc = run_cli("import", str(tampered_sum), "--collection", target, env=env, replace_env=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("graphrag: error: the archive is damaged") and proc.stderr.count("\n") == 1
    assert set((await nothing_of(rt, target)).values()) == {0}


async def test_an_archive_of_another_model_needs_that_model(rt: Runtime, source: str, tmp_path: Path,
                                                            models: Any) -> None:
    good = await _export(rt, source, tmp_path / "a.tar.gz")
    # An existing collection with another model refuses the archive's vectors.
    other = f"{source}_other"
    await rt.postgres.register_model("tiny-test-model", "sentence-transformers", "sentence-transformers:/nowhere/tiny",
                                     8, None)
    await rt.postgres.create_collection(other, "tiny-test-model", "english")
    with pytest.raises(InvalidInput, match="uses the embedding model tiny-test-model"):
        await import_archive(rt, good, collection=other, embedders=models.embedders)
    assert (await nothing_of(rt, other))["documents"] == 0
    # A model this deployment cannot load is refused before anything is written.
    missing = rewrite(good, tmp_path / "missing.tar.gz", with_model(
        {"name": "absent-model", "provider": "sentence-transformers", "spec": "sentence-transformers:/nowhere/absent",
         "dim": 384, "base_url": None}),
        manifest=lambda m: m.update(embedding_model={"name": "absent-model", "provider": "sentence-transformers",
                                                     "spec": "sentence-transformers:/nowhere/absent", "dim": 384,
                                                     "base_url": None}))
    fresh = f"{source}_absent"
    with pytest.raises(InvalidInput, match="cannot be loaded here"):
        await import_archive(rt, missing, collection=fresh, embedders=models.embedders)
    assert set((await nothing_of(rt, fresh)).values()) == {0}
    assert await rt.postgres.model("absent-model") is None


async def test_ids_of_another_collection_are_refused(rt: Runtime, source: str, tmp_path: Path, models: Any) -> None:
    """An archive restored under its own name keeps its ids; if they belong to another collection here
    (a crafted archive), nothing of it is written."""
    good = await _export(rt, source, tmp_path / "a.tar.gz")
    thief = f"thief_{uuid.uuid4().hex[:8]}"

    def rename(body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "collection": thief}

    crafted = rewrite(good, tmp_path / "crafted.tar.gz",
                      lambda n, d: json.dumps(rename(json.loads(d))).encode() if n == archive.HEADER else None,
                      manifest=lambda m: m.update(collection=thief))
    with pytest.raises(ArchiveError, match=f"already belongs to collection '{source}'"):
        await import_archive(rt, crafted, embedders=models.embedders)
    assert set((await nothing_of(rt, thief)).values()) == {0}


def downgrade(src: Path, dst: Path) -> Path:
    """The archive as format version 1 wrote it: no representations members, no extended mode."""
    members = list(iter_members(src))
    with dst.open("wb") as handle:
        writer = ArchiveWriter(handle, compression="gzip")
        manifest: dict[str, Any] = {}
        for name, data in members:
            if name in (archive.HEADER, archive.MANIFEST):
                body = json.loads(data)
                body.update(format_version=1)
                body.pop("extended", None)
                if name == archive.MANIFEST:
                    body.pop("members")
                    body["counts"].pop("representations")
                    manifest = body
                    continue
                data = json.dumps(body).encode()
            elif name.endswith("representations.jsonl"):
                continue
            writer.add(name, data)
        writer.finish(manifest)
    return dst


async def test_representations_and_aliases_travel_with_the_collection(
        rt: Runtime, ingestor: Ingestor, tmp_path: Path, models: Any, dropped: list[str]) -> None:
    """Extended-search representations (with their vectors and the collection's mode) and the aliases
    documents define for entities come back from an archive as they were: the same extended and expanded
    searches. A version-1 archive, which has neither, still imports."""
    collection = f"ext_{uuid.uuid4().hex[:8]}"
    dropped.append(collection)
    docs = {**DOCS, "esa.md": "# Launch\n\nThe European Space Agency (ESA) launched the probe from Kourou.",
            "shield.md": "# Shield tests\n\nESA engineers tested the heat shield in a vacuum chamber."}
    report = await ingestor.ingest_documents(
        [(Document(source=n, title=n.removesuffix(".md"), text=t, kind="markdown"), n) for n, t in docs.items()],
        collection=collection, extended_mode="extractive")
    assert report.ingested == len(docs) and report.representations > 0, report.failed
    router = SearchRouter(rt.postgres, rt.neo4j, models.embedders, models.nlp)
    asks = [(q, m, opts) for q in [*QUERIES, "European Space Agency heat shield"] for m in ("hybrid", "auto")
            for opts in ({"extended": True}, {"expand": True})]

    async def searches(name: str) -> list[dict[str, Any]]:
        return [await rest_search(router, q, mode=m, limit=5, collections=[name], leg_timeout_s=120, **opts)
                for q, m, opts in asks]

    before, searched = await state(rt, collection, ids=False), await searches(collection)
    assert before["model"][2] == "extractive" and {r[2] for r in before["representations"]} == {
        "title", "summary", "proposition"}
    assert any("ESA" in e[7] for e in before["entities"]), "the alias the document defines is on its entity"
    exported = await export_to_file(rt, collection, tmp_path / "ext.tar.gz", part_chunks=2)
    assert exported.representations == len(before["representations"]) and exported.parts > 1
    archive_path = tmp_path / "ext.tar.gz"
    await drop(rt, collection)
    copy = f"{collection}_copy"
    imported = await import_archive(rt, archive_path, collection=copy, embedders=models.embedders)
    assert imported.extended == "extractive" and imported.representations == len(before["representations"])
    after = await state(rt, copy, ids=False)
    for key in before:
        assert after[key] == before[key], key
    for (query, mode, opts), a, b in zip(asks, searched, await searches(copy), strict=True):
        assert ranked(a) == ranked(b), (query, mode, opts, _debug(a), _debug(b))
        assert [h.get("matched") for h in a["results"]] == [h.get("matched") for h in b["results"]], (query, opts)
        assert a["legs"]["keyword"].get("expanded") == b["legs"]["keyword"].get("expanded"), (query, opts)
    esa = next(b for (q, _, o), b in zip(asks, searched, strict=True) if q.startswith("European") and "expand" in o)
    assert "ESA" in esa["legs"]["keyword"]["expanded"]

    # A damaged representation row is refused with nothing written.
    bad = rewrite(archive_path, tmp_path / "bad.tar.gz",
                  lambda n, d: d.replace(b'"kind":"proposition"', b'"kind":"slogan"', 1)
                  if n.endswith("representations.jsonl") else None)
    with pytest.raises(ArchiveError, match="kind must be"):
        await import_archive(rt, bad, collection=f"{collection}_bad", embedders=models.embedders)
    assert set((await nothing_of(rt, f"{collection}_bad")).values()) == {0}

    # Version 1 (before representations): the documents come, with no representations and no mode.
    old = downgrade(archive_path, tmp_path / "v1.tar.gz")
    v1 = await import_archive(rt, old, collection=f"{collection}_v1", embedders=models.embedders)
    assert v1.format_version == 1 and v1.representations == 0 and v1.documents == len(docs)
    v1_state = await state(rt, f"{collection}_v1", ids=False)
    assert v1_state["representations"] == [] and v1_state["model"][2] is None
    assert v1_state["chunks"] == before["chunks"]


async def test_cli_export_import_round_trip(settings: Settings, services: Any, tmp_path: Path,
                                           dropped: list[str]) -> None:
    collection = f"cli_{uuid.uuid4().hex[:8]}"
    dropped.append(collection)
    folder = tmp_path / "docs"
    folder.mkdir()
    for name in ("curie.md", "lovelace.md"):
        (folder / name).write_text(DOCS[name])
    env = {"GRAPHRAG_HOME": str(settings.home_dir), "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "PATH": "/usr/bin:/bin"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env=env, replace_env=True)

    assert cli("ingest", str(folder), "--collection", collection).returncode == 0
    out = tmp_path / "c.tar"
    exported = cli("export", "--collection", collection, str(out), "--json")
    assert exported.returncode == 0, exported.stderr
    summary = json.loads(exported.stdout)
    assert summary["compression"] == "none" and summary["documents"] == 2 and out.stat().st_size == summary["bytes"]
    assert not out.with_name(out.name + ".partial").exists()
    imported = cli("import", str(out), "--collection", f"{collection}_b", "--json")
    assert imported.returncode == 0, imported.stderr
    report = json.loads(imported.stdout)
    assert report["totals"]["documents"] == 2 and report["chunks"] == summary["chunks"]
    assert report["entities"] == summary["entities"] and report["relations"] == summary["relations"]
    missing = cli("export", "--collection", "no_such_collection_x", str(tmp_path / "x.tar.gz"))
    assert missing.returncode == 2 and "unknown collection" in missing.stderr
    assert not (tmp_path / "x.tar.gz").exists() and not (tmp_path / "x.tar.gz.partial").exists()


# --- REST -----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def keyed(settings: Settings, services: Any, models: Any) -> Iterator[InProcessApi]:
    keys = [{"name": "admin", "key": "admin-key-1"},
            {"name": "scoped", "key": "scoped-key-2", "collections": ["rest_scope_only"], "access": "read-write"}]
    locked = settings.model_copy(update={"api_keys": SecretStr(json.dumps(keys))})
    with InProcessApi(locked, models) as server:
        yield server


def _post_archive(client: httpx.Client, data: bytes, **params: str) -> httpx.Response:
    def body() -> Iterator[bytes]:  # a streamed upload, in pieces
        for k in range(0, len(data), 65536):
            yield data[k:k + 65536]

    return client.post("/collections/import", params=params, content=body(),
                       headers={"content-type": "application/gzip"})


async def test_rest_export_import_round_trip_scopes_and_problems(keyed: InProcessApi, tmp_path: Path,
                                                                 dropped: list[str]) -> None:
    admin = {"Authorization": "Bearer admin-key-1"}
    scoped = {"Authorization": "Bearer scoped-key-2"}
    collection = f"rest_{uuid.uuid4().hex[:8]}"
    dropped.append(collection)
    with keyed.client(timeout=600, headers=admin) as client:
        for name, text in DOCS.items():
            r = client.post("/documents", json={"text": text, "source": name, "collection": collection})
            assert r.status_code == 201, r.text
        with client.stream("GET", f"/collections/{collection}/export") as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("application/gzip")
            data = b"".join(response.iter_bytes())
        (tmp_path / "r.tar.gz").write_bytes(data)
        assert archive.verify(tmp_path / "r.tar.gz").counts["documents"] == len(DOCS)
        copy = f"{collection}_copy"
        r = _post_archive(client, data, collection=copy)
        assert r.status_code == 200, r.text
        report = r.json()
        assert report["created"] and report["documents"] == len(DOCS) and report["totals"]["documents"] == len(DOCS)
        again = _post_archive(client, data, collection=copy)
        assert again.status_code == 200 and again.json()["totals"] == report["totals"]
        # Vector and keyword legs (the graph leg's equality is the library test's: here the original and
        # its copy hold identical entities side by side, which crowd each other out of its entity look-up).
        for query in QUERIES[:3]:
            a = client.post("/search/hybrid", json={"query": query, "limit": 5, "collections": [collection]}).json()
            b = client.post("/search/hybrid", json={"query": query, "limit": 5, "collections": [copy]}).json()
            assert ranked(a) == ranked(b) and a["results"], query
        # Problems: a damaged archive, a foreign media type, an unknown collection; nothing written.
        bad = _post_archive(client, data[: len(data) // 2], collection=f"{collection}_bad")
        assert bad.status_code == 400 and bad.headers["content-type"].startswith("application/problem+json")
        assert "damaged" in bad.json()["detail"]
        text = client.post("/collections/import", content=b"hello", headers={"content-type": "text/plain"})
        assert text.status_code == 415
        assert client.get("/collections/no_such_collection_y/export").status_code == 404
        listing = client.get("/documents", params={"collection": f"{collection}_bad"}).json()
        assert listing["total"] == 0
    with keyed.client(timeout=600, headers=scoped) as client:
        # A scoped key exports what it may read, sees others as unknown, and may not import at all.
        assert client.get(f"/collections/{collection}/export").status_code == 404
        refused = _post_archive(client, data, collection="rest_scope_only")
        assert refused.status_code == 403 and "may not import" in refused.json()["detail"]
