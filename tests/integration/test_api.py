"""The REST API against the real PostgreSQL and Neo4j: in process through Litestar's test client (the same
app, middleware and lifespan as `graphrag serve`), and once over real HTTP (uvicorn on loopback)."""

from __future__ import annotations

import hashlib
import io
import re
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from graphrag.api.schemas import SearchResponse
from graphrag.config import Settings
from tests.conftest import ApiServer, InProcessApi

DOCS = {
    "curie.md": "# Marie Curie\n\nMarie Curie worked in Paris at the University of Paris. "
                "She discovered polonium and radium with Pierre Curie.",
    "bohr.md": "# Niels Bohr\n\nNiels Bohr founded the Institute for Theoretical Physics in Copenhagen. "
               "Werner Heisenberg worked with Bohr in Copenhagen.",
    "lovelace.md": "# Ada Lovelace\n\nAda Lovelace wrote the first program for the Analytical Engine "
                   "designed by Charles Babbage in London.",
}
SEARCH_PATHS = ["/search", "/search/vector", "/search/keyword", "/search/hybrid", "/search/graph"]


@pytest.fixture(scope="module")
def corpus(api: InProcessApi) -> Iterator[dict[str, Any]]:
    """Three documents posted as JSON into a collection of this module's own."""
    collection = f"api_{uuid.uuid4().hex[:10]}"
    ids = {}
    with api.client(timeout=120) as client:
        for source, text in DOCS.items():
            r = client.post("/documents", json={"text": text, "source": source, "collection": collection,
                                                "metadata": {"field": "physics" if source != "lovelace.md" else "computing"},
                                                "tags": ["science"]})
            assert r.status_code == 201, r.text
            ids[source] = r.json()["id"]
    yield {"collection": collection, "ids": ids}


@pytest.fixture
def client(api: InProcessApi) -> Iterator[httpx.Client]:
    with api.client(timeout=120) as c:
        yield c


def test_over_real_http(http_api: ApiServer, corpus: dict[str, Any]) -> None:
    """The one API test over a socket: uvicorn serves the app as `graphrag serve` does (headers, bodies and
    problems through a real HTTP stack); every other test here drives the same app in process."""
    with httpx.Client(base_url=http_api.url, timeout=120) as c:
        r = c.post("/search", json={"query": "Who discovered polonium?", "limit": 3,
                                    "collections": [corpus["collection"]]}, headers={"X-Request-ID": "real-http-1"})
        assert r.status_code == 200 and r.headers["content-type"].startswith("application/json"), r.text
        assert r.headers["x-request-id"] == "real-http-1"
        assert r.json()["results"][0]["title"] == "Marie Curie"
        assert_problem(c.post("/search", json={"query": ""}), 400)


def assert_problem(r: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    body = r.json()
    assert body["status"] == status and body["title"] and body["detail"]
    for word in words:
        assert word.lower() in body["detail"].lower(), body["detail"]
    return body


# --- search ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", SEARCH_PATHS)
def test_every_search_endpoint_answers_with_the_contract_shape(client: httpx.Client, corpus: dict[str, Any],
                                                                path: str) -> None:
    r = client.post(path, json={"query": "Who discovered polonium in Paris?", "limit": 5,
                                "collections": [corpus["collection"]]})
    assert r.status_code == 200, r.text
    body = r.json()
    SearchResponse.model_validate(body)  # the route returns to_dict unchecked: the contract is held here
    explained = client.post(path, json={"query": "Who discovered polonium in Paris?", "explain": True,
                                        "collections": [corpus["collection"]]})
    SearchResponse.model_validate(explained.json())
    assert set(body) >= {"query", "mode", "took_ms", "legs", "results", "graph_context"}
    assert body["mode"] == ("auto" if path == "/search" else path.rsplit("/", 1)[1])
    assert set(body["legs"]) == {"vector", "keyword", "graph"}
    assert all(leg["status"] in {"ok", "timeout", "error", "skipped"} for leg in body["legs"].values())
    assert set(body["graph_context"]) == {"entities", "relations"}
    assert body["results"], body
    top = body["results"][0]
    assert set(top) >= {"chunk_id", "document_id", "collection", "source", "title", "heading_path", "content",
                        "score", "legs", "entities", "metadata"}
    assert top["source"] == "curie.md"
    assert top["collection"] == corpus["collection"]
    assert top["metadata"]["field"] == "physics"


def test_seed_style_minimal_body_works(client: httpx.Client, corpus: dict[str, Any]) -> None:
    r = client.post("/search/hybrid", json={"query": "Copenhagen institute", "limit": 5})
    assert r.status_code == 200, r.text
    assert 1 <= len(r.json()["results"]) <= 5  # found something, within the limit


def test_fusion_is_chosen_per_request(client: httpx.Client, corpus: dict[str, Any]) -> None:
    body = {"query": "Copenhagen institute", "limit": 3, "collections": [corpus["collection"]]}
    convex = client.post("/search/hybrid", json=body).json()
    rrf = client.post("/search/hybrid", json={**body, "fusion": "rrf"}).json()
    assert convex["results"] and rrf["results"]
    # Reciprocal ranks are at most 2 / 61 with two legs; normalised scores of a top hit are near 1 or above.
    assert max(h["score"] for h in rrf["results"]) <= 2 / 61 + 1e-6 < max(h["score"] for h in convex["results"])


def test_graph_leg_is_chosen_per_request(client: httpx.Client, corpus: dict[str, Any]) -> None:
    body = {"query": "Who discovered polonium in Paris?", "limit": 3, "collections": [corpus["collection"]]}
    never = client.post("/search", json={**body, "graph_leg": "never"}).json()
    assert never["legs"]["graph"]["status"] == "skipped" and "never" in never["legs"]["graph"]["reason"]
    assert never["results"][0]["source"] == "curie.md"
    always = client.post("/search", json={**body, "graph_leg": "always"}).json()
    assert always["legs"]["graph"]["status"] == "ok"
    assert_problem(client.post("/search", json={**body, "graph_leg": "sometimes"}), 400, "graph_leg")
    assert_problem(client.post("/search/graph", json={**body, "graph_leg": "never"}), 400, "graph_leg")
    schema = client.get("/schema/openapi.json").json()["components"]["schemas"]
    assert "reason" in schema["LegStatus"]["properties"]
    assert "graph_leg" in schema["SearchRequest"]["properties"]


def test_filters_apply_through_rest(client: httpx.Client, corpus: dict[str, Any]) -> None:
    r = client.post("/search", json={"query": "who worked where", "limit": 10, "collections": [corpus["collection"]],
                                     "filters": {"field": "computing"}})
    assert r.status_code == 200, r.text
    sources = {hit["source"] for hit in r.json()["results"]}
    assert sources == {"lovelace.md"}


@pytest.mark.parametrize(("body", "words"), [
    ({"query": ""}, ["query"]),
    ({"query": "   "}, ["empty"]),
    ({"query": "x" * 2001}, ["query"]),
    ({"query": "x", "limit": 0}, ["limit"]),
    ({"query": "x", "limit": 101}, ["limit"]),
    ({"query": "x", "mode": "psychic"}, ["mode"]),
    ({"query": "x", "filters": {"year": {"$near": 3}}}, ["$near"]),
    ({"query": "x", "filters": {"$or": "nope"}}, ["$or"]),
    ({"query": "x", "filters": ["year"]}, ["filters"]),
    ({"query": "x", "collections": ["bad name!"]}, ["collection"]),
    ({"limit": 5}, ["query"]),
    ({"query": "x", "surprise": 1}, ["surprise"]),
    ({"query": "x", "fusion": "borda"}, ["fusion"]),
])
def test_bad_search_requests_are_400_problems(client: httpx.Client, body: dict[str, Any], words: list[str]) -> None:
    assert_problem(client.post("/search", json=body), 400, *words)


def test_malformed_json_and_lone_surrogates_are_400(client: httpx.Client) -> None:
    assert_problem(client.post("/search", content=b'{"query": ', headers={"content-type": "application/json"}), 400)
    r = client.post("/search", content=b'{"query": "a \\ud800 b"}', headers={"content-type": "application/json"})
    assert_problem(r, 400)


# --- documents -------------------------------------------------------------------------------------
def test_document_lifecycle_json(client: httpx.Client, collection: str) -> None:
    body = {"text": "# Rosalind Franklin\n\nRosalind Franklin photographed DNA at King's College London.",
            "collection": collection, "source": "franklin.md"}
    first = client.post("/documents", json=body)
    assert first.status_code == 201 and first.json()["status"] == "created"
    doc_id = first.json()["id"]
    again = client.post("/documents", json=body)
    assert again.status_code == 200 and again.json() == {**again.json(), "id": doc_id, "status": "unchanged"}
    changed = client.post("/documents", json={**body, "text": body["text"] + " She worked with Maurice Wilkins."})
    assert changed.status_code == 201 and changed.json()["status"] == "updated" and changed.json()["id"] == doc_id

    detail = client.get(f"/documents/{doc_id}").json()
    assert detail["source"] == "franklin.md" and detail["chunks"]
    assert "Maurice Wilkins" in " ".join(c["content"] for c in detail["chunks"])

    found = client.get("/entities", params={"q": "Rosalind Franklin", "collection": collection}).json()["entities"]
    assert found and found[0]["name"] == "Rosalind Franklin"

    assert client.delete(f"/documents/{doc_id}").json() == {"id": doc_id, "deleted": True}
    assert_problem(client.get(f"/documents/{doc_id}"), 404, doc_id)
    assert_problem(client.delete(f"/documents/{doc_id}"), 404)
    # The graph went with it: no entity of this collection is left.
    assert client.get("/entities", params={"q": "Rosalind Franklin", "collection": collection}).json()["entities"] == []
    stats = client.get("/stats").json()
    assert collection not in stats["collections"]


def test_upload_multipart_files(client: httpx.Client, collection: str) -> None:
    from pathlib import Path

    docx = (Path(__file__).resolve().parents[2] / "samples" / "transistor.docx").read_bytes()
    r = client.post("/documents", data={"collection": collection, "tags": "a,b", "metadata": '{"year": 1947}'},
                    files={"file": ("transistor.docx", docx, "application/octet-stream")})
    assert r.status_code == 201, r.text
    doc = client.get(f"/documents/{r.json()['id']}").json()
    assert doc["source"] == "transistor.docx" and doc["tags"] == ["a", "b"] and doc["metadata"]["year"] == 1947
    r = client.post("/documents", data={"collection": collection},
                    files={"file": ("notes.md", b"# Notes\n\nGrace Hopper built a compiler.", "text/markdown")})
    assert r.status_code == 201
    page = client.get("/documents", params={"collection": collection, "limit": 1}).json()
    assert page["total"] == 2 and len(page["documents"]) == 1
    second = client.get("/documents", params={"collection": collection, "limit": 1, "offset": 1}).json()
    assert second["documents"][0]["id"] != page["documents"][0]["id"]


def test_upload_asciidoc_and_indented_markdown(client: httpx.Client, collection: str) -> None:
    """The newer readers through REST: an AsciiDoc page (its table searchable, its include never read) and
    Markdown whose indented code comes back fenced; a page with no text is a 422 problem."""
    page = (b"= Dock Schedule\n\ninclude::/etc/passwd[]\n\n.Berths\n|===\n|Berth |Vessel\n\n|B7 |Quillfeather Dawn\n|===\n")
    r = client.post("/documents", data={"collection": collection},
                    files={"file": ("dock.adoc", page, "text/asciidoc")})
    assert r.status_code == 201, r.text
    doc = client.get(f"/documents/{r.json()['id']}").json()
    assert doc["title"] == "Dock Schedule"
    hits = client.post("/search/keyword", json={"query": "Quillfeather", "collections": [collection]}).json()["results"]
    assert hits and "| B7 | Quillfeather Dawn |" in hits[0]["content"] and "passwd" not in hits[0]["content"]
    r = _upload(client, collection, "run.md", b"# Run\n\nStart it:\n\n    $ quill serve --port 8080\n")
    assert r.status_code == 201, r.text
    hits = client.post("/search/keyword", json={"query": "quill serve", "collections": [collection]}).json()["results"]
    assert hits and "```\n$ quill serve --port 8080\n```" in hits[0]["content"]
    assert_problem(client.post("/documents", data={"collection": collection},
                               files={"file": ("attrs.adoc", b":a: b\n", "text/asciidoc")}), 422, "no text content")
    # A MyST page through REST: its admonition is prose; a page that only includes another is a 422 problem.
    r = _upload(client, collection, "vault.md", b"# Vault\n\n:::{warning} Backups\nZentrovia vaults rotate keys.\n:::\n")
    assert r.status_code == 201, r.text
    hits = client.post("/search/keyword", json={"query": "rotate keys", "collections": [collection]}).json()["results"]
    assert hits and "Zentrovia vaults rotate keys." in hits[0]["content"] and ":::" not in hits[0]["content"]
    assert_problem(_upload(client, collection, "changes.md", b"```{include} ../CHANGELOG.md\n```\n"), 422,
                   "no text of its own")


def _upload(client: httpx.Client, collection: str, name: str, body: bytes, **form: str) -> httpx.Response:
    return client.post("/documents", data={"collection": collection, **form},
                       files={"file": (name, body, "text/markdown")})


def _keyword_sources(client: httpx.Client, collection: str, query: str) -> set[str]:
    r = client.post("/search/keyword", json={"query": query, "collections": [collection]})
    assert r.status_code == 200, r.text
    return {hit["source"] for hit in r.json()["results"]}


FIRST = b"# Readme\n\nThe Quokkaville gateway routes telemetry to Zanzibar Station."
SECOND = b"# Readme\n\nThe Marmotburg scheduler batches invoices for Timbuktu Depot."


def test_same_named_uploads_both_survive(client: httpx.Client, collection: str) -> None:
    """A second file with the same name and other bytes is stored beside the first, never over it."""
    first = _upload(client, collection, "README.md", FIRST)
    assert first.status_code == 201 and first.json()["source"] == "README.md", first.text
    second = _upload(client, collection, "README.md", SECOND)
    assert second.status_code == 201 and second.json()["status"] == "created", second.text
    assert second.json()["source"] == f"README.md#{hashlib.sha256(SECOND).hexdigest()[:12]}"
    assert second.json()["id"] != first.json()["id"]
    assert client.get("/documents", params={"collection": collection}).json()["total"] == 2
    assert _keyword_sources(client, collection, "Quokkaville Zanzibar") == {"README.md"}
    assert _keyword_sources(client, collection, "Marmotburg Timbuktu") == {second.json()["source"]}
    # The same bytes again are a no-op, whichever of the two they are.
    for sent, earlier in ((FIRST, first), (SECOND, second)):
        again = _upload(client, collection, "README.md", sent)
        assert again.status_code == 200 and again.json()["status"] == "unchanged"
        assert again.json()["id"] == earlier.json()["id"]
    # Same bytes with new tags update the document under its name (no third copy).
    tagged = _upload(client, collection, "README.md", FIRST, tags="v2")
    assert tagged.status_code == 201 and tagged.json()["status"] == "updated" and tagged.json()["id"] == first.json()["id"]
    assert client.get("/documents", params={"collection": collection}).json()["total"] == 2
    assert client.get(f"/documents/{first.json()['id']}").json()["metadata"]["file_sha256"] == hashlib.sha256(FIRST).hexdigest()


@pytest.mark.parametrize("how", ["form", "query", "source"])
def test_upload_replaces_when_the_client_says_so(client: httpx.Client, collection: str, how: str) -> None:
    form = {"source": "docs/readme"} if how == "source" else {}
    first = _upload(client, collection, "README.md", FIRST, **form)
    assert first.status_code == 201, first.text
    if how == "form":
        second = _upload(client, collection, "README.md", SECOND, replace="true")
    elif how == "query":
        second = client.post("/documents", params={"replace": "true"}, data={"collection": collection},
                             files={"file": ("README.md", SECOND, "text/markdown")})
    else:
        second = _upload(client, collection, "README.md", SECOND, **form)
    assert second.status_code == 201 and second.json()["status"] == "updated", second.text
    assert second.json()["id"] == first.json()["id"] and second.json()["source"] == first.json()["source"]
    assert client.get("/documents", params={"collection": collection}).json()["total"] == 1
    assert _keyword_sources(client, collection, "Quokkaville Zanzibar") == set()
    assert _keyword_sources(client, collection, "Marmotburg Timbuktu") == {first.json()["source"]}


def test_replace_flag_is_checked(client: httpx.Client, collection: str) -> None:
    assert_problem(_upload(client, collection, "a.md", FIRST, replace="yes"), 400, "replace")
    r = client.post("/documents", params={"replace": "true"}, json={"text": "x y z", "collection": collection})
    assert_problem(r, 400, "replace")
    assert_problem(client.post("/documents", params={"replace": "maybe"}, data={"collection": collection},
                               files={"file": ("a.md", FIRST, "text/markdown")}), 400)
    assert client.get("/documents", params={"collection": collection}).json()["total"] == 0


def test_bad_uploads_are_clear_problems_and_write_nothing(client: httpx.Client, collection: str) -> None:
    assert_problem(client.post("/documents", content=b"hello", headers={"content-type": "text/plain"}), 415, "content type")
    assert_problem(client.post("/documents", data={"collection": collection},
                               files={"file": ("tool.exe", b"MZ\x90\x00", "application/octet-stream")}), 415, "unsupported")
    assert_problem(client.post("/documents", data={"collection": collection},
                               files={"file": ("broken.pdf", b"%PDF-1.7 truncated", "application/pdf")}), 422, "pdf")
    assert_problem(client.post("/documents", data={"collection": collection},
                               files={"file": ("empty.txt", b"", "text/plain")}), 422, "empty")
    assert_problem(client.post("/documents", data={"collection": collection},
                               files={"file": ("bad.txt", bytes(range(128, 256)) * 4, "text/plain")}), 422, "utf-8")
    locked = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(56) + "EncryptedPackage".encode("utf-16-le") + bytes(400)
    assert_problem(client.post("/documents", data={"collection": collection},
                               files={"file": ("locked.docx", locked, "application/octet-stream")}), 422, "password-protected")
    assert_problem(client.post("/documents", data={"collection": collection},
                               files={"attachment": ("a.md", b"# A", "text/markdown")}), 400, "file")
    assert_problem(client.post("/documents", data={"collection": collection}), 415, "content type")
    assert_problem(client.post("/documents", json={"text": "", "collection": collection}), 400, "text")
    assert_problem(client.post("/documents", json={"text": "x", "collection": "no spaces please"}), 400, "collection")
    assert_problem(client.post("/documents", json={"text": "x", "metadata": [1]}), 400, "metadata")
    assert client.get("/documents", params={"collection": collection}).json()["total"] == 0


@pytest.mark.parametrize("path", ["/documents/not-a-uuid", f"/documents/{uuid.uuid4()}",
                                  "/entities/not-a-uuid", f"/entities/{uuid.uuid4()}"])
def test_unknown_ids_are_404(client: httpx.Client, path: str) -> None:
    assert_problem(client.get(path), 404)


def test_list_bad_paging_is_400(client: httpx.Client) -> None:
    assert_problem(client.get("/documents", params={"limit": 0}), 400, "limit")
    assert_problem(client.get("/documents", params={"offset": -1}), 400, "offset")
    assert_problem(client.get("/documents", params={"collection": "bad name"}), 400, "collection")


# --- entities --------------------------------------------------------------------------------------
def test_entity_search_and_detail_with_evidence(client: httpx.Client, corpus: dict[str, Any]) -> None:
    r = client.get("/entities", params={"q": "Bohr", "collection": corpus["collection"]})
    assert r.status_code == 200
    names = [e["name"] for e in r.json()["entities"]]
    assert "Niels Bohr" in names
    entity = next(e for e in r.json()["entities"] if e["name"] == "Niels Bohr")
    detail = client.get(f"/entities/{entity['id']}").json()
    assert detail["name"] == "Niels Bohr" and detail["collection"] == corpus["collection"]
    assert detail["chunks"] and detail["chunks"][0]["source"] == "bohr.md"
    assert detail["relations"], detail
    partners = {rel["entity"]["name"] for rel in detail["relations"]}
    assert "Copenhagen" in partners or "Werner Heisenberg" in partners
    assert all(ev["source"] == "bohr.md" for rel in detail["relations"] for ev in rel["evidence"])
    assert_problem(client.get("/entities", params={"q": ""}), 400)
    # Lucene syntax in a name search is matched as text, never parsed.
    assert client.get("/entities", params={"q": 'Bohr" OR *:* AND (', "collection": corpus["collection"]}).status_code == 200


# --- system ----------------------------------------------------------------------------------------
def test_health_ready_stats(client: httpx.Client, corpus: dict[str, Any]) -> None:
    assert client.get("/health").json()["status"] == "ok"
    ready = client.get("/ready")
    assert ready.status_code == 200 and ready.json()["ready"] is True
    stats = client.get("/stats").json()
    counts = stats["collections"][corpus["collection"]]
    assert counts["documents"] == counts["graph_documents"] == 3
    assert counts["chunks"] == counts["graph_chunks"] and counts["entities"] > 0
    assert stats["services"]["postgres"]["ok"] and stats["services"]["neo4j"]["ok"]


def test_request_ids(client: httpx.Client) -> None:
    assert len(client.get("/health").headers["x-request-id"]) == 32
    assert client.get("/health", headers={"X-Request-ID": "trace-123"}).headers["x-request-id"] == "trace-123"
    problem = client.post("/search", json={"query": ""}, headers={"X-Request-ID": "trace-456"}).json()
    assert problem["request_id"] == "trace-456"


def test_openapi_documents_every_endpoint(client: httpx.Client) -> None:
    schema = client.get("/schema/openapi.json").json()
    paths = schema["paths"]
    for path in SEARCH_PATHS:
        op = paths[path]["post"]
        assert op["requestBody"]["content"]["application/json"]["schema"]
        assert "200" in op["responses"] and "400" in op["responses"]
        assert "application/problem+json" in op["responses"]["400"]["content"]
    assert set(paths["/documents"]) == {"get", "post"}
    assert set(paths["/documents"]["post"]["requestBody"]["content"]) == {"application/json", "multipart/form-data"}
    assert set(paths["/documents/{document_id}"]) == {"get", "delete"}
    for path in ("/entities", "/entities/{entity_id}", "/health", "/ready", "/stats"):
        assert "get" in paths[path]
    assert set(paths["/collections/{name}"]) == {"delete"}
    assert {"403", "404", "409"} <= set(paths["/collections/{name}"]["delete"]["responses"])
    # Every operation says what it does (the handlers' docstrings), not only its one-line summary.
    undescribed = [f"{method.upper()} {path}" for path, ops in paths.items() for method, op in ops.items()
                   if len(op.get("description", "")) < 20]
    assert not undescribed, undescribed
    # The key schemes are described (the docs' Authorize button); this server asks for no key.
    assert set(schema["components"]["securitySchemes"]) == {"bearer", "apiKey"}
    assert "security" not in schema
    components = schema["components"]["schemas"]
    for model in ("SearchRequest", "SearchResponse", "Hit", "DocumentDetail", "EntityDetail", "Problem"):
        assert model in components, sorted(components)


# --- docs, problems of the router, content types, unknown collections ------------------------------
URL_ATTRS = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")


def docs_assets(c: httpx.Client, page: str) -> list[str]:
    """The files a docs page loads, after checking that it names no external host."""
    r = c.get(page)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html"), r.text[:300]
    assert not re.search(r"https?://", r.text), re.search(r".{60}https?://.{60}", r.text)
    urls = URL_ATTRS.findall(r.text)
    assert len(urls) >= 3, urls  # the stylesheet, the bundle, the preset (and the icon)
    assert all(u.startswith("/") and not u.startswith("//") for u in urls), urls
    return urls


@pytest.mark.parametrize("page", ["/schema", "/schema/swagger"])
def test_docs_pages_load_everything_from_this_server(client: httpx.Client, page: str) -> None:
    for url in docs_assets(client, page):
        asset = client.get(url)
        assert asset.status_code == 200 and asset.content, url
    assert client.get("/schema/openapi.json").json()["openapi"].startswith("3.")


def test_router_problems_carry_the_request_id(client: httpx.Client) -> None:
    for method, path, status, word in (("GET", "/no-such-endpoint", 404, "no such endpoint"),
                                       ("PUT", "/search", 405, "method not allowed")):
        r = client.request(method, path, headers={"X-Request-ID": f"trace-{status}"})
        body = assert_problem(r, status, word)
        assert body["request_id"] == r.headers["x-request-id"] == f"trace-{status}"
    generated = client.get("/no-such-endpoint")
    assert assert_problem(generated, 404)["request_id"] == generated.headers["x-request-id"]


def test_search_bodies_must_be_json(client: httpx.Client) -> None:
    text = '{"query": "polonium", "limit": 1}'
    for path in SEARCH_PATHS:
        assert_problem(client.post(path, content=text, headers={"content-type": "text/plain"}), 415, "application/json")
    assert_problem(client.post("/search", content=text, headers={"content-type": "application/x-www-form-urlencoded"}),
                   415, "application/x-www-form-urlencoded")
    for empty in (b"", b"  \n"):
        body = assert_problem(client.post("/search", content=empty, headers={"content-type": "application/json"}),
                              400, "body is empty")
        assert "'data'" not in body["detail"]
    assert client.post("/search", content=text, headers={"content-type": "application/json; charset=utf-8"}
                       ).status_code == 200


def test_unknown_collections_are_404(client: httpx.Client, corpus: dict[str, Any]) -> None:
    for path in SEARCH_PATHS:
        assert_problem(client.post(path, json={"query": "polonium", "collections": ["no_such_collection"]}),
                       404, "unknown collection 'no_such_collection'")
    assert_problem(client.post("/search", json={"query": "polonium",
                                                "collections": [corpus["collection"], "no_such_collection"]}),
                   404, "no_such_collection")
    # A search naming no collection (the seed's shape) still searches everything.
    seed = client.post("/search", json={"query": "Who discovered polonium in Paris?", "limit": 5})
    assert seed.status_code == 200 and seed.json()["results"], seed.text
    # Listing is a filter, not a lookup: an unknown collection lists nothing.
    listed = client.get("/documents", params={"collection": "no_such_collection"}).json()
    assert listed["total"] == 0 and listed["documents"] == []


# --- API keys, size limit, CORS: a second server with those settings -------------------------------
@pytest.fixture(scope="module")
def keyed(settings: Settings, services: object, models: object) -> Iterator[InProcessApi]:
    digest = hashlib.sha256(b"second-key").hexdigest()
    locked = settings.model_copy(update={
        "api_keys": __import__("pydantic").SecretStr(f"first-key, sha256:{digest}"),
        "max_file_mb": 0.01, "cors_origins": ["https://app.example"],
    })
    with InProcessApi(locked, models) as server:
        yield server


def test_api_keys(keyed: InProcessApi) -> None:
    with keyed.client(timeout=60) as c:
        assert c.get("/health").status_code == 200
        for path in ("/ready", "/stats", "/documents", "/no-such-endpoint"):
            missing = assert_problem(c.get(path), 401, "api key")
            assert missing["instance"] == path
        r = c.post("/search", json={"query": "x"})
        assert_problem(r, 401)
        assert r.headers["www-authenticate"].startswith("Bearer")
        assert_problem(c.post("/search", json={"query": "x"}, headers={"Authorization": "Bearer wrong"}), 401, "wrong")
        assert c.get("/stats", headers={"Authorization": "Bearer first-key"}).status_code == 200
        assert c.get("/stats", headers={"X-API-Key": "second-key"}).status_code == 200
        assert_problem(c.get("/stats", headers={"X-API-Key": "sha256:" + hashlib.sha256(b"second-key").hexdigest()}), 401)


def test_docs_need_no_key_and_declare_how_keys_are_sent(keyed: InProcessApi) -> None:
    with keyed.client(timeout=60) as c:
        for page in ("/schema", "/schema/swagger"):
            assert all(c.get(url).status_code == 200 for url in docs_assets(c, page))
        schema = c.get("/schema/openapi.json").json()
        schemes = schema["components"]["securitySchemes"]
        assert schemes["bearer"] == {**schemes["bearer"], "type": "http", "scheme": "bearer"}
        assert schemes["apiKey"] == {**schemes["apiKey"], "type": "apiKey", "name": "X-API-Key", "in": "header"}
        assert schema["security"] == [{"bearer": []}, {"apiKey": []}]
        assert schema["paths"]["/health"]["get"]["security"] == [{}]  # open
        assert_problem(c.post("/schema/openapi.json"), 401)  # only reading the docs is open


def test_oversize_upload_is_413_and_writes_nothing(keyed: InProcessApi, collection: str) -> None:
    headers = {"X-API-Key": "first-key"}
    big = b"# Big\n\n" + b"word " * 4000  # 20 kB, over the 0.01 MB limit
    with keyed.client(timeout=60, headers=headers) as c:
        assert_problem(c.post("/documents", data={"collection": collection},
                              files={"file": ("big.md", io.BytesIO(big), "text/markdown")}), 413)
        assert_problem(c.post("/documents", json={"text": big.decode(), "collection": collection}), 413)
        huge = b"x" * (3 * 1024 * 1024)  # over the body limit itself
        assert_problem(c.post("/documents", content=huge, headers={"content-type": "application/json"}), 413)
        assert c.get("/documents", params={"collection": collection}).json()["total"] == 0


def test_cors_preflight(keyed: InProcessApi) -> None:
    with keyed.client(timeout=60) as c:
        r = c.options("/search", headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST",
                                          "Access-Control-Request-Headers": "content-type"})
        assert r.status_code in (200, 204)
        assert r.headers["access-control-allow-origin"] == "https://app.example"
        other = c.options("/search", headers={"Origin": "https://evil.example", "Access-Control-Request-Method": "POST"})
        assert other.headers.get("access-control-allow-origin") != "https://evil.example"
