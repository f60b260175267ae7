"""Malformed and hostile inputs: clear errors, bounded memory and time, injections stored as plain data.

Complements test_loaders_chunkers.py (garbage bytes, encrypted PDF, size limit), test_ingest.py (a folder
of bad files) and test_search.py (hostile filter values, the 2,001-character query). No timed assertions:
the ``timeout`` markers only stop a case that regressed to quadratic time from hanging the run.
"""

from __future__ import annotations

import functools
import io
import tempfile
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest

from graphrag.entities import search_entities
from graphrag.errors import InvalidInput, PayloadTooLarge
from graphrag.ingest.html_reader import HTML_MAX_ELEMENTS
from graphrag.ingest.load import Found, LoadError, load_bytes, load_file
from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime
from graphrag.search.router import SearchRouter
from graphrag.stores.neo4j import GraphWrites

from .test_loaders_chunkers import make_docx, make_pdf
from tests.helpers import rest_search

MB = 1024 * 1024
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"


# -- builders --------------------------------------------------------------------------------------
@functools.cache
def good_docx() -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        make_docx(Path(tmp) / "good.docx")
        return (Path(tmp) / "good.docx").read_bytes()


def docx_with(document_xml: bytes | None = None, *, inflated: int = 0, corrupt: bool = False,
              extra_entries: int = 0) -> bytes:
    """A real .docx with its ``word/document.xml`` replaced (by bytes, or ``inflated`` bytes of b"A")."""
    source = zipfile.ZipFile(io.BytesIO(good_docx()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for info in source.infolist():
            if info.filename == "word/document.xml" and inflated:
                with out.open(info.filename, "w", force_zip64=True) as handle:
                    block = b"A" * MB
                    for _ in range(inflated // MB):
                        handle.write(block)
                continue
            data = source.read(info)
            if info.filename == "word/document.xml" and document_xml is not None:
                data = document_xml
            out.writestr(info.filename, data)
        for n in range(extra_entries):
            out.writestr(f"customXml/e{n}", b"")
    data = bytearray(buf.getvalue())
    if corrupt:  # flip bytes inside document.xml's deflate stream
        info = zipfile.ZipFile(io.BytesIO(bytes(data))).getinfo("word/document.xml")
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + 8
        for k in range(start, start + 48):
            data[k] ^= 0x5A
    return bytes(data)


def truncated_pdf(tmp_path: Path) -> bytes:
    make_pdf(tmp_path / "whole.pdf", ["Marie Curie worked in Paris. " * 40, "A second page."])
    whole = (tmp_path / "whole.pdf").read_bytes()
    return whole[: len(whole) // 2]


def _load(path: Path, kind: str, max_bytes: int = 50 * MB) -> list[Any]:
    return load_file(Found(path, kind), max_bytes)


# -- 1. loader level -------------------------------------------------------------------------------
@pytest.mark.timeout(120)
@pytest.mark.parametrize("inflated,message", [
    (300 * MB, "expands to .* bytes \\(zip bomb guard\\)"),  # past the total-size guard
    (40 * MB, "over 100x; zip bomb guard"),                   # under it, caught by the ratio guard
])
def test_docx_zip_bomb_is_refused_without_inflating(tmp_path: Path, inflated: int, message: str) -> None:
    path = tmp_path / "bomb.docx"
    path.write_bytes(docx_with(inflated=inflated))
    assert path.stat().st_size < inflated // 100  # a tiny file
    tracemalloc.start()
    try:
        with pytest.raises(LoadError, match=message) as caught:
            _load(path, "docx")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert caught.value.message.startswith("bomb.docx: ")
    assert peak < 100 * MB, f"peak {peak / MB:.0f} MB: the archive was inflated"


@pytest.mark.timeout(120)
def test_docx_with_too_many_zip_entries_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "entries.docx"
    path.write_bytes(docx_with(extra_entries=20_000))
    tracemalloc.start()
    try:
        with pytest.raises(LoadError, match=r"entries.docx: DOCX has \d+ zip entries, over the 10000 limit"):
            _load(path, "docx")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * MB


LAUGHS = ('<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">'
          + "".join(f'<!ENTITY {n} "{("&" + p + ";") * 10}">' for p, n in zip("abcdefg", "bcdefgh", strict=True))
          + f']><w:document xmlns:w="{W_NS}"><w:body><w:p><w:r><w:t>{"&h;" * 10}</w:t></w:r></w:p></w:body>'
          + "</w:document>").encode()
XXE = (f'<?xml version="1.0"?><!DOCTYPE d [<!ENTITY x SYSTEM "file:///etc/passwd">]><w:document xmlns:w="{W_NS}">'
       "<w:body><w:p><w:r><w:t>Secret: &x;</w:t></w:r></w:p></w:body></w:document>").encode()


@pytest.mark.timeout(60)
@pytest.mark.parametrize("name,build,message", [
    ("badxml", lambda: docx_with(b"<w:document><unclosed"), "unreadable DOCX \\(XMLSyntaxError"),
    ("corrupt", lambda: docx_with(corrupt=True), "unreadable DOCX \\((corrupt compressed data|BadZipFile)"),
    ("laughs", lambda: docx_with(LAUGHS), "unreadable DOCX \\(XMLSyntaxError: .*amplification"),
])
def test_docx_with_broken_parts_is_a_load_error(tmp_path: Path, name: str, build: Any, message: str) -> None:
    """A broken part inside a valid zip used to escape as a raw XMLSyntaxError or zlib.error."""
    path = tmp_path / f"{name}.docx"
    path.write_bytes(build())
    with pytest.raises(LoadError, match=f"{name}.docx: {message}"):
        _load(path, "docx")
    with pytest.raises(LoadError, match=message):  # the upload path too (REST, agent): a 422, not a 500
        load_bytes(f"{name}.docx", path.read_bytes(), 50 * MB)


def test_docx_external_entity_is_not_resolved(tmp_path: Path) -> None:
    path = tmp_path / "xxe.docx"
    path.write_bytes(docx_with(XXE))
    try:
        docs = _load(path, "docx")
    except LoadError as exc:
        assert "xxe.docx" in exc.message
    else:
        assert all("root:" not in d.text for d in docs)


@pytest.mark.timeout(180)
@pytest.mark.parametrize("tag,depth", [("div", 100_000), ("p", 100_000), ("li", 50_000), ("blockquote", 50_000),
                                       ("span", 100_000)])
def test_deeply_nested_html_loads_or_fails_cleanly(tmp_path: Path, tag: str, depth: int) -> None:
    """Never a RecursionError; text grows with the input (each nested block used to repeat all inner text)."""
    path = tmp_path / "nested.html"
    data = (f"<html><body>{f'<{tag}>level '* depth}<p>deep text</p>{f'</{tag}>' * depth}</body></html>").encode()
    path.write_bytes(data)
    try:
        [doc] = _load(path, "html")
    except LoadError as exc:
        assert exc.message.startswith("nested.html: ")
    else:
        assert "deep text" in doc.text
        assert len(doc.text) < 2 * len(data)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("name,data", [
    ("attrs", b"<p>" + b"<a " * 40_000),          # ~230 s with the stdlib html.parser on Python 3.11
    ("comment", b"<p>text<!--" + b"<!--" * 40_000),
    ("unclosed", b"<body>" + b"<p>para text " * 40_000),  # html.parser nested every unclosed <p>
])
def test_pathological_html_is_parsed_in_bounded_time(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / f"{name}.html"
    path.write_bytes(data)
    try:
        [doc] = _load(path, "html")
    except LoadError as exc:
        assert exc.message.startswith(f"{name}.html: ")
    else:
        assert len(doc.text) < 2 * len(data)


def test_html_with_too_many_elements_is_refused_before_parsing(tmp_path: Path) -> None:
    path = tmp_path / "huge.html"
    path.write_bytes(b"<p>x</p>" * (HTML_MAX_ELEMENTS + 10))
    with pytest.raises(LoadError, match=rf"huge.html: about \d+ HTML elements is over the {HTML_MAX_ELEMENTS} limit"):
        _load(path, "html")


@pytest.mark.parametrize("name,content,message", [
    ("truncated.pdf", None, "unreadable PDF"),
    ("nul.txt", b"fine text\x00more text", "binary content \\(NUL bytes\\)"),
    ("nul.html", b"<p>fine</p>\x00", "binary content \\(NUL bytes\\) in an HTML file"),
    ("nul.jsonl", b'{"text": "a"}\x00\n', "binary content"),
    ("noise.md", b"# " + bytes(range(128, 256)) * 4, "not valid UTF-8 text \\(byte 2\\), and not in an encoding"),
    ("latin1.jsonl", b'{"text": "caf\xe9"}\n', "not valid UTF-8 text \\(byte 13\\); JSON Lines must be UTF-8"),
    ("empty.txt", b"", "empty file"),
    ("empty.pdf", b"", "empty file"),
    ("empty.docx", b"", "empty file"),
    ("empty.html", b"", "empty file"),
    ("blank.md", b" \n\t\n", "no text content"),
    ("blank.html", b"<html><body><script>x()</script></body></html>", "no text content"),
])
def test_more_bad_files_fail_with_clear_reason(tmp_path: Path, name: str, content: bytes | None, message: str) -> None:
    path = tmp_path / name
    path.write_bytes(truncated_pdf(tmp_path) if content is None else content)
    kind = name.split(".")[1]  # each extension here is its own loader type
    with pytest.raises(LoadError, match=f"^{name}: {message}"):
        _load(path, kind)
    with pytest.raises(LoadError, match=f"^{name}: {message}"):
        load_bytes(name, path.read_bytes(), 50 * MB)


@pytest.mark.parametrize("name,kind", [("big.pdf", "pdf"), ("big.docx", "docx"), ("big.html", "html")])
def test_over_limit_binary_files_are_refused_unread(tmp_path: Path, name: str, kind: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\x00" * 2048)  # garbage: refused on size before any parser sees it
    with pytest.raises(LoadError, match=f"{name}: 2048 bytes is over the 1024-byte limit"):
        _load(path, kind, 1024)
    with pytest.raises(PayloadTooLarge, match="over the 1024-byte limit"):
        load_bytes(name, path.read_bytes(), 1024)


# -- 2. the real pipeline, real stores -------------------------------------------------------------
@pytest.mark.timeout(300)
async def test_hostile_folder_only_the_good_file_reaches_the_stores(tmp_path: Path, runtime: Runtime, models: Any,
                                                                    collection: str) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "good.md").write_text("# Lisbon\n\nLisbon is the capital of Portugal, on the Tagus river.")
    hostile = {
        "bomb.docx": (docx_with(inflated=300 * MB), "zip bomb guard"),
        "entries.docx": (docx_with(extra_entries=20_000), "zip entries"),
        "badxml.docx": (docx_with(b"<w:document><unclosed"), "unreadable DOCX"),
        "corrupt.docx": (docx_with(corrupt=True), "unreadable DOCX"),
        "truncated.pdf": (truncated_pdf(tmp_path), "unreadable PDF"),
        "nul.txt": (b"text\x00text", "NUL bytes"),
        "noise.md": (bytes(range(128, 256)) * 4, "not valid UTF-8"),
        "huge.html": (b"<p>x</p>" * (HTML_MAX_ELEMENTS + 10), "HTML elements"),
        "over.txt": (b"Too big. " * (9 * MB // 8), "over the"),
    }
    for name, (data, _) in hostile.items():
        (folder / name).write_bytes(data)
    (folder / "payload.exe").write_bytes(b"MZ\x90\x00")
    # Files with nothing to index are skipped, not failed: an empty file and a page of tags alone.
    (folder / "empty.txt").write_bytes(b"")
    (folder / "attrs.html").write_bytes(b"<p>" + b"<a " * 40_000)
    small = runtime.settings.model_copy(update={"max_file_mb": 8.0})
    ingestor = Ingestor(small, runtime.postgres, runtime.neo4j, models)
    report = await ingestor.ingest_paths([folder], collection=collection)

    assert report.ingested == 1, report.failed
    failed = {Path(f["path"]).name: f["error"] for f in report.failed}
    assert set(failed) == set(hostile)
    for name, (_, reason) in hostile.items():
        assert failed[name].startswith(f"{name}: ") and reason in failed[name], failed[name]
    skipped = {Path(s["path"]).name: s["reason"] for s in report.skipped}
    assert skipped == {"payload.exe": "unsupported file type '.exe'", "empty.txt": "empty file",
                       "attrs.html": "no text content"}

    good = str((folder / "good.md").resolve())
    rows = await runtime.postgres.pool.fetch("SELECT source FROM documents WHERE collection = $1", collection)
    assert [r["source"] for r in rows] == [good]
    stray = await runtime.postgres.pool.fetchval(
        "SELECT count(*) FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE c.collection = $1 AND d.source <> $2", collection, good)
    assert stray == 0
    graph, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (d:Document {collection: $c}) RETURN d.source AS source", c=collection)
    assert [r["source"] for r in graph] == [good]
    chunks, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (c:Chunk {collection: $c}) WHERE NOT (:Document {source: $s})-[:HAS_CHUNK]->(c) RETURN count(c) AS n",
        c=collection, s=good)
    assert chunks[0]["n"] == 0


# -- 3. Cypher / Lucene injection ------------------------------------------------------------------
DELETE_ALL = "Robert'); MATCH (n) DETACH DELETE n; //"
UNION_ALL = "} RETURN 1 UNION MATCH (n) RETURN n //"
# Without "//" a title reads as a name, so it also becomes an entity (see extract.looks_like_a_name).
DELETE_ENTITY = "Robert'); MATCH (n) DETACH DELETE n;"
UNION_ENTITY = "} RETURN 1 UNION MATCH (n) RETURN N"
METACHARACTERS = ["name:* OR *", '") RETURN n //', "\\", "~", "AND OR NOT", "*", DELETE_ALL, UNION_ALL,
                  'Apple" OR name:*~ AND "', "[* TO *]", "/.*/"]


async def _graph_counts(runtime: Runtime, collection: str) -> dict[str, int]:
    return (await GraphWrites(runtime.neo4j).collection_counts()).get(collection, {})


@pytest.fixture
async def injected(tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> dict[str, Any]:
    """A known document in ``other``, then documents named with Cypher in ``collection``."""
    other = f"{collection}_other"
    (tmp_path / "known").mkdir()
    (tmp_path / "known" / "apple.md").write_text(
        "# Apple\n\nTim Cook leads Apple Inc. in Cupertino, California. Apple makes the iPhone.")
    assert (await ingestor.ingest_paths([tmp_path / "known"], collection=other)).ingested == 1
    before = {"graph": await _graph_counts(runtime, other),
              "pg": (await runtime.postgres.collection_counts())[other]}
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    for n, title in enumerate([DELETE_ALL, UNION_ALL, DELETE_ENTITY, UNION_ENTITY]):
        (hostile / f"h{n}.md").write_text(
            f"# {title}\n\nRobert Tables met {title} in Paris. Then {UNION_ALL} visited London with {DELETE_ALL}.\n")
    report = await ingestor.ingest_paths([hostile], collection=collection)
    assert report.ingested == 4 and not report.failed, report.failed
    return {"other": other, "before": before}


async def test_cypher_in_names_is_stored_as_plain_data(injected: dict[str, Any], runtime: Runtime,
                                                       collection: str) -> None:
    other = injected["other"]
    assert await _graph_counts(runtime, other) == injected["before"]["graph"]
    assert (await runtime.postgres.collection_counts())[other] == injected["before"]["pg"]
    titles = {DELETE_ALL, UNION_ALL, DELETE_ENTITY, UNION_ENTITY}
    pg_titles = await runtime.postgres.pool.fetch("SELECT title FROM documents WHERE collection = $1", collection)
    assert {r["title"] for r in pg_titles} == titles
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (d:Document {collection: $c}) RETURN d.title AS title", c=collection)
    assert {r["title"] for r in rows} == titles
    texts, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (c:Chunk {collection: $c}) RETURN c.text AS text", c=collection)
    assert any(DELETE_ALL in r["text"] for r in texts) and any(UNION_ALL in r["text"] for r in texts)
    entities, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.name AS name", c=collection)
    names = {r["name"] for r in entities}
    assert DELETE_ENTITY in names and UNION_ENTITY in names, names


@pytest.mark.timeout(300)
async def test_metacharacter_searches_answer_and_stay_in_their_collection(
        injected: dict[str, Any], runtime: Runtime, models: Any, collection: str) -> None:
    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    for query in METACHARACTERS:
        for mode in ("auto", "vector", "keyword", "hybrid", "graph"):
            try:
                response = await rest_search(router, query, mode=mode, limit=10, collections=[collection])
            except InvalidInput as exc:
                assert str(exc)
                continue
            assert all(leg["status"] != "error" for leg in response["legs"].values()), (query, mode, response["legs"])
            assert {hit["collection"] for hit in response["results"]} <= {collection}, (query, mode)
            assert {e.get("id") for e in response["graph_context"]["entities"]}.isdisjoint(
                await _entity_ids(runtime, injected["other"]))
        try:
            found = await search_entities(runtime, query, collection=collection)
        except InvalidInput as exc:
            assert str(exc)
            continue
        assert {e["collection"] for e in found["entities"]} <= {collection}, query
    # The hostile names themselves are found as names, in their collection only.
    found = await search_entities(runtime, DELETE_ENTITY, collection=collection)
    assert any(e["name"] == DELETE_ENTITY for e in found["entities"])
    elsewhere = await search_entities(runtime, DELETE_ENTITY, collection=injected["other"])
    assert {e["collection"] for e in elsewhere["entities"]} <= {injected["other"]}
    assert await _graph_counts(runtime, injected["other"]) == injected["before"]["graph"]


async def _entity_ids(runtime: Runtime, collection: str) -> set[str]:
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.id AS id", c=collection)
    return {r["id"] for r in rows}


# -- 4. long and odd Unicode queries ---------------------------------------------------------------
@pytest.fixture
async def small_corpus(tmp_path: Path, ingestor: Ingestor, collection: str) -> str:
    (tmp_path / "a.md").write_text("# Lisbon\n\nLisbon is the capital of Portugal. Fado music was born there.")
    (tmp_path / "b.md").write_text("# القاهرة\n\nالقاهرة هي عاصمة مصر. Cairo lies on the Nile.")
    assert (await ingestor.ingest_paths([tmp_path], collection=collection)).ingested == 2
    return collection


ODD_QUERIES = {
    "exactly 2000 chars": "x" * 2000,
    "2000 distinct words": " ".join(f"w{n}" for n in range(1000))[:2000],
    "2000 emoji": "\U0001F600" * 2000,
    "right to left": "ما هي عاصمة مصر؟ מה הבירה של מצרים",
    "bidi controls": "\u202eLisbon\u202c capital \u200f\u2067Portugal\u2069",
    "combining marks": "Li\u0301\u0302\u0303sbo\u0308n " + "e" + "\u0301" * 300,
    "emoji": "\U0001F680\U0001F30D Lisbon \U0001F1F5\U0001F1F9",
    "zero width joiners": "\U0001F469\u200D\U0001F469\u200D\U0001F467 Lis\u200Dbon\u200B\uFEFF",
    "only punctuation": "?!.,;:'\"()[]{}<>-_/\\|@#$%^&*+=~`",
    "only stopwords": "the of and to a in is it that this",
    "replacement characters": "\ufffd\ufffd\ufffd",
}


@pytest.mark.timeout(300)
async def test_odd_unicode_and_boundary_length_queries_answer(small_corpus: str, runtime: Runtime,
                                                              models: Any) -> None:
    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    for label, query in ODD_QUERIES.items():
        for mode in ("auto", "hybrid", "graph"):
            response = await rest_search(router, query, mode=mode, limit=5, collections=[small_corpus])
            assert response["query"] == query.strip()
            assert isinstance(response["results"], list)
            errors = {name: leg for name, leg in response["legs"].items() if leg["status"] == "error"}
            assert not errors, (label, mode, errors)
            assert {hit["collection"] for hit in response["results"]} <= {small_corpus}
    with pytest.raises(InvalidInput, match="2000"):  # characters, not bytes: 2,001 emoji are one too many
        await rest_search(router, "\U0001F600" * 2001, collections=[small_corpus])
