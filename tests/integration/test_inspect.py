"""cypher/inspect.cypher (the Neo4j Browser queries) against a freshly ingested collection on the real Neo4j.

Every statement is run in a READ session with the Browser's parameters pointing at the ingested data; the
looking queries must name that data and the drift checks must find nothing on a clean collection, and
exactly what was planted once drift is planted by hand. The server itself confirms every statement only reads.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import neo4j
import pytest
from neo4j.exceptions import ClientError
from neo4j.graph import Node, Path as GraphPath, Relationship

from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime
from graphrag.stores import queries

DOCS = {
    "marie.md": ("# Marie Curie\n\nMarie Curie was born in Warsaw, Poland. "
                 "In Paris, Marie Curie married Pierre Curie, and Marie Curie worked with Pierre Curie on radium.\n\n"
                 "## Later life\n\n" + " ".join([
                     "After the death of Pierre Curie, Marie Curie took over his teaching post at the Sorbonne.",
                     "She was the first woman to teach there, and her lectures drew large crowds of students.",
                     "During the war she organised mobile radiography units that travelled to the front lines.",
                     "Her daughter Irene Curie drove one of those units and later became a chemist herself.",
                     "In Warsaw, a radium institute opened with her support, and her sister Bronislawa ran it.",
                     "Marie Curie visited the United States twice to raise money for a gram of radium.",
                     "The American journalist Missy Meloney organised the campaign and the tour in New York.",
                     "Marie Curie died in Passy, France, from an illness caused by long exposure to radiation.",
                     "Her notebooks are still radioactive and are kept in lead boxes at a library in Paris.",
                     "Visitors who wish to read them sign a waiver and wear protective clothing.",
                     "Albert Einstein once remarked that she was the one person not corrupted by fame.",
                 ])),
    "pierre.md": ("# Pierre Curie\n\nPierre Curie was a physicist in Paris. "
                  "Pierre Curie worked with Marie Curie at the Sorbonne in Paris."),
    "ada.md": "# Ada Lovelace\n\nAda Lovelace worked with Charles Babbage in London, England.",
}

WRITE_CLAUSE = re.compile(
    r"\b(CREATE|MERGE|SET|DELETE|DETACH|REMOVE|FOREACH|DROP|ALTER|GRANT|DENY|REVOKE|LOAD\s+CSV|"
    r"IN\s+TRANSACTIONS|apoc\.(?:create|merge|refactor|periodic)|db\.create)\b",
    re.IGNORECASE,
)


def inspect_names() -> list[str]:
    """The statement names of cypher/inspect.cypher, in file order (queries.py has no public lister)."""
    text = (queries.resource_dir("cypher") / "inspect.cypher").read_text(encoding="utf-8")
    return [m.group(1) for line in text.splitlines() if (m := queries._NAME_RE.match(line))]


NAMES = inspect_names()
DRIFT = [name for name in NAMES if name.startswith("drift_")]


def strings(value: Any) -> set[str]:
    """Every string inside a record value: node and relationship properties, paths, lists and maps."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, GraphPath):
        return set().union(*(strings(x) for x in (*value.nodes, *value.relationships)))
    if isinstance(value, Node | Relationship):
        return strings(dict(value))
    if isinstance(value, dict):
        return set().union(set(), *(strings(v) for v in value.values()))
    if isinstance(value, Iterable):
        return set().union(set(), *(strings(v) for v in value))
    return set()


def without_comments_and_strings(statement: str) -> str:
    text = re.sub(r"//[^\n]*", "", statement)
    return re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "''", text)


@pytest.fixture
async def graph(tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> dict[str, Any]:
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == len(DOCS), report.failed
    docs = {Path(d["source"]).name: d for d in report.documents}
    marie = docs["marie.md"]
    chunks = await runtime.postgres.fetch("documents", "document_chunks", marie["id"])
    assert chunks
    return {
        "collection": collection,
        "source": marie["source"],
        "document_id": str(marie["id"]),
        "entity": "PIERRE curie",  # the Browser lookups ignore case
        "chunk_id": str(chunks[0]["id"]),
        "limit": 50,
    }


async def run_read(runtime: Runtime, name: str, params: dict[str, Any]) -> list[neo4j.Record]:
    store = runtime.neo4j

    async def work(tx: Any) -> list[neo4j.Record]:
        result = await tx.run(queries.cypher("inspect", name), params)
        return [record async for record in result]

    async with store.driver.session(database=store.database, default_access_mode=neo4j.READ_ACCESS) as session:
        return await session.execute_read(work)


def test_every_statement_is_documented_and_has_no_write_clause() -> None:
    assert {"document_graph", "entity_neighbourhood", "most_connected_entities", "chunks_sharing_entities",
            "collection_overview", "drift_documents_without_chunks", "drift_chunks_without_document",
            "drift_entities_without_mentions", "drift_entity_mention_counts", "drift_relation_evidence",
            "drift_collection_mismatch"} <= set(NAMES)
    for name in NAMES:
        statement = queries.cypher("inspect", name)
        first = statement.splitlines()[0]
        assert first.startswith("// ") and len(first) > 10, f"{name} lacks its one-line comment"
        assert not WRITE_CLAUSE.search(without_comments_and_strings(statement)), name
        assert ";" not in without_comments_and_strings(statement), name
        # Values are parameters: no literal strings or numbers compared against data.
        assert not re.search(r"[=<>]\s*'", without_comments_and_strings(statement)), name


async def test_every_statement_is_read_only_for_the_server(runtime: Runtime, graph: dict[str, Any]) -> None:
    store = runtime.neo4j
    for name in NAMES:
        summary = (await store.driver.execute_query("EXPLAIN " + queries.cypher("inspect", name), graph,
                                                    database_=store.database)).summary
        assert summary.query_type == "r", (name, summary.query_type)
    # A READ session really refuses writes, so the runs below prove the statements only read.
    with pytest.raises(ClientError) as refused:
        async with store.driver.session(database=store.database,
                                        default_access_mode=neo4j.READ_ACCESS) as session:
            await session.execute_read(lambda tx: tx.run("CREATE (:InspectProbe {collection: $c})",
                                                          c=graph["collection"]))
    assert refused.value.code == "Neo.ClientError.Statement.AccessMode"


async def test_inspect_queries_show_the_ingested_graph(runtime: Runtime, graph: dict[str, Any]) -> None:
    results = {name: await run_read(runtime, name, graph) for name in NAMES}
    named = {name: set().union(set(), *(strings(r.values()) for r in rows)) for name, rows in results.items()}

    overview = results["collection_overview"][0]
    assert overview["collection"] == graph["collection"]
    assert overview["documents"] == len(DOCS) and overview["chunks"] >= len(DOCS)
    assert overview["entities"] > 0 and overview["relations"] > 0 and overview["mentions"] > 0
    assert overview["relation_evidence"] >= overview["relations"]
    assert graph["collection"] in {r["collection"] for r in results["collections"]}
    assert {"Marie Curie", "Pierre Curie", "Ada Lovelace"} <= named["documents"]

    # A document with its chunks and entities, as paths.
    for name in ("document_graph", "document_graph_by_source"):
        rows = results[name]
        assert any(isinstance(r["chunk"], GraphPath) for r in rows), name
        assert {graph["document_id"], graph["chunk_id"], "Marie Curie", "Pierre Curie", "Warsaw"} <= named[name]
        assert "Ada Lovelace" not in named[name] and "Charles Babbage" not in named[name]
        assert any(isinstance(r["next"], GraphPath) for r in rows), name  # marie.md has two chunks
    assert [(r["index"], r["document"]) for r in results["document_chunks"]] == [(0, "Marie Curie"),
                                                                                  (1, "Marie Curie")]
    assert results["document_chunks"][0]["chunk_id"] == graph["chunk_id"]

    # An entity's neighbourhood by name, case-insensitively, with the evidence chunk text.
    rows = results["entity_neighbourhood"]
    assert rows and {r["entity"] for r in rows} == {"Pierre Curie"}
    marie = next(r for r in rows if r["neighbour"] == "Marie Curie")
    assert marie["evidence_chunk_ids"] and len(marie["evidence"]) == len(marie["evidence_chunk_ids"])
    assert {e["chunk_id"] for e in marie["evidence"]} == set(marie["evidence_chunk_ids"])
    assert all("Pierre Curie" in e["text"] and "Marie Curie" in e["text"] for e in marie["evidence"])
    assert {"Marie Curie", "Pierre Curie"} <= {e["document"] for e in marie["evidence"]}
    assert "Paris" in {r["neighbour"] for r in rows}
    assert {"Pierre Curie", "Marie Curie", "Paris"} <= named["entity_neighbourhood_graph"]
    assert "Charles Babbage" not in named["entity_neighbourhood_graph"]
    assert {"Marie Curie", "Pierre Curie"} <= {r["document"] for r in results["entity_mentions"]}

    # The most connected entities: the Curies and Paris, ahead of the Lovelace page's entities.
    top = results["most_connected_entities"]
    assert {r["entity"] for r in top[:3]} & {"Marie Curie", "Pierre Curie", "Paris"}
    ranked = [r["entity"] for r in top]
    assert ranked.index("Pierre Curie") < ranked.index("Charles Babbage")
    assert all(r["mentions_property"] == r["mentioning_chunks"] for r in top)
    assert {"Marie Curie", "Pierre Curie", "Paris"} <= named["most_connected_graph"]

    # Chunks sharing entities with the Marie Curie chunk: the Pierre Curie page's, not Lovelace's.
    shared = results["chunks_sharing_entities"]
    assert shared and all(r["chunk_id"] != graph["chunk_id"] for r in shared)
    pierre = next(r for r in shared if r["document"] == "Pierre Curie")
    assert {"Marie Curie", "Pierre Curie", "Paris"} <= set(pierre["shared"])
    assert "Ada Lovelace" not in {r["document"] for r in shared}
    assert {graph["chunk_id"], "Pierre Curie"} <= named["chunks_sharing_entities_graph"]

    # The drift checks find nothing on a clean collection.
    assert DRIFT and {name: results[name] for name in DRIFT} == {name: [] for name in DRIFT}


async def test_unknown_values_give_empty_results(runtime: Runtime, graph: dict[str, Any]) -> None:
    # Browser's `:params {limit: 25}` may send a float; the statements take it as an integer.
    params = {**graph, "collection": "no_such_collection", "document_id": "nope", "source": "nope",
              "entity": "nobody", "chunk_id": "nope", "limit": 25.0}
    for name in NAMES:
        rows = await run_read(runtime, name, params)
        if name == "collections":
            assert "no_such_collection" not in {r["collection"] for r in rows}
        elif name == "collection_overview":
            assert rows[0]["documents"] == rows[0]["chunks"] == rows[0]["entities"] == 0
        else:
            assert rows == [], name


# Drift planted by hand in the test's own collection; each check must name what was planted.
PLANT = [
    "CREATE (:Document {id: $p + 'doc', collection: $c, source: $p + 'orphan.md', title: 'Orphan document'})",
    "CREATE (:Chunk {id: $p + 'chunk', document_id: $p + 'gone', collection: $c, index: 0, text: 'Stray chunk'})",
    "MATCH (d:Document {id: $document_id}) "
    "CREATE (d)-[:HAS_CHUNK]->(:Chunk {id: $p + 'moved', document_id: d.id, collection: $c + '_other', index: 9, "
    "text: 'Moved chunk'})",
    "CREATE (:Entity {id: $p + 'nobody', collection: $c, name: 'Nobody Mentioned', label: 'PERSON', "
    "key: 'nobody mentioned|PERSON', norm: 'nobody mentioned', mentions: 0})",
    "MATCH (e:Entity {collection: $c, name: 'Warsaw'}) SET e.mentions = e.mentions + 7",
    "MATCH (:Entity {collection: $c, name: 'Ada Lovelace'})-[r:RELATED_TO]-(:Entity {name: 'Charles Babbage'}) "
    "SET r.evidence_chunk_ids = r.evidence_chunk_ids + ($p + 'deleted'), r.chunk_weights = r.chunk_weights + 1, "
    "r.weight = r.weight + 1",
    "MATCH (c:Chunk {id: $chunk_id}) "
    "CREATE (c)-[:MENTIONS {count: 1}]->(:Entity {id: $p + 'foreign', collection: $c + '_other', "
    "name: 'Foreign Entity', label: 'PERSON', key: 'foreign entity|PERSON', norm: 'foreign entity', mentions: 1})",
]


async def test_drift_checks_find_planted_drift(runtime: Runtime, graph: dict[str, Any]) -> None:
    store = runtime.neo4j
    prefix = f"{graph['collection']}-drift-"
    try:
        for statement in PLANT:
            await store.driver.execute_query(statement, {**graph, "c": graph["collection"], "p": prefix},
                                             database_=store.database)
        found = {name: await run_read(runtime, name, graph) for name in DRIFT}
    finally:  # the planted nodes, including those in the "_other" collection, go again
        await store.driver.execute_query("MATCH (n) WHERE n.id STARTS WITH $p DETACH DELETE n", p=prefix,
                                         database_=store.database)
    assert [r["document_id"] for r in found["drift_documents_without_chunks"]] == [prefix + "doc"]
    stray = found["drift_chunks_without_document"]
    assert [(r["chunk_id"], r["document_exists"], r["linked_from"]) for r in stray] == [(prefix + "chunk", False, [])]
    assert [(r["chunk_id"], r["chunk_collection"]) for r in found["drift_collection_mismatch"]] == [
        (prefix + "moved", graph["collection"] + "_other")]
    assert [(r["relationship"], r["entity"]) for r in found["drift_graph_across_collections"]] == [
        ("MENTIONS", "Foreign Entity")]
    assert [r["entity"] for r in found["drift_entities_without_mentions"]] == ["Nobody Mentioned"]
    counts = found["drift_entity_mention_counts"]
    assert [(r["entity"], r["mentions_property"] - r["actual"]) for r in counts] == [("Warsaw", 7)]
    evidence = found["drift_relation_evidence"]
    assert [r["missing_chunk_ids"] for r in evidence] == [[prefix + "deleted"]]
    assert {evidence[0]["source"], evidence[0]["target"]} == {"Ada Lovelace", "Charles Babbage"}
