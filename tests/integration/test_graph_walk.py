"""The graph leg's statement against the real Neo4j: it links, walks and scores as the Python reference
(graphrag/search/walk.py) does on the same graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag.ingest.backfill import backfill_entity_lists
from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime
from graphrag.search import walk
from graphrag.search.config import SearchConfig
from graphrag.search.graph import PER_ENTITY, PER_FIRST, PER_NEXT, FRONTIER, TOP_ENTITIES, graph_parameters
from graphrag.stores.repo.graph import ENTITY_CHUNKS
from tests.helpers import entity_lists_match_the_graph, graph_rows
from tests.integration.test_search import DOCS


@pytest.fixture
async def graph(tmp_path: Path, ingestor: Ingestor, collection: str) -> str:
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    assert (await ingestor.ingest_paths([tmp_path], collection=collection)).ingested == len(DOCS)
    return collection


async def test_the_statement_walks_and_scores_like_the_python_reference(runtime: Runtime, graph: str) -> None:
    total = await runtime.postgres.q.search.chunk_count([graph])
    config = SearchConfig(collections=(graph,), graph_prf=0)
    params = graph_parameters("Who founded Apex Logistics, and where did the founder study?", config,
                              total_chunks=total, feedback=[])
    record = await runtime.neo4j.q.search.graph_leg(params)
    linked = {name: (entity_id, seed, link) for entity_id, name, _, seed, link in record["linked"]}
    assert linked["Apex Logistics Inc."][2] == 1.0 and record["named_link"] == 1.0  # the span names it exactly

    # The same walk in Python, over the graph read back from Neo4j.
    entities = {r["id"]: r for r in await graph_rows(
        runtime, "MATCH (e:Entity {collection: $c}) RETURN e.id AS id, e.mentions AS mentions, e.name AS name, "
                 "e.norm AS norm", c=graph)}
    edges: dict[str, dict[str, float]] = {}
    for r in await graph_rows(runtime, "MATCH (a:Entity {collection: $c})-[r:RELATED_TO]->(b:Entity) WHERE a <> b "
                                  "RETURN a.id AS a, b.id AS b, r.weight AS w", c=graph):
        for x, y in ((r["a"], r["b"]), (r["b"], r["a"])):
            edges.setdefault(x, {})[y] = edges.get(x, {}).get(y, 0.0) + r["w"]

    def neighbours(node: str, k: int) -> list[tuple[str, float]]:
        return sorted(edges.get(node, {}).items(), key=lambda kv: (-kv[1], kv[0]))[:k]

    def damp(node: str) -> float:
        return walk.damping(entities[node]["mentions"], total)

    seeds = {entity_id: seed for entity_id, seed, _ in linked.values()}
    rank = walk.spread(seeds, neighbours, damp, alpha=config.ppr_alpha, per_first=PER_FIRST, per_next=PER_NEXT,
                       frontier=FRONTIER)
    expected = walk.top_entities(rank, damp, TOP_ENTITIES)
    assert len(expected) > len(seeds)  # the walk reached entities the query does not name
    assert [e for e, _, _, _ in record["walked"]] == [e for e, _ in expected]
    assert [w for _, w, _, _ in record["walked"]] == pytest.approx([w for _, w in expected], rel=1e-9)

    # Chunk scores: every top entity adds its part to the chunks that mention it.
    # An entity reads the chunk lists of its name's entities (each its ENTITY_CHUNKS best by focus), merged.
    mentions = await graph_rows(runtime, "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk {collection: $c})-[m:MENTIONS]->(e) "
                                    "RETURN c.id AS chunk, e.id AS entity, e.norm AS norm, m.count AS count, "
                                    "d.title AS title, COUNT { (c)-[:MENTIONS]->() } AS degree", c=graph)
    titles = {m["chunk"]: m["title"] for m in mentions}
    lists = {e: walk.chunk_list([(m["chunk"], m["count"], m["degree"]) for m in mentions if m["entity"] == e],
                                ENTITY_CHUNKS) for e in entities}
    scores: dict[str, float] = {}
    for entity_id, weight in expected:
        entity = entities[entity_id]
        # The title flag is the list's: whether that list's entity names the chunk's document.
        merged = [(chunk, focus, e) for e, listed in lists.items() if entities[e]["norm"] == entity["norm"]
                  for chunk, focus in listed]
        for chunk, focus, owner in sorted(merged, key=lambda kv: (-kv[1], kv[0]))[:PER_ENTITY]:
            titled = entities[owner]["name"].lower() in titles[chunk].lower()
            scores[chunk] = scores.get(chunk, 0.0) + weight * focus * (config.graph_title_boost if titled else 1.0)
    got = {chunk: score for chunk, score, _ in record["chunks"]}
    assert got == pytest.approx(scores, rel=1e-9)
    ranked = [chunk for chunk, _, _ in record["chunks"]]
    assert ranked == sorted(got, key=lambda c: (-got[c], c))


async def test_the_title_boost_comes_from_the_lists_at_every_limit(runtime: Runtime, collection: str) -> None:
    """The title flags the writer keeps in the chunk lists boost the chunks whose document the entity
    names: the statement's top is the reference's, scores included, at every limit and title boost."""
    await runtime.neo4j.driver.execute_query(
        """
        CREATE (x:Entity {id: $c + ':x', collection: $c, name: 'Blue Falcon', norm: 'blue falcon', label: 'ORG',
                          mentions: 12})
        CREATE (y:Entity {id: $c + ':y', collection: $c, name: 'Red Harbor', norm: 'red harbor', label: 'LOC',
                          mentions: 5})
        CREATE (x)-[:RELATED_TO {weight: 2.0, predicates: ['near'], evidence_chunk_ids: []}]->(y)
        WITH x, y
        UNWIND range(0, 11) AS k
        CREATE (d:Document {id: $c + ':d' + k, collection: $c,
                            title: CASE WHEN k % 3 = 0 THEN 'Blue Falcon report ' + k ELSE 'Notes ' + k END})
        CREATE (ch:Chunk {id: $c + ':c' + k, collection: $c, document_id: d.id, index: 0})
        CREATE (d)-[:HAS_CHUNK]->(ch)
        CREATE (ch)-[:MENTIONS {count: 1 + k % 4}]->(x)
        FOREACH (_ IN CASE WHEN k % 2 = 0 THEN [1] ELSE [] END | CREATE (ch)-[:MENTIONS {count: 1}]->(y))
        """, parameters_={"c": collection})
    await runtime.neo4j.q.ingest.refresh_entities([f"{collection}:x", f"{collection}:y"])  # their lists
    try:
        config = SearchConfig(collections=(collection,), graph_prf=0)
        base = graph_parameters("Blue Falcon", config, total_chunks=12, feedback=[])
        mentions = await graph_rows(runtime, "MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk {collection: $c})-[m:MENTIONS]->(e) "
                                        "RETURN c.id AS chunk, e.id AS entity, e.name AS name, m.count AS count, "
                                        "d.title AS title, COUNT { (c)-[:MENTIONS]->() } AS degree", c=collection)
        for boost in (1.0, 2.0, 10.0):
            full = await runtime.neo4j.q.search.graph_leg({**base, "title_boost": boost})
            weights = {e: w for e, w, _, _ in full["walked"]}
            assert len(weights) == 2  # the named entity and its neighbour
            scores: dict[str, float] = {}
            for m in mentions:
                titled = m["name"].lower() in m["title"].lower()
                scores[m["chunk"]] = scores.get(m["chunk"], 0.0) + walk.chunk_part(
                    weights[m["entity"]], m["count"], m["degree"], titled, boost)
            best = sorted(scores, key=lambda c: (-scores[c], c))
            assert len(best) == 12
            for limit in (1, 3, 5, 12, 20):
                record = await runtime.neo4j.q.search.graph_leg({**base, "title_boost": boost, "limit": limit})
                assert [c for c, _, _ in record["chunks"]] == best[:limit]
                assert [s for _, s, _ in record["chunks"]] == pytest.approx([scores[c] for c in best[:limit]], rel=1e-9)
    finally:
        await runtime.neo4j.driver.execute_query("MATCH (n {collection: $c}) DETACH DELETE n",
                                                 parameters_={"c": collection})


async def test_a_query_without_names_and_another_collection(runtime: Runtime, graph: str) -> None:
    total = await runtime.postgres.q.search.chunk_count([graph])
    config = SearchConfig(collections=(graph,), graph_prf=0)
    nothing = graph_parameters("zzzz qqqq", config, total_chunks=total, feedback=[])
    record = await runtime.neo4j.q.search.graph_leg(nothing)
    assert record["linked"] == [] and record["chunks"] == [] and record["walked"] == []
    assert record["named_link"] == 0.0
    # Passage feedback alone seeds the walk, and does not count as the query naming something.
    chunk = (await graph_rows(runtime, "MATCH (d:Document {collection: $c, title: 'Sarah Johnson'})-[:HAS_CHUNK]->(c) "
                                  "RETURN c.id AS id", c=graph))[0]["id"]
    fed = graph_parameters("zzzz qqqq", config.model_copy(update={"graph_prf": 1}), total_chunks=total,
                           feedback=[(chunk, 0.9)])
    record = await runtime.neo4j.q.search.graph_leg(fed)
    assert record["linked"] and record["named_link"] == 0.0
    assert chunk in [c for c, _, _ in record["chunks"]]
    # Another collection's name never links.
    other = graph_parameters("Apex Logistics", config.model_copy(update={"collections": ("no_such_collection",)}),
                             total_chunks=total, feedback=[])
    record = await runtime.neo4j.q.search.graph_leg(other)
    assert record["linked"] == [] and record["chunks"] == [] and record["named"] == []


async def test_entity_lists_follow_writes_removals_and_the_backfill(
        tmp_path: Path, runtime: Runtime, ingestor: Ingestor, graph: str) -> None:
    assert await entity_lists_match_the_graph(runtime, graph) > 10
    # A changed document takes its old chunks out of the shared entities' lists; a removed one too.
    first, second = sorted(DOCS)[:2]
    (tmp_path / first).write_text(DOCS[first] + "\n\nApex Logistics also opened an office in Lisbon.")
    (tmp_path / second).unlink()
    report = await ingestor.ingest_paths([tmp_path], collection=graph, sync=True)
    assert report.updated == 1 and report.deleted == 1
    await entity_lists_match_the_graph(runtime, graph)
    chunks = {r["id"] for r in await graph_rows(runtime, "MATCH (c:Chunk {collection: $c}) RETURN c.id AS id", c=graph)}
    listed = await graph_rows(runtime, "MATCH (e:Entity {collection: $c}) UNWIND e.chunk_ids AS id RETURN DISTINCT id",
                         c=graph)
    assert {r["id"] for r in listed} <= chunks
    # Lists written before the title flags (document ids in their place) are written again by the backfill.
    await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) REMOVE e.chunk_titled SET e.chunk_documents = e.chunk_ids",
        parameters_={"c": graph})
    assert await backfill_entity_lists(runtime.neo4j) >= 10
    await entity_lists_match_the_graph(runtime, graph)
    leftover = await graph_rows(runtime, "MATCH (e:Entity {collection: $c}) WHERE e.chunk_documents IS NOT NULL "
                                "RETURN count(e) AS n", c=graph)
    assert leftover[0]["n"] == 0
    # A graph written before entities had these lists gets them from the backfill, the same lists.
    await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) REMOVE e.chunk_ids, e.chunk_focus, e.chunk_titled, e.neighbour_ids, "
        "e.neighbour_weights, e.neighbour_elements",
        parameters_={"c": graph})
    assert await backfill_entity_lists(runtime.neo4j) >= 10
    await entity_lists_match_the_graph(runtime, graph)
