"""Suggestions, highlights, full documents and the text/voice formats against the real stores: over
real HTTP (uvicorn), through the agent tools, the MCP tool dispatch and the CLI."""

from __future__ import annotations

import json
import re
import uuid
from itertools import pairwise
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from graphrag.agent import AgentDeps
from graphrag.agent import mcp as mcp_server
from graphrag.agent import tools as agent_tools
from graphrag.api.auth import digest
from graphrag.config import Settings
from graphrag.ingest import terms
from graphrag.ingest.pipeline import Ingestor
from graphrag.models import Document
from graphrag.runtime import Runtime
from graphrag.search.suggest import suggest
from tests.conftest import ApiServer

KEYS = {"admin": "suggest-admin-1", "reader_a": "suggest-reader-a-2"}
CURIE = ("# Marie Curie\n\nMarie Curie discovered radium in Paris with Pierre Curie. Her study of radioactive "
         "decay changed physics. Marie Curie won two Nobel prizes.")
BOHR = ("# Niels Bohr\n\nNiels Bohr worked in Copenhagen on radioactive decay and the structure of atoms. "
        "Bohr discussed physics with Marie Curie.")
LINKED = ("# ENIAC\n\nThe **ENIAC** was built by [John Mauchly](https://en.wikipedia.org/wiki/John_Mauchly) and "
          "J. Presper Eckert (at the University of Pennsylvania). See https://example.org/eniac for photos.\n\n"
          "```python\nprint('ENIAC')\n```\n\nThe ENIAC computer weighed 27 tonnes and used vacuum tubes.")
# Long enough for several chunks (200 tokens each, 40 overlapping): each paragraph is numbered, so a part
# of the document is easy to place.
LONG = "# Observatory Log\n\n" + "\n\n".join(
    f"Entry {i}: the telescope tracked comet Halley-{i} across the northern sky while the astronomers "
    f"recorded its brightness, its tail and the weather over the observatory on night {i}." for i in range(1, 41))


def _stems(services: Any, words: set[str]) -> dict[str, set[str]]:
    """The 'english' lexemes of each word, as PostgreSQL makes them."""
    import asyncio

    import asyncpg

    async def run() -> dict[str, set[str]]:
        conn = await asyncpg.connect(services.postgres_dsn)
        try:
            rows = await conn.fetch("SELECT w, tsvector_to_array(to_tsvector('english', w)) AS l "
                                    "FROM unnest($1::text[]) w", sorted(words))
        finally:
            await conn.close()
        return {r["w"]: set(r["l"]) for r in rows}

    return asyncio.run(run())


# --- suggestions, in step with the writer and the delete path --------------------------------------
async def _consistent(rt: Runtime, collection: str) -> None:
    """The sums equal what the documents contribute (no drift between the two tables)."""
    rows = await rt.postgres.pool.fetch(
        """SELECT coalesce(s.norm, t.norm) AS norm, s.documents AS summed, t.documents AS counted
           FROM (SELECT norm, kind, documents FROM suggest_terms WHERE collection = $1 AND documents > 0) s
           FULL JOIN (SELECT t.norm, t.kind, count(*) AS documents FROM document_terms t
                      JOIN documents d ON d.id = t.document_id WHERE d.collection = $1 GROUP BY 1, 2) t
             ON s.norm = t.norm AND s.kind = t.kind
           WHERE s.documents IS DISTINCT FROM t.documents""", collection)
    assert not rows, [dict(r) for r in rows]


async def test_suggestions_follow_ingest_update_delete_and_rebuild(runtime: Runtime, ingestor: Ingestor,
                                                                   collection: str) -> None:
    docs = [(Document("curie.md", "Marie Curie", CURIE, "markdown"), "curie.md"),
            (Document("bohr.md", "Niels Bohr", BOHR, "markdown"), "bohr.md")]
    report = await ingestor.ingest_documents(docs, collection=collection)
    assert report.ingested == 2, report.failed
    pg = runtime.postgres

    found = (await suggest(pg, "mar", collections=[collection]))["suggestions"]
    assert found and found[0]["text"] == "Marie Curie" and found[0]["documents"] == 2
    assert found[0]["kind"] in ("entity", "title") and found[0]["score"] > 0
    titles = {s["text"]: s for s in (await suggest(pg, "niels", collections=[collection]))["suggestions"]}
    assert "Niels Bohr" in titles
    # A phrase is offered once it is frequent: "radioactive decay" is in both documents.
    phrases = (await suggest(pg, "radioactive d", collections=[collection]))["suggestions"]
    assert [(s["text"], s["kind"], s["documents"]) for s in phrases] == [("radioactive decay", "phrase", 2)]
    assert (await suggest(pg, "zzzz", collections=[collection]))["suggestions"] == []
    await _consistent(runtime, collection)

    # An update takes the old terms back: Bohr no longer mentions radioactive decay or Curie.
    changed = BOHR.replace("on radioactive decay and", "on").replace("with Marie Curie", "with Werner Heisenberg")
    report = await ingestor.ingest_documents([(Document("bohr.md", "Niels Bohr", changed, "markdown"), "bohr.md")],
                                             collection=collection)
    assert report.updated == 1, report.failed
    assert (await suggest(pg, "radioactive d", collections=[collection]))["suggestions"] == []
    assert (await suggest(pg, "marie", collections=[collection]))["suggestions"][0]["documents"] == 1
    werner = (await suggest(pg, "wer", collections=[collection]))["suggestions"]
    assert "Werner Heisenberg" in [s["text"] for s in werner]
    await _consistent(runtime, collection)

    # The delete path takes them back too, in the same transaction as the document.
    assert await ingestor.delete(collection=collection, source="bohr.md") == 1
    assert (await suggest(pg, "werner", collections=[collection]))["suggestions"] == []
    assert (await suggest(pg, "niels", collections=[collection]))["suggestions"] == []
    await _consistent(runtime, collection)

    # A rebuild from the graph and the titles gives back the entity and title terms the writer made.
    async def named_terms() -> set[tuple[str, str, int]]:
        rows = await pg.pool.fetch("SELECT norm, kind, documents FROM suggest_terms WHERE collection = $1 "
                                   "AND kind IN ('entity', 'title') AND documents > 0", collection)
        return {(r["norm"], r["kind"], r["documents"]) for r in rows}

    before = await named_terms()
    assert (await terms.rebuild(pg, runtime.neo4j, collection))["documents"] == 0, "the writer gave them terms"
    await pg.pool.execute("DELETE FROM document_terms t USING documents d WHERE d.id = t.document_id "
                          "AND d.collection = $1 AND t.kind <> 'title'", collection)
    await pg.pool.execute("DELETE FROM suggest_terms WHERE collection = $1 AND kind <> 'title'", collection)
    assert await named_terms() == {t for t in before if t[1] == "title"}
    counts = await terms.rebuild(pg, runtime.neo4j, collection)
    assert counts["documents"] == 1 and counts["title"] == 1 and counts["entity"] >= 2
    assert await named_terms() == before and ("marie curie", "entity", 1) in before
    await _consistent(runtime, collection)


def test_cli_suggest(settings: Settings, services: object, collection: str, capsys: pytest.CaptureFixture[str],
                     monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from graphrag import cli

    asyncio.run(_ingest_one(settings, collection))
    monkeypatch.setenv("GRAPHRAG_HOME", str(settings.home_dir))
    assert cli.main(["suggest", "Mar", "--collection", collection, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["suggestions"][0]["text"] == "Marie Curie"
    assert cli.main(["suggest", "mar", "--collection", collection]) == 0
    assert capsys.readouterr().out.startswith("Marie Curie\t")
    assert cli.main(["suggest", "  ", "--collection", collection]) == 2
    assert "prefix is empty" in capsys.readouterr().err
    assert cli.main(["suggest", "--rebuild"]) == 2


async def _ingest_one(settings: Settings, collection: str) -> None:
    from graphrag.runtime import open_services

    async with open_services(settings, start_local=False) as rt:
        ingestor = await rt.ingestor()
        report = await ingestor.ingest_documents([(Document("curie.md", "Marie Curie", CURIE, "markdown"), "c")],
                                                 collection=collection)
        assert report.ingested == 1, report.failed


# --- REST: suggestions with scoped keys, highlights, full documents, formats ----------------------
@pytest.fixture(scope="module")
def server(settings: Settings, services: object, models: object) -> Iterator[dict[str, Any]]:
    a, b = f"sug_a_{uuid.uuid4().hex[:8]}", f"sug_b_{uuid.uuid4().hex[:8]}"
    entries = [{"name": "admin", "key": KEYS["admin"]},
               {"name": "reader-a", "sha256": digest(KEYS["reader_a"]).hex(), "collections": [a], "access": "read"}]
    locked = settings.model_copy(update={"api_keys": SecretStr(json.dumps(entries))})
    with ApiServer(locked, models) as api, httpx.Client(base_url=api.url, timeout=180,
                                                        headers={"X-API-Key": KEYS["admin"]}) as c:
        ids = {}
        for coll, source, text in ((a, "curie.md", CURIE), (a, "eniac.md", LINKED), (a, "log.md", LONG),
                                   (b, "bohr.md", BOHR)):
            r = c.post("/documents", json={"text": text, "source": source, "collection": coll})
            assert r.status_code == 201, r.text
            ids[source] = r.json()["id"]
        yield {"url": api.url, "a": a, "b": b, "ids": ids}


def _client(env: dict[str, Any], who: str = "admin") -> httpx.Client:
    return httpx.Client(base_url=env["url"], timeout=180, headers={"X-API-Key": KEYS[who]})


def _problem(r: httpx.Response, status: int) -> None:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")


def test_suggest_endpoint_respects_key_scopes(server: dict[str, Any]) -> None:
    a, b = server["a"], server["b"]
    with _client(server) as admin:
        both = admin.get("/suggest", params={"q": "Ni", "collections": f"{a},{b}"}).json()
        assert "Niels Bohr" in [s["text"] for s in both["suggestions"]], "collection b has it"
        got = admin.get("/suggest", params=[("q", "marie c"), ("collections", a), ("collections", b)]).json()
        assert got["suggestions"][0]["text"] == "Marie Curie"
        assert sorted(got["suggestions"][0]["collections"]) == sorted([a, b])
        assert set(got["suggestions"][0]) >= {"text", "kind", "score", "documents", "collections"}
        _problem(admin.get("/suggest", params={"q": " "}), 400)
        _problem(admin.get("/suggest", params={"q": "ma", "limit": 0}), 400)
        _problem(admin.get("/suggest", params={"q": "ma", "collections": "no_such_collection_x"}), 404)
        _problem(admin.get("/suggest", params={"q": "ma", "collections": "bad name!"}), 400)
    with _client(server, "reader_a") as reader:
        mine = reader.get("/suggest", params={"q": "n", "limit": 50}).json()["suggestions"]
        assert all(s["collections"] == [a] for s in mine)
        assert "Niels Bohr" not in [s["text"] for s in mine]
        _problem(reader.get("/suggest", params={"q": "n", "collections": b}), 403)
    _problem(httpx.get(f"{server['url']}/suggest", params={"q": "n"}), 401)


def test_highlights_slice_the_hit_text_exactly(server: dict[str, Any], services: Any) -> None:
    with _client(server) as c:
        body = c.post("/search", json={"query": "discovering radioactivity of Marie Curie", "highlight": True,
                                       "collections": [server["a"]], "limit": 5}).json()
    assert body["results"]
    spans = [(h, s) for h in body["results"] for s in h["highlights"]]
    assert spans, body["results"]
    stems = _stems(services, {h["content"][s["start"]:s["end"]] for h, s in spans} | {s["term"] for _, s in spans})
    for hit, span in spans:
        piece = hit["content"][span["start"]:span["end"]]
        if span["kind"] == "keyword":  # the same lexeme as the query term: "discovered" for "discovering"
            assert stems[piece] & stems[span["term"]], (piece, span)
        else:
            assert re.sub(r"\s+", " ", piece).lower() == span["term"].lower(), (piece, span)
    assert any(hit["content"][s["start"]:s["end"]] == "discovered" and s["term"] == "discovering" for hit, s in spans)
    for hit in body["results"]:
        assert hit["content"][hit["snippet_start"]:hit["snippet_end"]] == hit["snippet"]
        offsets = [(s["start"], s["end"]) for s in hit["highlights"]]
        assert offsets == sorted(offsets) and all(e1 <= s2 for (_, e1), (s2, _) in pairwise(offsets))
    with _client(server) as c:  # without the option the response is as before
        plain = c.post("/search", json={"query": "Marie Curie", "collections": [server["a"]]}).json()
        assert all("highlights" not in h and "snippet" not in h for h in plain["results"])
        graph = c.post("/search/graph", json={"query": "Marie Curie", "highlight": True,
                                              "collections": [server["a"]]}).json()
    entity_spans = [s for h in graph["results"] for s in h["highlights"] if s["kind"] == "entity"]
    assert any(s["term"] == "Marie Curie" for s in entity_spans), graph["results"]


def test_full_document_whole_then_truncated(server: dict[str, Any]) -> None:
    query = {"query": "comet Halley-17 brightness on night 17", "collections": [server["a"]], "mode": "keyword",
             "limit": 5}
    with _client(server) as c:
        doc = c.get(f"/documents/{server['ids']['log.md']}").json()
        chunks = doc["chunks"]
        assert len(chunks) >= 4, "the document spans several chunks"
        whole = c.post("/search", json={**query, "full_document_threshold": 0.0, "token_limit": 100_000}).json()
        small = c.post("/search", json={**query, "full_document_threshold": 0.0, "token_limit": 200}).json()
        none = c.post("/search", json={**query, "full_document_threshold": 1e9}).json()
        folded = c.post("/search", json={**query, "mode": "vector", "query": "comet brightness over the observatory",
                                         "full_document_threshold": 0.0, "token_limit": 100_000}).json()
    top = whole["results"][0]
    assert top["document_id"] == server["ids"]["log.md"] and top["full_document"] is True
    assert top["truncated"] is False
    # The chunks in order, their overlaps removed: every paragraph once, in order.
    assert top["content"] == LONG
    entries = re.findall(r"Entry (\d+):", top["content"])
    assert entries == [str(i) for i in range(1, 41)]
    assert all(ch["content"] in top["content"] for ch in chunks)
    assert top["document_tokens"] <= sum(ch["token_count"] for ch in chunks)
    # Other chunks of the document among the hits fold into the full document (semantic search finds
    # every entry of the log).
    assert [h["document_id"] for h in folded["results"]].count(top["document_id"]) == 1
    log = next(h for h in folded["results"] if h["document_id"] == top["document_id"])
    assert log["full_document"] and log["content"] == LONG
    assert log["folded_chunk_ids"] and set(log["folded_chunk_ids"]) <= {ch["id"] for ch in chunks} - {log["chunk_id"]}

    part = small["results"][0]
    assert part["full_document"] is True and part["truncated"] is True
    assert part["document_tokens"] <= 200
    hit_chunk = next(ch for ch in chunks if ch["id"] == part["chunk_id"])
    assert hit_chunk["content"] in part["content"] and len(part["content"]) < len(top["content"])
    numbers = [int(n) for n in re.findall(r"Entry (\d+):", part["content"])]
    assert numbers == list(range(numbers[0], numbers[0] + len(numbers))) and 17 in numbers
    assert all("full_document" not in h for h in none["results"])


def test_text_and_voice_formats(server: dict[str, Any]) -> None:
    query = {"query": "Who built the ENIAC computer?", "collections": [server["a"]], "limit": 3}
    with _client(server) as c:
        data = c.post("/search", json=query).json()
        text = c.post("/search", json={**query, "format": "text"})
        voice = c.post("/search", json={**query, "format": "voice"})
        _problem(c.post("/search", json={**query, "format": "xml"}), 400)
    assert data["results"][0]["source"] == "eniac.md" and "https://" in data["results"][0]["content"]
    assert text.status_code == 200 and text.headers["content-type"].startswith("text/plain")
    assert text.text.startswith(f'{len(data["results"])} results for "Who built the ENIAC computer?"')
    assert "[1] eniac.md" in text.text
    assert voice.status_code == 200 and voice.headers["content-type"].startswith("text/plain")
    spoken = voice.text
    assert "ENIAC" in spoken and "Mauchly" in spoken
    assert not re.search(r"https?:|www\.|\.md\b|[\[\](){}<>`*#|_]|\n", spoken), spoken


# --- agent tools and MCP ---------------------------------------------------------------------------
async def test_agent_tools_and_mcp_take_the_options(runtime: Runtime, models: Any, server: dict[str, Any]) -> None:
    rt = Runtime(settings=runtime.settings, postgres=runtime.postgres, neo4j=runtime.neo4j, _models=models)
    deps = AgentDeps(rt, collections=[server["a"]])
    found = await agent_tools.search(deps, "comet Halley-17 night 17", highlight=True, full_document_threshold=0.0,
                                     token_limit=1000)
    top = found.hits[0]  # type: ignore[union-attr]
    assert top.full_document and top.truncated and len(top.text) > agent_tools.TEXT_CHARS
    assert top.snippet and top.highlights
    for span in top.highlights:
        piece = top.text[span.start:span.end].lower()
        assert piece in {"comet", "halley", "17", "night"} if span.kind == "keyword" else piece == span.term.lower()

    voice = await agent_tools.hybrid_search(deps, "Who built the ENIAC computer?", format="voice")
    assert voice.format == "voice" and "ENIAC" in voice.text  # type: ignore[union-attr]
    assert not re.search(r"https?:|[\[\](){}<>`*#]", voice.text)  # type: ignore[union-attr]
    text = await agent_tools.graph_search(deps, "Who built the ENIAC computer?", format="text")
    assert text.format == "text" and "[1] eniac.md" in text.text  # type: ignore[union-attr]

    result = await mcp_server.call_tool(deps, "search", {"query": "comet Halley-17 night 17",
                                                          "full_document_threshold": 0, "token_limit": 100000})
    assert not result.is_error, result.content
    hit = result.structured_content["hits"][0]  # type: ignore[index]
    assert hit["full_document"] is True and hit["truncated"] is False
    assert re.findall(r"Entry (\d+):", hit["text"]) == [str(i) for i in range(1, 41)]
    spoken = await mcp_server.call_tool(deps, "vector_search", {"query": "ENIAC builders", "format": "voice"})
    assert not spoken.is_error and spoken.structured_content["format"] == "voice"  # type: ignore[index]
    bad = await mcp_server.call_tool(deps, "search", {"query": "x", "token_limit": 0})
    assert bad.is_error
