"""``graphrag repair``: drift made by hand in Neo4j (a document's graph gone, a document and chunk that
PostgreSQL does not know, a chunk deleted from a document, an orphan entity, a wrong mention count)
is found by ``graphrag status`` and reconciled by ``graphrag repair``, which reports what it fixed."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from pathlib import Path
from typing import Any

from graphrag.health import collect_status
from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime
from tests.helpers import entity_lists_match_the_graph, run_cli

DOCS = {
    "a.md": "# Harbour Survey\n\nIngrid Lund surveyed the harbour of Bergen with the Norwegian Coastal Agency.",
    "b.md": "# River Report\n\nTomas Varga measured the Danube near Budapest for the Hungarian Water Board.",
    "c.md": "# Glacier Notes\n\nAmara Okafor photographed the Rhone Glacier near Gletsch in Switzerland.",
}


async def _cypher(rt: Runtime, statement: str, **params: Any) -> list[dict[str, Any]]:
    # Test-only statements that break the graph on purpose; the product's Cypher lives in cypher/.
    result = await rt.neo4j.driver.execute_query(statement, parameters_=params, database_=rt.neo4j.database)
    return [r.data() for r in result.records]


def _cli(settings: Any, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GRAPHRAG_HOME": str(settings.home_dir), "HF_HUB_OFFLINE": "1"}
    return run_cli(*args, env=env)


async def test_repair_reconciles_drift_in_both_directions(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                                          collection: str, settings: Any) -> None:
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 3 and not report.failed
    before = (await collect_status(runtime))["collections"][collection]
    ids = {r["source"].rsplit("/", 1)[-1]: str(r["id"]) for r in await runtime.postgres.pool.fetch(
        "SELECT id, source FROM documents WHERE collection = $1", collection)}

    # 1. a document's whole graph is gone (as after a lost write)
    await _cypher(runtime, "MATCH (d:Document {id: $id}) OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk) DETACH DELETE d, c",
                  id=ids["a.md"])
    # 2. one chunk of another document is gone
    await _cypher(runtime, "MATCH (:Document {id: $id})-[:HAS_CHUNK]->(c:Chunk) WITH c LIMIT 1 DETACH DELETE c",
                  id=ids["b.md"])
    # 3. a document and a chunk PostgreSQL never had, and an entity nothing mentions
    ghost, ghost_chunk = str(uuid.uuid4()), str(uuid.uuid4())
    await _cypher(runtime, "CREATE (d:Document {id: $id, collection: $c, source: 'ghost.md', title: 'Ghost'})"
                           "-[:HAS_CHUNK]->(:Chunk {id: $chunk, document_id: $id, collection: $c, index: 0, text: 'boo'})",
                  id=ghost, chunk=ghost_chunk, c=collection)
    await _cypher(runtime, "CREATE (:Entity {id: $id, collection: $c, name: 'Nobody', label: 'PERSON', "
                           "key: 'nobody|PERSON', norm: 'nobody', mentions: 7})", id=str(uuid.uuid4()), c=collection)
    # 4. a mention count that lies (on an entity of a document that is otherwise intact)
    await _cypher(runtime, "MATCH (:Document {id: $id})-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(e:Entity) "
                           "WITH e LIMIT 1 SET e.mentions = 99 REMOVE e.chunk_ids", id=ids["c.md"])

    drifted = await collect_status(runtime)
    drift = next(d for d in drifted["drift"] if d["collection"] == collection)
    assert ids["a.md"] in drift["missing_in_neo4j"] and ghost in drift["missing_in_postgres"]

    status = _cli(settings, "status", "--json")
    assert status.returncode == 0, status.stderr
    assert any(d["collection"] == collection for d in json.loads(status.stdout)["drift"])

    run = _cli(settings, "repair", "--collection", collection, "--json")
    assert run.returncode == 0, run.stderr
    fixed = json.loads(run.stdout)["collections"][collection]
    assert fixed["removed_from_graph"] == 1  # the ghost document
    assert fixed["rebuilt"] == 2  # a.md (missing) and b.md (a chunk missing)
    assert fixed["orphan_entities"] >= 1 and fixed["recounted_entities"] >= 1

    after = await collect_status(runtime)
    assert not [d for d in after["drift"] if d["collection"] == collection], after["drift"]
    assert after["collections"][collection] == before, "the graph is back to what ingestion made"
    nobody = await _cypher(runtime, "MATCH (e:Entity {collection: $c, name: 'Nobody'}) RETURN e", c=collection)
    assert nobody == []
    lies = await _cypher(runtime, "MATCH (e:Entity {collection: $c}) WHERE e.mentions <> COUNT { (e)<-[:MENTIONS]-() } "
                                  "RETURN e.name AS name", c=collection)
    assert lies == []
    await entity_lists_match_the_graph(runtime, collection)  # every entity's chunk and neighbour lists too

    again = _cli(settings, "repair", "--collection", collection)
    assert again.returncode == 0 and "nothing to repair" in again.stdout
