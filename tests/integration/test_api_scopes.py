"""API keys scoped to collections and to read or read-write access, enforced in every endpoint and
every search leg (graph included), and a per-key rate limit: over real HTTP against the real stores."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from graphrag.api.auth import OPEN, Principal, RateLimiter, digest, parse_keys
from graphrag.config import Settings
from graphrag.errors import ConfigurationError, Forbidden
from tests.conftest import ApiServer

KEYS = {"admin": "admin-secret-1", "reader_a": "reader-a-secret-2", "writer_a": "writer-a-secret-3",
        "reader_b": "reader-b-secret-4"}
# The same people and places in both collections, so an unscoped graph walk would cross between them.
TEXT = {
    "A": {"curie.md": "# Marie Curie\n\nMarie Curie worked with Pierre Curie in Paris on radium.",
          "bohr.md": "# Niels Bohr\n\nNiels Bohr met Marie Curie in Copenhagen and Paris."},
    "B": {"secret.md": "# Project Falcon\n\nMarie Curie funded Project Falcon in Paris with Niels Bohr. "
                       "The codename is BLUEHERON."},
}


# --- pure logic ----------------------------------------------------------------------------------
def test_parse_keys_plain_digest_and_scoped_forms() -> None:
    plain = parse_keys(f"k1, sha256:{digest('k2').hex()}")
    assert [k.principal.name for k in plain] == ["key-1", "key-2"]
    assert plain[1].digest == digest("k2") and all(k.principal.collections is None for k in plain)
    scoped = parse_keys(json.dumps([{"name": "r", "sha256": digest("x").hex(), "collections": ["a"],
                                     "access": "read"}]))
    assert scoped[0].principal == Principal("r", frozenset({"a"}), write=False)
    assert "x" not in repr(scoped[0])  # digests only, and not even those in the repr
    for bad, words in [('[{"name": "r"}]', "sha256"), ('[{"key": "x", "access": "admin"}]', "access"),
                       ('[{"key": "x", "collections": []}]', "collections"), ('[{"key": "x", "role": 1}]', "role"),
                       ("[nope", "JSON"), ('[{"sha256": "12"}]', "64 hex")]:
        with pytest.raises(ConfigurationError, match=words):
            parse_keys(bad)


def test_principal_scope_rules() -> None:
    p = Principal("r", frozenset({"a", "b"}), write=False)
    assert p.readable(None) == ("a", "b") and p.readable(["a"]) == ("a",)
    with pytest.raises(Forbidden, match="'c'"):
        p.readable(["a", "c"])
    with pytest.raises(Forbidden, match="read-only"):
        p.check_write("a")
    assert OPEN.readable(None) is None and OPEN.readable(["x"]) == ("x",)


def test_rate_limiter_bucket() -> None:
    limiter = RateLimiter(per_minute=60, burst=2)
    assert limiter.take("k", now=0.0) == 0 and limiter.take("k", now=0.0) == 0
    wait = limiter.take("k", now=0.0)
    assert wait == pytest.approx(1.0)
    assert limiter.take("other", now=0.0) == 0, "each caller has its own bucket"
    assert limiter.take("k", now=1.01) == 0, "a token comes back after 1/rate seconds"
    assert not RateLimiter(0).enabled


# --- real HTTP, real stores ----------------------------------------------------------------------
@pytest.fixture(scope="module")
def scoped(settings: Settings, services: object, models: object) -> Iterator[dict[str, Any]]:
    a, b = f"scope_a_{uuid.uuid4().hex[:8]}", f"scope_b_{uuid.uuid4().hex[:8]}"
    entries = [
        {"name": "admin", "key": KEYS["admin"]},
        {"name": "reader-a", "sha256": digest(KEYS["reader_a"]).hex(), "collections": [a], "access": "read"},
        {"name": "writer-a", "sha256": digest(KEYS["writer_a"]).hex(), "collections": [a], "access": "read-write"},
        {"name": "reader-b", "sha256": digest(KEYS["reader_b"]).hex(), "collections": [b], "access": "read"},
    ]
    locked = settings.model_copy(update={"api_keys": SecretStr(json.dumps(entries))})
    with ApiServer(locked, models) as server:
        ids: dict[str, str] = {}
        with httpx.Client(base_url=server.url, timeout=120, headers={"X-API-Key": KEYS["admin"]}) as c:
            for name, coll in (("A", a), ("B", b)):
                for source, text in TEXT[name].items():
                    r = c.post("/documents", json={"text": text, "source": source, "collection": coll})
                    assert r.status_code == 201, r.text
                    ids[f"{name}:{source}"] = r.json()["id"]
        yield {"url": server.url, "a": a, "b": b, "ids": ids}


def _client(env: dict[str, Any], who: str) -> httpx.Client:
    return httpx.Client(base_url=env["url"], timeout=120, headers={"Authorization": f"Bearer {KEYS[who]}"})


def _problem(r: httpx.Response, status: int, *words: str) -> None:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    for word in words:
        assert word.lower() in r.json()["detail"].lower(), r.json()["detail"]


@pytest.mark.parametrize("path", ["/search", "/search/vector", "/search/keyword", "/search/hybrid", "/search/graph"])
def test_scoped_key_never_sees_another_collection_through_any_leg(scoped: dict[str, Any], path: str) -> None:
    b_chunks: set[str] = set()
    with _client(scoped, "admin") as admin:
        doc = admin.get(f"/documents/{scoped['ids']['B:secret.md']}").json()
        b_chunks = {ch["id"] for ch in doc["chunks"]}
        # Unscoped, the question does reach collection B: the scoped run below is a real test.
        everything = admin.post(path, json={"query": "Who funded Project Falcon with Marie Curie in Paris?",
                                            "collections": [scoped["a"], scoped["b"]], "limit": 10}).json()
        assert any(h["collection"] == scoped["b"] for h in everything["results"])
    with _client(scoped, "reader_a") as c:
        body = c.post(path, json={"query": "Who funded Project Falcon with Marie Curie in Paris?", "limit": 10})
        assert body.status_code == 200, body.text
        data = body.json()
        assert data["results"], "collection A answers"
        assert {h["collection"] for h in data["results"]} == {scoped["a"]}
        assert not b_chunks & {h["chunk_id"] for h in data["results"]}
        assert "BLUEHERON" not in json.dumps(data)
        for rel in data["graph_context"]["relations"]:
            assert rel["evidence_chunk_id"] not in b_chunks
        with _client(scoped, "admin") as admin:
            for ent in data["graph_context"]["entities"] + [e for h in data["results"] for e in h["entities"]]:
                assert admin.get(f"/entities/{ent['id']}").json()["collection"] == scoped["a"]
        _problem(c.post(path, json={"query": "Project Falcon", "collections": [scoped["b"]]}), 403, scoped["b"])
        _problem(c.post(path, json={"query": "Project Falcon", "collections": [scoped["a"], scoped["b"]]}), 403)
        # A filter cannot widen the scope either.
        r = c.post(path, json={"query": "Project Falcon", "filters": {"collection": scoped["b"]}})
        assert r.status_code == 200 and r.json()["results"] == []


def test_scoped_key_documents_entities_and_stats(scoped: dict[str, Any]) -> None:
    a, b, ids = scoped["a"], scoped["b"], scoped["ids"]
    with _client(scoped, "reader_a") as c:
        listed = c.get("/documents").json()
        assert {d["collection"] for d in listed["documents"]} == {a} and listed["total"] == 2
        _problem(c.get("/documents", params={"collection": b}), 403, b)
        assert c.get(f"/documents/{ids['A:curie.md']}").status_code == 200
        _problem(c.get(f"/documents/{ids['B:secret.md']}"), 404)  # exactly like an unknown id
        _problem(c.delete(f"/documents/{ids['A:curie.md']}"), 403, "read-only")
        _problem(c.post("/documents", json={"text": "# X\n\nY.", "collection": a}), 403, "read-only")
        found = c.get("/entities", params={"q": "Marie Curie"}).json()["entities"]
        assert found and {e["collection"] for e in found} == {a}
        _problem(c.get("/entities", params={"q": "Curie", "collection": b}), 403)
        stats = c.get("/stats").json()
        assert set(stats["collections"]) == {a}
    with _client(scoped, "reader_b") as c:
        b_entities = c.get("/entities", params={"q": "Marie Curie"}).json()["entities"]
        assert b_entities and {e["collection"] for e in b_entities} == {b}
    with _client(scoped, "reader_a") as c:
        _problem(c.get(f"/entities/{b_entities[0]['id']}"), 404)
    with _client(scoped, "writer_a") as c:
        _problem(c.post("/documents", json={"text": "# X\n\nY.", "collection": b}), 403, b)
        _problem(c.post("/documents", data={"collection": b},
                        files={"file": ("x.md", b"# X\n\nInto B.", "text/markdown")}), 403, b)
        _problem(c.delete(f"/documents/{ids['B:secret.md']}"), 404)
        r = c.post("/documents", json={"text": "# Memo\n\nLise Meitner wrote it.", "source": "memo", "collection": a})
        assert r.status_code == 201, r.text
        assert c.delete(f"/documents/{r.json()['id']}").status_code == 200
    with _client(scoped, "admin") as admin:
        assert admin.get("/documents", params={"collection": b}).json()["total"] == 1, "B untouched"


def test_keys_never_reach_logs_or_errors(scoped: dict[str, Any], caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    with _client(scoped, "reader_a") as c:
        c.post("/search", json={"query": "Marie Curie", "limit": 2})
        wrong = c.get("/stats", headers={"Authorization": "Bearer reader-a-secret-WRONG"})
        assert wrong.status_code == 401 and "secret" not in wrong.text
        c.post("/search", json={"query": "x", "collections": [scoped["b"]]})
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "key=reader-a" in logged, "the key's name identifies the caller in the access log"
    for key in KEYS.values():
        assert key not in logged
    assert "WRONG" not in logged


def test_rate_limit_per_key(settings: Settings, services: object, models: object) -> None:
    limited = settings.model_copy(update={"api_keys": SecretStr("rl-key-1,rl-key-2"),
                                          "rate_limit_per_minute": 1.0, "rate_limit_burst": 2})
    with ApiServer(limited, models) as server, httpx.Client(base_url=server.url, timeout=60) as c:
        one, two = {"X-API-Key": "rl-key-1"}, {"X-API-Key": "rl-key-2"}
        assert [c.get("/stats", headers=one).status_code for _ in range(2)] == [200, 200]
        r = c.get("/stats", headers=one)
        _problem(r, 429, "rate limit")
        assert int(r.headers["retry-after"]) >= 1
        assert c.get("/stats", headers=two).status_code == 200, "another key has its own budget"
        assert all(c.get("/health").status_code == 200 for _ in range(5)), "liveness is never limited"
