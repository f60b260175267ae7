"""Retrieval against the real stores: each leg, fusion provenance, timeouts, filters in every leg, plans."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from graphrag.errors import ConfigurationError, InvalidInput
from graphrag.models import Hit, Leg, LegReport, Mode, SearchResult
from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime
from graphrag.ingest.embed import cuda_device_count, packaged_model_path
from graphrag.search.legs import LegResult
from graphrag.search.registry import LegInputs, LegRunner
from graphrag.search.router import SearchRouter
from tests.helpers import ingest_docs, rest_search

DOCS = {
    "robotics.md": ("---\nyear: 2019\naudience: public\n---\n# Apex Logistics Inc.\n\n"
                    "Apex Logistics Inc. was founded by Sarah Johnson. The company builds warehouse robots."),
    "dahl.md": ("---\nyear: 2021\naudience: internal\n---\n# Sarah Johnson\n\n"
                "Sarah Johnson grew up in Bergen, Norway, where she studied mechanical engineering."),
    "pasta.md": "---\nyear: 2015\n---\n# Pasta\n\nCarbonara is a Roman pasta dish made with eggs, cheese and guanciale.",
    "tea.md": "---\nyear: 2010\n---\n# Tea\n\nGreen tea is produced in China and Japan from unoxidised leaves.",
    "rivers.md": "---\nyear: 2012\n---\n# Rivers\n\nThe Danube flows through Vienna, Budapest and Belgrade.",
}


@pytest.fixture(scope="module")
async def corpus(tmp_path_factory: pytest.TempPathFactory, runtime: Runtime) -> str:
    """DOCS in a collection of this module's own, ingested once: the tests only read it."""
    collection = f"search_{uuid.uuid4().hex[:10]}"
    await ingest_docs(await runtime.ingestor(), tmp_path_factory.mktemp("corpus"), collection, DOCS)
    return collection


@pytest.fixture
async def router(runtime: Runtime, models: Any) -> SearchRouter:
    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    await router.warm_graph()  # as Runtime.router does: the first graph search does not plan within its timeout
    return router


def titles(response: dict[str, Any]) -> list[str]:
    return [hit["title"] for hit in response["results"]]


async def test_each_leg_answers_with_provenance(router: SearchRouter, corpus: str) -> None:
    vector = await rest_search(router, "robots that work in warehouses", mode="vector", limit=3, collections=[corpus])
    assert titles(vector)[0] == "Apex Logistics Inc."
    assert vector["legs"]["vector"]["status"] == "ok" and vector["legs"]["keyword"]["status"] == "skipped"
    keyword = await rest_search(router, "Roman carbonara with guanciale", mode="keyword", limit=3, collections=[corpus])
    assert titles(keyword) == ["Pasta"]  # OR semantics still needs a matching term; others have none
    assert set(keyword["results"][0]["legs"]["keyword"]["matched"]) >= {"carbonara", "guancial"}
    hybrid = await rest_search(router, "Danube Budapest", mode="hybrid", limit=2, collections=[corpus])
    top = hybrid["results"][0]
    assert top["title"] == "Rivers" and set(top["legs"]) == {"vector", "keyword"}
    assert top["legs"]["vector"]["rank"] == 1 and top["legs"]["keyword"]["rank"] == 1
    assert {"chunk_id", "document_id", "collection", "source", "title", "heading_path", "content", "score",
            "legs", "entities", "metadata"} <= set(top)
    assert top["metadata"]["year"] == 2012


async def test_the_router_returns_typed_results(router: SearchRouter, corpus: str) -> None:
    """The router's own result is typed (SearchResult, Hit, LegReport); every interface maps it, and
    its REST shape is exactly what REST answers (tests/integration/test_api.py checks the schema)."""
    result = await router.search("Danube Budapest", mode=Mode.HYBRID, limit=2, collections=[corpus])
    assert isinstance(result, SearchResult) and result.mode == "hybrid"
    top = result.hits[0]
    assert isinstance(top, Hit) and top.title == "Rivers" and set(top.legs) == {Leg.VECTOR, Leg.KEYWORD}
    assert top.collection == corpus and top.chunk_index == 0 and top.metadata["year"] == 2012
    assert top.citation == top.source and top.page is None and top.kind == "chunk" and top.extra == {}
    assert isinstance(result.legs[Leg.VECTOR], LegReport) and result.legs[Leg.VECTOR].status == "ok"
    assert result.legs[Leg.GRAPH].status == "skipped" and result.legs[Leg.GRAPH].reason == "not part of mode 'hybrid'"
    assert result.failed_legs == [] and "embed_ms" in result.timings
    shaped = result.to_dict(timings=False)
    assert shaped["results"][0]["chunk_id"] == top.chunk_id and "timings" not in shaped
    assert SearchResult.from_dict(shaped).to_dict(timings=False) == shaped


async def test_each_hit_lists_the_entities_its_chunk_mentions_most(router: SearchRouter, corpus: str,
                                                                   runtime: Runtime) -> None:
    response = await rest_search(router, "Apex Logistics robots", mode="auto", limit=5, collections=[corpus])
    assert response["results"]
    for hit in response["results"]:
        # The graph's own answer, read here without the product's statement.
        records, _, _ = await runtime.neo4j.driver.execute_query(
            "MATCH (:Chunk {id: $id})-[m:MENTIONS]->(e:Entity) RETURN e.id AS id, e.name AS name, e.label AS label, "
            "m.count AS n ORDER BY n DESC", {"id": hit["chunk_id"]}, database_=runtime.neo4j.database)
        truth = [r.data() for r in records]
        assert len(hit["entities"]) == min(len(truth), 8)
        assert {e["id"] for e in hit["entities"]} <= {t["id"] for t in truth}
        counts = {t["id"]: t["n"] for t in truth}
        assert [counts[e["id"]] for e in hit["entities"]] == [t["n"] for t in truth[:8]]  # the most mentioned
        assert all(set(e) == {"id", "name", "label"} for e in hit["entities"])
    apex = next(h for h in response["results"] if h["title"] == "Apex Logistics Inc.")
    assert {"Apex Logistics Inc.", "Sarah Johnson"} <= {e["name"] for e in apex["entities"]}


async def test_graph_leg_connects_a_two_hop_question(router: SearchRouter, corpus: str) -> None:
    query = "Apex Logistics founder hometown"
    keyword = await rest_search(router, query, mode="keyword", limit=5, collections=[corpus])
    assert "Sarah Johnson" not in titles(keyword)  # no query term occurs in Johnson's page
    graph = await rest_search(router, query, mode="graph", limit=5, collections=[corpus])
    assert "Sarah Johnson" in titles(graph)[:2]
    dahl = next(h for h in graph["results"] if h["title"] == "Sarah Johnson")
    assert "Sarah Johnson" in [e["name"] for e in dahl["legs"]["graph"]["entities"]]
    context = graph["graph_context"]
    assert any(e["name"] == "Apex Logistics Inc." for e in context["entities"])
    pairs = {frozenset((r["source"], r["target"])) for r in context["relations"]}
    assert frozenset(("Apex Logistics Inc.", "Sarah Johnson")) in pairs
    auto = await rest_search(router, query, mode="auto", limit=3, collections=[corpus])
    assert {"Apex Logistics Inc.", "Sarah Johnson"} <= set(titles(auto))
    relations = auto["graph_context"]["relations"]
    assert relations and all(r["evidence_chunk_id"] for r in relations)


async def test_filters_apply_in_every_leg_including_the_graph(router: SearchRouter, corpus: str) -> None:
    query = "Apex Logistics founder Sarah Johnson Bergen"
    for mode in ("vector", "keyword", "graph", "auto"):
        response = await rest_search(router, query, mode=mode, limit=10, collections=[corpus],
                                       filters={"audience": {"$ne": "internal"}})
        assert "Sarah Johnson" not in titles(response), mode
        for rel in response["graph_context"]["relations"]:
            assert rel["evidence_chunk_id"] not in {h["chunk_id"] for h in response["results"]
                                                    if h["title"] == "Sarah Johnson"}
    recent = await rest_search(router, "food drink rivers robots", mode="auto", limit=10, collections=[corpus],
                                 filters={"year": {"$gte": 2019}})
    assert set(titles(recent)) <= {"Apex Logistics Inc.", "Sarah Johnson"}
    either = await rest_search(router, "food", mode="vector", limit=10, collections=[corpus],
                                 filters={"$or": [{"year": 2015}, {"title": {"$contains": "tea"}}]})
    assert set(titles(either)) == {"Pasta", "Tea"}
    # A graph relation whose only evidence is in a filtered-out document never shows up.
    graph = await rest_search(router, query, mode="graph", limit=10, collections=[corpus],
                                filters={"audience": "internal"})
    assert set(titles(graph)) <= {"Sarah Johnson"}
    names = {r["source"] for r in graph["graph_context"]["relations"]} | {
        r["target"] for r in graph["graph_context"]["relations"]}
    assert "Apex Logistics Inc." not in names or all(
        r["evidence_chunk_id"] in {h["chunk_id"] for h in graph["results"]} for r in graph["graph_context"]["relations"])


async def test_collections_isolate_results(router: SearchRouter, corpus: str) -> None:
    other = await rest_search(router, "Apex Logistics Inc.", mode="auto", limit=5, collections=["no_such_collection"])
    assert other["results"] == [] and other["graph_context"]["relations"] == []


async def test_a_timed_out_and_a_failing_leg_leave_the_others_answering(router: SearchRouter, corpus: str) -> None:
    async def slow(*_: Any) -> Any:
        await asyncio.sleep(5)

    async def broken(*_: Any) -> Any:
        raise RuntimeError("graph store exploded")

    router.legs = {**router.legs, "keyword": LegRunner(slow), "graph": LegRunner(broken)}
    response = await rest_search(router, "Danube", mode="auto", limit=3, collections=[corpus], leg_timeout_s=0.3)
    assert response["legs"]["keyword"]["status"] == "timeout"
    assert response["legs"]["graph"]["status"] == "error" and "exploded" in response["legs"]["graph"]["error"]
    assert response["legs"]["vector"]["status"] == "ok"
    assert titles(response)[0] == "Rivers"


async def test_a_leg_from_the_registry_ranks_with_the_stores_rows(router: SearchRouter, corpus: str,
                                                                   runtime: Runtime) -> None:
    """A leg put in ``router.legs`` runs under its name, gets the search's inputs, and its ranking is
    fused and shaped from the real rows like the product's legs."""
    rows = await runtime.postgres.pool.fetch(
        "SELECT c.id, d.title FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.collection = $1",
        corpus)
    chosen = next(r for r in rows if r["title"] == "Rivers")
    seen: list[LegInputs] = []

    async def rivers_first(inputs: LegInputs) -> LegResult:
        seen.append(inputs)
        return LegResult([(str(chosen["id"]), 3.0, {})])

    router.legs = {**router.legs, "keyword": LegRunner(rivers_first, embeds=False, after_embedding=False)}
    response = await rest_search(router, "warehouse robots", mode="keyword", limit=3, collections=[corpus])
    assert [h["chunk_id"] for h in response["results"]] == [str(chosen["id"])]
    assert response["results"][0]["score"] == 3.0 and response["legs"]["keyword"]["hits"] == 1
    assert "embed_ms" not in response["timings"]  # the leg says it does not embed: the query is not embedded
    assert seen[0].text == "warehouse robots" and seen[0].config.collections == (corpus,)


async def test_options_threshold_mmr_budget_collapse_metadata_only(router: SearchRouter, corpus: str) -> None:
    strict = await rest_search(router, "warehouse robots", mode="vector", limit=10, collections=[corpus], threshold=0.5)
    assert strict["results"] and all(h["score"] >= 0.5 for h in strict["results"])
    budget = await rest_search(router, "robots", mode="auto", limit=10, collections=[corpus], token_budget=5)
    assert len(budget["results"]) == 1
    meta = await rest_search(router, "robots", mode="auto", limit=2, collections=[corpus], metadata_only=True,
                               collapse=True, mmr_lambda=0.5)
    assert meta["results"] and all(h["content"] == "" for h in meta["results"])
    assert len({h["document_id"] for h in meta["results"]}) == len(meta["results"])


@pytest.mark.parametrize("query,options,message", [
    ("", {}, "empty"),
    ("x" * 2001, {}, "2000"),
    ("ok", {"mode": "fuzzy"}, "unknown mode"),
    ("ok", {"limit": 0}, "limit"),
    ("ok", {"limit": 101}, "limit"),
    ("ok", {"filters": '{"a": {"$regex": "x"}}'}, "unknown operator"),
    ("ok", {"filters": "{broken"}, "not valid JSON"),
    ("ok", {"collections": ["bad name!"]}, "invalid collection"),
])
async def test_bad_queries_are_clear_errors(router: SearchRouter, query: str, options: dict, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        await rest_search(router, query, **options)


async def test_hostile_filter_values_are_harmless(router: SearchRouter, corpus: str, runtime: Runtime) -> None:
    response = await rest_search(router, "robots", mode="auto", limit=5, collections=[corpus],
                                   filters={"audience": "x' OR '1'='1", "year": {"$nin": ["1); DROP TABLE chunks;--"]}})
    assert response["results"] == []
    assert (await runtime.postgres.collection_counts())[corpus]["documents"] == len(DOCS)
    lucene = await rest_search(router, 'Apex") OR name:* AND "', mode="graph", limit=5, collections=[corpus])
    assert lucene["legs"]["graph"]["status"] == "ok"


class _Rollback(Exception):
    """Raised to roll back a test transaction."""


async def test_explain_shows_hnsw_and_fulltext_indexes(runtime: Runtime, corpus: str, models: Any) -> None:
    with pytest.raises(_Rollback):
        await _explain_legs(runtime, corpus, models)
    rows = await runtime.postgres.pool.fetch("SELECT indexname FROM pg_indexes WHERE indexname = 'chunks_collection_idx'")
    assert rows, "the dropped index must be back after the rollback"


async def _explain_legs(runtime: Runtime, corpus: str, models: Any) -> None:
    from tests.helpers import explain

    embedding = models.embedder.encode(["robots"])[0]
    async with runtime.postgres.pool.acquire() as conn, conn.transaction():
        await conn.execute("SET LOCAL enable_seqscan = off")
        await conn.execute("SET LOCAL enable_sort = off")
        # The product's own vector leg (graphrag/search/legs.py), no filter, under EXPLAIN.
        text = await explain(conn, "search", "vector_leg", dim=384, embedding=embedding, collections=[corpus],
                             model=models.embedder.model_name, limit=5)
        assert "chunks_embedding_hnsw" in text, text
        text = await explain(conn, "search", "keyword_leg", texts=["robots warehouse"], weights=[1.0],
                             collections=[corpus], limit=10, k1=0.9, b=0.4)
        assert "chunk_postings_by_impact" in text, text  # the keyword postings (migrations/008_postings.sql)
        raise _Rollback


def test_cli_search_json_and_errors(settings: Any, services: Any, tmp_path: Path, collection: str) -> None:
    from tests.helpers import run_cli

    (tmp_path / "a.md").write_text("# Lighthouses\n\nThe Tower of Hercules is a Roman lighthouse in Spain.")
    env = {"GRAPHRAG_HOME": str(settings.home_dir)}

    def run(*args: str) -> Any:
        return run_cli(*args, env=env)

    assert run("ingest", str(tmp_path), "--collection", collection).returncode == 0
    result = run("search", "Roman lighthouse", "--collection", collection, "--json", "-k", "3")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) >= {"query", "mode", "took_ms", "legs", "results", "graph_context"}
    assert data["results"][0]["title"] == "Lighthouses"
    table = run("search", "Roman lighthouse", "--collection", collection, "--explain")
    assert table.returncode == 0, table.stderr
    assert "Lighthouses" in table.stdout and "found by" in table.stdout
    for args, message in ((["search", ""], "empty"), (["search", "x", "-k", "0"], "1 to 100"),
                          (["search", "x", "--filter", "{"], "not valid JSON"),
                          (["search", "x", "--mode", "magic"], "invalid choice")):
        bad = run(*args)
        assert bad.returncode == 2 and message in bad.stderr and "Traceback" not in bad.stderr, (args, bad.stderr)


async def test_sql_functions_hybrid_search_and_match_chunks(runtime: Runtime, corpus: str, models: Any) -> None:
    embedding = models.embedder.encode(["Danube river cities"])[0]
    async with runtime.postgres.pool.acquire() as conn:
        rows = await conn.fetch("SELECT * FROM hybrid_search($1, $2, 3, 1.0, 1.0, 60, $3::text[], $4)",
                                embedding, "Danube Vienna", [corpus], models.embedder.model_name)
        assert rows[0]["content"].startswith("# Rivers")
        assert rows[0]["semantic_similarity"] > 0 and rows[0]["keyword_score"] > 0
        assert rows[0]["rrf_score"] == pytest.approx(2 / 61)
        nearest = await conn.fetch("SELECT * FROM match_chunks($1, 2, $2::text[])", embedding, [corpus])
        assert len(nearest) == 2 and nearest[0]["similarity"] >= nearest[1]["similarity"]
        bm25 = await conn.fetch("SELECT * FROM bm25_search($1, 5, $2::text[])", "carbonara", [corpus])
        assert len(bm25) == 1


async def test_rules_and_a_configured_cross_encoder_reranker(runtime: Runtime, corpus: str, models: Any,
                                                             settings: Any) -> None:
    plain = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    ruled = await rest_search(plain, "food drink", mode="auto", limit=3, collections=[corpus],
                               rules=[{"kind": "priority", "field": "year", "values": ["2010"], "weight": 50}])
    assert titles(ruled)[0] == "Tea"
    with pytest.raises(InvalidInput, match="no reranker configured"):
        await rest_search(plain, "food", rerank=True, collections=[corpus])
    # No cross-encoder is bundled; a sentence-transformers folder loads as one (untrained head), which
    # is enough to prove the plumbing: a user's local model path is loaded and its scores order the hits.
    reranking = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp,
                             reranker_path=packaged_model_path())
    response = await rest_search(reranking, "food", mode="hybrid", limit=3, collections=[corpus], rerank=True)
    scores = [h["legs"]["rerank"]["score"] for h in response["results"]]
    assert scores == sorted(scores, reverse=True)
    assert str(reranking._reranker.device) == "cpu"  # the default device, on a machine without a GPU
    if cuda_device_count() == 0:
        # A reranker asked to run on a GPU that is not there says so in one line (GRAPHRAG_EMBEDDING_DEVICE).
        on_gpu = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp,
                              reranker_path=packaged_model_path(), reranker_device="cuda")
        with pytest.raises(ConfigurationError, match="GRAPHRAG_EMBEDDING_DEVICE=cuda: PyTorch sees no CUDA GPU"):
            await rest_search(on_gpu, "food", mode="hybrid", limit=3, collections=[corpus], rerank=True)


async def test_graph_prior_follows_how_entity_centric_a_collection_is(
        router: SearchRouter, corpus: str, tmp_path: Path, ingestor: Ingestor) -> None:
    """Documents named after entities (wiki pages) give the graph leg its full weight in auto; papers
    with sentence titles give it little, so it cannot drag the text legs down there."""
    papers = f"{corpus}_papers"
    folder = tmp_path / "papers"
    folder.mkdir()
    for i, (title, body) in enumerate([
        ("Effects of green tea extract on liver enzymes in mice", "Mice in Kyoto received extract for 8 weeks."),
        ("a survey of river sediment transport under flood conditions", "Samples from the Danube were studied."),
        ("Low-dose aspirin reduces the risk of colorectal cancer", "A cohort in Boston was followed for 10 years."),
        ("on the stability of warehouse robot fleets", "Fleets of robots from Apex Logistics were observed."),
    ]):
        (folder / f"p{i}.md").write_text(f"# {title}\n\n{body}")
    assert (await ingestor.ingest_paths([folder], collection=papers)).ingested == 4
    wiki = await router.graph_prior((corpus,))
    low = await router.graph_prior((papers,))
    assert wiki == 1.0 and low < 0.2
    forced = await rest_search(router, "Who founded Apex Logistics?", mode="auto", limit=3, collections=[papers],
                                 graph_leg="always")
    assert forced["legs"]["graph"]["status"] == "ok" and forced["legs"]["graph"]["prior"] == round(low, 3)
    assert "prior" not in (await rest_search(router, "Apex Logistics", mode="graph", collections=[papers]))["legs"]["graph"]


async def test_auto_does_not_run_a_graph_leg_that_fusion_would_ignore(
        router: SearchRouter, corpus: str, tmp_path: Path, ingestor: Ingestor) -> None:
    """On papers (no document named after an entity) the graph prior is at its floor: auto leaves the
    graph leg out and says why; the request can insist, and mode graph always runs it."""
    papers = f"{corpus}_papers"
    folder = tmp_path / "papers"
    folder.mkdir()
    for i, (title, body) in enumerate([
        ("Effects of green tea extract on liver enzymes in mice", "Mice in Kyoto received green tea for 8 weeks."),
        ("Sediment transport in large rivers under flood conditions", "Samples from the Danube near Vienna."),
        ("Robot fleets in warehouses and their failure modes", "Apex Logistics robots in Bergen were observed."),
    ]):
        (folder / f"p{i}.md").write_text(f"# {title}\n\n{body}")
    assert (await ingestor.ingest_paths([folder], collection=papers)).ingested == 3
    query = "Which robots did Apex Logistics run in Bergen?"
    prior = await router.graph_prior((papers,))
    assert prior < 0.1  # nothing here is named after an entity

    skipped = await rest_search(router, query, mode="auto", limit=3, collections=[papers])
    graph = skipped["legs"]["graph"]
    assert graph["status"] == "skipped" and graph["hits"] == 0 and graph["took_ms"] == 0
    assert "graph prior" in graph["reason"] and graph["prior"] == round(prior, 3)
    assert skipped["legs"]["vector"]["status"] == skipped["legs"]["keyword"]["status"] == "ok"
    assert skipped["graph_context"] == {"entities": [], "relations": []}
    assert skipped["results"][0]["title"] == "Robot fleets in warehouses and their failure modes"
    assert all(set(hit["legs"]) <= {"vector", "keyword"} for hit in skipped["results"])

    # Overridden per request, the leg runs (and finds the entities the query names).
    always = await rest_search(router, query, mode="auto", limit=3, collections=[papers], graph_leg="always")
    assert always["legs"]["graph"]["status"] == "ok" and always["legs"]["graph"]["hits"] > 0
    assert "reason" not in always["legs"]["graph"]
    # With the graph's weight at zero, fusion gives exactly what the skip gave.
    zero = await rest_search(router, query, mode="auto", limit=3, collections=[papers], graph_leg="always",
                               weights={"vector": 1.0, "keyword": 1.0, "graph": 0.0}, graph_named_weight=0)
    assert [(h["chunk_id"], h["score"]) for h in zero["results"]] == \
        [(h["chunk_id"], h["score"]) for h in skipped["results"]]
    # A threshold of 0 never skips; mode graph always runs the leg.
    kept = await rest_search(router, query, mode="auto", limit=3, collections=[papers], graph_skip_below=0.0)
    assert kept["legs"]["graph"]["status"] == "ok"
    alone = await rest_search(router, query, mode="graph", limit=3, collections=[papers])
    assert alone["legs"]["graph"]["status"] == "ok" and alone["results"]

    # Entity-centric collections keep the leg in auto; "never" leaves it out anywhere.
    wiki = await rest_search(router, "Who founded Apex Logistics?", mode="auto", limit=3, collections=[corpus])
    assert wiki["legs"]["graph"]["status"] == "ok"
    never = await rest_search(router, "Who founded Apex Logistics?", mode="auto", limit=3, collections=[corpus],
                                graph_leg="never")
    assert never["legs"]["graph"]["status"] == "skipped" and "never" in never["legs"]["graph"]["reason"]
    assert never["results"] and "prior" not in never["legs"]["graph"]
    hybrid = await rest_search(router, "Apex", mode="hybrid", limit=3, collections=[corpus])
    assert hybrid["legs"]["graph"] == {"status": "skipped", "reason": "not part of mode 'hybrid'",
                                       "took_ms": 0.0, "hits": 0}
    with pytest.raises(InvalidInput, match="graph_leg"):
        await rest_search(router, "Apex", mode="graph", collections=[corpus], graph_leg="never")
    with pytest.raises(InvalidInput, match="graph_leg"):
        await rest_search(router, "Apex", mode="auto", collections=[corpus], graph_leg="sometimes")


def counting_router(runtime: Runtime, models: Any) -> tuple[SearchRouter, list[list[str]]]:
    """A router whose (real) embedder records every list of texts it is asked to encode."""
    calls: list[list[str]] = []

    class Counting:
        model_name = name = models.embedder.name
        spec, dim = models.embedder.spec, models.embedder.dim

        async def aencode_queries(self, texts: list[str]) -> Any:  # what the router calls for a query
            calls.append(list(texts))
            return await models.embedder.aencode_queries(texts)

    return SearchRouter(runtime.postgres, runtime.neo4j, Counting(), models.nlp), calls


async def test_keyword_mode_does_not_embed_the_query(runtime: Runtime, corpus: str, models: Any) -> None:
    router, calls = counting_router(runtime, models)
    keyword = await rest_search(router, "Roman carbonara with guanciale", mode="keyword", limit=3, collections=[corpus])
    assert [h["title"] for h in keyword["results"]] == ["Pasta"]
    assert calls == [] and "embed_ms" not in keyword["timings"]
    # MMR compares result embeddings with the query's, so it still needs the query embedded.
    diverse = await rest_search(router, "Roman carbonara", mode="keyword", limit=3, collections=[corpus], mmr_lambda=0.5)
    assert diverse["results"] and calls == [["Roman carbonara"]] and "embed_ms" in diverse["timings"]


async def test_graph_leg_makes_no_model_call_and_seeds_from_keyword_passages(runtime: Runtime, corpus: str,
                                                                             models: Any) -> None:
    """The graph leg links names through the entity indexes and takes its passage feedback from BM25
    passages: mode graph never calls the model, and auto embeds the query once (for its vector leg)."""
    router, calls = counting_router(runtime, models)
    exact = await rest_search(router, "Where did Sarah Johnson study?", mode="graph", limit=3, collections=[corpus])
    assert "Sarah Johnson" in [e["name"] for e in exact["graph_context"]["entities"]]
    assert calls == [] and "embed_ms" not in exact["timings"]
    misspelt = await rest_search(router, "Where did Sarah Jonsonn study?", mode="auto", limit=3, collections=[corpus],
                                   graph_leg="always")
    assert misspelt["legs"]["graph"]["status"] == "ok" and calls == [["Where did Sarah Jonsonn study?"]]
    # No name links ("robots" names no entity): the walk starts from the entities of the top keyword passages.
    fed = await rest_search(router, "warehouse robots", mode="graph", limit=3, collections=[corpus])
    unfed = await rest_search(router, "warehouse robots", mode="graph", limit=3, collections=[corpus], graph_prf=0)
    assert fed["results"] and fed["results"][0]["title"] == "Apex Logistics Inc."
    assert unfed["results"] == [] and unfed["legs"]["graph"]["hits"] == 0


NAMED_DOCS = {
    "femmes.md": ("---\naudience: public\n---\n# Violent Femmes (band)\n\n"
                  "Violent Femmes is an American folk punk band from Milwaukee, formed in 1980."),
    "hallowed.md": ("---\naudience: public\n---\n# Hallowed Ground (album)\n\nHallowed Ground is an album by "
                    "Violent Femmes. Violent Femmes recorded it in Milwaukee, and Violent Femmes toured it in 1984."),
    "cky.md": "---\naudience: internal\n---\n# CKY\n\nCKY is an American rock band from West Chester, formed in 1998.",
    "volcano.md": ("---\naudience: public\n---\n# Volcano (CKY album)\n\nVolcano is an album by CKY. "
                   "CKY released it in 2005, and CKY toured it across America with the band Violent Femmes."),
}


async def test_documents_named_after_what_the_query_names_rank_first(
        router: SearchRouter, tmp_path: Path, ingestor: Ingestor, collection: str) -> None:
    """A comparison question names two bands; their own pages (titles with or without a disambiguation)
    beat the albums that mention the bands more often, in auto and in graph mode, and obey filters."""
    named = f"{collection}_named"
    folder = tmp_path / "named"
    folder.mkdir()
    for name, text in NAMED_DOCS.items():
        (folder / name).write_text(text)
    assert (await ingestor.ingest_paths([folder], collection=named)).ingested == len(NAMED_DOCS)
    query = "Which American band was formed the earliest, CKY or Violent Femmes?"
    for mode in ("auto", "graph"):
        response = await rest_search(router, query, mode=mode, limit=4, collections=[named])
        assert set(titles(response)[:2]) == {"CKY", "Violent Femmes (band)"}, (mode, titles(response))
        assert response["legs"]["graph"].get("named") == 2, response["legs"]
        page = next(h for h in response["results"] if h["title"] == "CKY")
        assert page["legs"]["named"]["title"] == "CKY" and page["chunk_index"] == 0
        assert all("named" not in h["legs"] for h in response["results"] if "album" in h["title"])
    # The named ranking can be switched off per request; the graph leg still answers.
    plain = await rest_search(router, query, mode="auto", limit=4, collections=[named], graph_named_weight=0)
    assert all("named" not in h["legs"] for h in plain["results"])
    assert plain["legs"]["graph"]["status"] == "ok" and "named" not in plain["legs"]["graph"]
    # A named document outside the filter never comes back, not even through the named ranking.
    public = await rest_search(router, query, mode="auto", limit=4, collections=[named],
                                 filters={"audience": "public"})
    assert "CKY" not in titles(public) and public["legs"]["graph"]["named"] == 1
    assert titles(public)[0] == "Violent Femmes (band)"


async def test_title_keys_are_backfilled_on_graphs_written_before_them(
        runtime: Runtime, corpus: str) -> None:
    from graphrag.ingest.backfill import backfill_title_keys, run_backfills

    await runtime.neo4j.driver.execute_query(
        "MATCH (d:Document {collection: $c}) REMOVE d.title_norm", c=corpus)
    assert await backfill_title_keys(runtime.neo4j) >= len(DOCS)
    records, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (d:Document {collection: $c}) RETURN d.title AS title, d.title_norm AS norm", c=corpus)
    keys = {r["title"]: r["norm"] for r in records}
    assert keys["Apex Logistics Inc."] == "apex logistics" and keys["Sarah Johnson"] == "sarah johnson"
    assert await backfill_title_keys(runtime.neo4j) == 0  # idempotent
    # At start-up it runs once per graph: the marker the runtime left makes it a lookup.
    assert await runtime.neo4j.q.ingest.backfill_done("document_title_norm")
    await runtime.neo4j.driver.execute_query("MATCH (d:Document {collection: $c}) REMOVE d.title_norm", c=corpus)
    await run_backfills(runtime.neo4j)
    records, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (d:Document {collection: $c}) WHERE d.title_norm IS NULL RETURN count(d) AS n", c=corpus)
    assert records[0]["n"] == len(DOCS)  # marked done: not scanned again
    await backfill_title_keys(runtime.neo4j)


async def test_score_fusion_fills_in_what_a_leg_did_not_return(router: SearchRouter, corpus: str,
                                                              runtime: Runtime) -> None:
    """Each leg returns only its best chunk (overfetch 1); the other leg's evidence about that chunk
    (its cosine similarity, its BM25 score) is computed and counts in the fused score."""
    from graphrag.search.legs import completion_scores, keyword_leg, keyword_scores, similarities
    from graphrag.search.recipes import derive

    query = "a beverage from Asia, or Bergen"  # vector: Tea first; keyword: Sarah Johnson (Bergen)
    similarity = {h["chunk_id"]: h["score"] for h in
                  (await rest_search(router, query, mode="vector", limit=20, collections=[corpus]))["results"]}
    bm25 = {h["chunk_id"]: h["score"] for h in
            (await rest_search(router, query, mode="keyword", limit=20, collections=[corpus]))["results"]}
    best_v, best_k = max(similarity.values()), max(bm25.values())
    fused = await rest_search(router, query, mode="hybrid", limit=5, collections=[corpus], overfetch=1)
    assert len(fused["results"]) == 2  # the vector leg's best and the keyword leg's best
    for hit in fused["results"]:
        expected = max(similarity.get(hit["chunk_id"], 0.0), 0.0) / best_v + bm25.get(hit["chunk_id"], 0.0) / best_k
        assert hit["score"] == pytest.approx(expected, abs=1e-5), hit["title"]
        assert len(hit["legs"]) == 1  # provenance still names only the leg that found it
    # The twin statement scores exactly as the keyword leg does.
    config = derive("keyword", collections=(corpus,))
    leg = await keyword_leg(runtime.postgres, query, config)
    again = await keyword_scores(runtime.postgres, query, [h[0] for h in leg.hits], config)
    assert leg.hits and all(again[cid] == pytest.approx(score) for cid, score, _ in leg.hits)
    # Both completions in one statement give what each of their own statements gives.
    ids = list(similarity)
    embedding = await router.embed_query(query)
    bm25_all = await keyword_scores(runtime.postgres, query, ids, config)
    cosine_all = await similarities(runtime.postgres, embedding, ids, router.embedder.name)
    both = await completion_scores(runtime.postgres, [query], [1.0], ids, embedding, ids, router.embedder.name, config)
    assert bm25_all and both[0] == pytest.approx(bm25_all) and both[1] == pytest.approx(cosine_all)
    assert set(cosine_all) == set(ids) and set(bm25_all) < set(ids)  # a chunk without a query term has no BM25 row
    # Reciprocal-rank fusion stays available: ranks only, nothing filled in.
    rrf = await rest_search(router, query, mode="hybrid", limit=5, collections=[corpus], overfetch=1, fusion="rrf")
    assert sorted(h["score"] for h in rrf["results"]) == pytest.approx([1 / 61, 1 / 61], abs=1e-6)


async def test_auto_feeds_the_graph_leg_the_keyword_legs_own_top_passages(router: SearchRouter, corpus: str) -> None:
    """In auto, the graph leg's passage feedback is the keyword leg of the same search (its top
    graph_prf hits, BM25 relative to the best), not a second BM25 read."""
    from graphrag.search.graph import passages
    from graphrag.search.legs import keyword_leg

    fed: list[list[tuple[str, float]]] = []
    keyword_results: list[LegResult] = []
    graph, keyword = router.legs["graph"], router.legs["keyword"]

    async def graph_spy(inputs: LegInputs) -> LegResult:
        assert inputs.keyword_hits is not None
        fed.append(list(await inputs.keyword_hits))
        return await graph.run(inputs)

    async def keyword_spy(inputs: LegInputs) -> LegResult:
        result = await keyword.run(inputs)
        keyword_results.append(result)
        return result

    router.legs = {**router.legs, "graph": LegRunner(graph_spy, embeds=False, after_embedding=False),
                   "keyword": LegRunner(keyword_spy, embeds=False, after_embedding=False)}
    query = "warehouse robots founded by Sarah Johnson"
    response = await rest_search(router, query, mode="auto", limit=3, collections=[corpus], graph_leg="always")
    assert response["legs"]["graph"]["status"] == "ok"
    config = router.build_config("auto", collections=[corpus], graph_leg="always")
    assert len(fed) == 1 and len(keyword_results) == 1
    assert fed[0] == passages(keyword_results[0], config.graph_prf)
    # The same passages as a keyword leg run on its own, the best first at 1.0.
    alone = await keyword_leg(router.postgres, query, config)
    assert fed[0] == passages(alone, config.graph_prf)
    assert fed[0] and fed[0][0][1] == 1.0 and all(0 < w <= 1.0 for _, w in fed[0])
