"""Communities and global search: detection, reports, storage in Neo4j, the global mode, auto's routing of
corpus-level questions, the map-reduce answer, the CLI and scoped API keys (real stores and real models;
pydantic-ai's FunctionModel stands in for a language model)."""

from __future__ import annotations

import asyncio
import itertools
import json
import random
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from graphrag.api.auth import digest
from graphrag.communities.answer import global_answer
from graphrag.communities.build import community_id, compute_communities, list_communities
from graphrag.communities.detect import DetectOptions, detect_communities
from graphrag.communities.reports import EntityInfo, Material, extractive_report, pick_sentences, split_sentences
from graphrag.communities.search import content_terms, global_cue, is_global_question, keyword_overlap
from graphrag.config import Settings
from graphrag.errors import InvalidInput
from graphrag.runtime import Runtime, open_services
from tests.conftest import InProcessApi
from tests.helpers import ingest_docs, run_cli, rest_search

REPO = Path(__file__).resolve().parents[2]
SHARED_EVAL = REPO.parent / "shared" / "eval"

SPACE = {
    "mars-rovers.md": """# Mars rovers

NASA landed the Curiosity rover in Gale Crater in 2012. Engineers at the Jet Propulsion Laboratory in Pasadena drive \
Curiosity from California.

The Perseverance rover followed Curiosity and landed in Jezero Crater. The Jet Propulsion Laboratory built \
Perseverance for NASA, and Perseverance carried the Ingenuity helicopter.

Ingenuity flew above Jezero Crater while Perseverance collected rock samples. NASA and the Jet Propulsion Laboratory \
plan to return the samples of Perseverance to Earth.
""",
    "mars-missions.md": """# Mars missions

Curiosity and Perseverance both study the geology of Mars. NASA chose Gale Crater for Curiosity because of its \
layered rocks.

The Jet Propulsion Laboratory in Pasadena tests every rover before launch. Perseverance and Ingenuity were tested in \
Pasadena by the Jet Propulsion Laboratory.

Mars Sample Return is a NASA campaign with the European Space Agency to bring back the samples from Jezero Crater.
""",
    "telescopes.md": """# Space telescopes

The Hubble Space Telescope was named after Edwin Hubble. The Space Telescope Science Institute in Baltimore operates \
Hubble for NASA.

The James Webb Space Telescope observes in infrared light. The Space Telescope Science Institute in Baltimore also \
runs the James Webb Space Telescope.

The European Space Agency launched the James Webb Space Telescope on an Ariane 5 rocket from Kourou. Edwin Hubble \
discovered that galaxies move away from each other.
""",
}
FOOD = {
    "french-wine.md": """# French wine

Bordeaux is famous for red wine made from Merlot and Cabernet Sauvignon. Château Margaux is a celebrated estate near \
Bordeaux.

Burgundy grows Pinot Noir and Chardonnay around Dijon. The Côte de Nuits in Burgundy produces the most famous Pinot \
Noir.

Wine merchants in Bordeaux and Dijon export to London. Château Margaux sells its Merlot and Cabernet Sauvignon \
through merchants in Bordeaux.
""",
    "italian-food.md": """# Italian food

Naples is the home of pizza. Raffaele Esposito baked the first Margherita pizza in Naples for Queen Margherita of \
Savoy.

Bologna, in Emilia-Romagna, is known for tagliatelle and ragù. Parmigiano Reggiano is aged in Emilia-Romagna near \
Parma.

Cooks in Naples and Bologna use Parmigiano Reggiano. Raffaele Esposito and Queen Margherita made the Margherita \
pizza famous across Italy.
""",
    "wine-and-food.md": """# Wine with food

A Merlot from Bordeaux pairs well with ragù from Bologna. Pinot Noir from Burgundy suits Parmigiano Reggiano.

Château Margaux hosts dinners with dishes from Emilia-Romagna. Chefs in Dijon and Parma exchange recipes.

In London, restaurants serve Margherita pizza from Naples with Chardonnay from Burgundy.
""",
}
THEMES = "What are the main themes of this collection?"
FACTUAL = "Which rover landed in Jezero Crater?"



async def _details(rt: Runtime, collection: str) -> list[dict[str, Any]]:
    listed = await list_communities(rt.postgres, rt.neo4j, [collection], limit=1000)
    return await rt.neo4j.q.communities.details([c["id"] for c in listed], 100)


# --- pure logic ----------------------------------------------------------------------------------

def _two_topics() -> list[tuple[str, str, float]]:
    """Two topics, each of two dense groups of five; groups of a topic share two edges, topics one."""
    edges = []
    for topic in "ab":
        for group in range(2):
            nodes = [f"{topic}{group}{i}" for i in range(5)]
            edges += [(x, y, 3.0) for x, y in itertools.combinations(nodes, 2)]
        edges += [(f"{topic}00", f"{topic}10", 2.0), (f"{topic}01", f"{topic}11", 2.0), (f"{topic}02", f"{topic}12", 2.0)]
    return edges + [("a00", "b00", 0.5)]


def test_detection_is_hierarchical_and_deterministic() -> None:
    edges = _two_topics()
    found = detect_communities(edges, DetectOptions(resolution=0.3, split_min=6))
    assert {c.level for c in found} == {0, 1}
    top = [c for c in found if c.level == 0]
    assert sorted({m[0] for m in c.members} for c in top) == [{"a"}, {"b"}], "one coarse community per topic"
    for child in (c for c in found if c.level == 1):
        parent = found[child.parent]  # type: ignore[index]
        assert parent.level == 0 and set(child.members) < set(parent.members)
    # The same graph in another order, with the same seed, gives the same communities.
    shuffled = edges[:]
    random.Random(3).shuffle(shuffled)
    again = detect_communities([(b, a, w) for a, b, w in shuffled], DetectOptions(resolution=0.3, split_min=6))
    assert [(c.level, c.members, c.parent) for c in again] == [(c.level, c.members, c.parent) for c in found]
    # Centrality: the bridging node of a group is the most central.
    assert top[0].central(1)[0] in {"a00", "b00"}
    assert detect_communities([]) == [] and detect_communities([("x", "x", 1.0)]) == []
    assert not [c for c in detect_communities(edges, DetectOptions(min_size=11)) if c.size < 11]
    with pytest.raises(ValueError):
        DetectOptions(levels=0)


def test_community_ids_depend_on_members_not_their_order() -> None:
    assert community_id("c", 0, ["b", "a"]) == community_id("c", 0, ["a", "b"])
    assert len({community_id("c", 0, ["a", "b"]), community_id("c", 1, ["a", "b"]),
                community_id("d", 0, ["a", "b"]), community_id("c", 0, ["a", "c"])}) == 4


def test_extractive_report_names_central_entities_and_cites_chunks() -> None:
    chunks = [("c1", "# Heading\nNASA landed Curiosity in Gale Crater. The weather was fine.\n\nNASA also flew Ingenuity."),
              ("c2", "Marshall wrote about Mars. Curiosity studies Mars rocks.")]
    weights = {"nasa": 3.0, "curiosity": 2.0, "mars": 1.0}
    picked = pick_sentences(chunks, weights)
    assert picked[0] == ("NASA landed Curiosity in Gale Crater.", "c1")
    assert all("weather" not in s and not s.startswith("#") for s, _ in picked)
    assert ("Marshall wrote about Mars.", "c2") in picked and len([p for p in picked if p[1] == "c1"]) <= 2
    material = Material(entities=[EntityInfo("1", "NASA", "ORG", 5), EntityInfo("2", "Curiosity", "PRODUCT", 3),
                                  EntityInfo("3", "Mars", "LOC", 2), EntityInfo("4", "Gale Crater", "LOC", 1)],
                        size=4, relations=[("NASA", "Curiosity", 2.0, ["land"])], sentences=picked)
    report = extractive_report(material)
    assert report.title == "NASA, Curiosity and Mars (+1 more)" and not report.generated
    assert "NASA — Curiosity (land), 2 co-occurrences" in report.text
    assert "[chunk c1]" in report.text and "[chunk c2]" in report.text
    assert split_sentences("One. Two!\n\nThree") == ["One.", "Two!", "Three"]


@pytest.mark.parametrize("query", [
    THEMES, "What are the key topics across all documents?", "Summarize the collection.",
    "Give me an overview of these papers", "What is this corpus about?", "Which themes recur across the articles?",
    "What do the documents mainly discuss?", "What is the big picture here?", "What trends emerge across the sources?",
])
def test_corpus_level_questions_have_a_cue(query: str) -> None:
    assert global_cue(query) is not None
    assert is_global_question(query, [])
    assert not is_global_question(query, ["Jet Propulsion Laboratory"]), "a linked entity makes it a local question"


@pytest.mark.parametrize("query", [
    FACTUAL, "Who founded Apex Logistics?", "What is the plot of Moby-Dick?",
    "0-dimensional biomaterials lack inductive properties.", "Overall survival improves with adjuvant therapy.",
    "Which magazine was started first, Arthur's Magazine or First for Women?", "summary statistics of the trial",
    "Were the documents signed by Nixon?",
])
def test_ordinary_questions_have_no_cue(query: str) -> None:
    assert global_cue(query) is None and not is_global_question(query, [])


def test_the_shared_eval_questions_never_route_to_global() -> None:
    files = sorted(SHARED_EVAL.glob("*/queries.jsonl"))
    if not files:
        pytest.skip(f"no shared eval sets under {SHARED_EVAL}")
    queries = [json.loads(line)["text"] for f in files for line in f.read_text().splitlines() if line.strip()]
    assert len(queries) > 500
    cued = [q for q in queries if global_cue(q) is not None]
    assert cued == []


def test_keyword_overlap_ignores_generic_words() -> None:
    assert content_terms(THEMES) == []
    assert content_terms("What are the main wine regions across the documents?") == ["wine", "regions"]
    assert keyword_overlap(["wine", "regions"], "Regional wines: Bordeaux and Burgundy regions") == 1.0
    assert keyword_overlap(["rover"], "Bordeaux wine") == 0.0


# --- real stores ---------------------------------------------------------------------------------

async def test_communities_are_computed_stored_embedded_and_searched(rt: Runtime, collection: str,
                                                                     tmp_path: Path) -> None:
    await ingest_docs(await rt.ingestor(), tmp_path / "docs", collection, {**SPACE, **FOOD})
    router = await rt.router()
    before = await rest_search(router, FACTUAL, mode="auto", collections=[collection], limit=5)
    empty = await rest_search(router, THEMES, mode="global", collections=[collection])
    assert empty["results"] == [] and "graphrag communities" in empty["legs"]["global"]["note"]
    # Without communities, auto answers a corpus-level question as it always did.
    assert (await rest_search(router, THEMES, mode="auto", collections=[collection]))["mode"] == "auto"

    summary = await compute_communities(rt.postgres, rt.neo4j, rt.embedders, collection)
    assert summary["levels"]["0"] >= 2 and summary["levels"].get("1", 0) >= 1, summary
    assert summary["vector_index"] == "community_embedding" and summary["generated_reports"] == 0
    details = await _details(rt, collection)
    assert len(details) == summary["communities"]
    by_id = {d["id"]: d for d in details}
    # Two separate topics: no coarse community mixes the space documents' entities with the food ones'.
    space_names, food_names = {"NASA", "Jet Propulsion Laboratory", "Pasadena"}, {"Bordeaux", "Burgundy", "Naples"}
    for d in (d for d in details if d["level"] == 0):
        names = {e["name"] for e in d["entities"]}
        assert not (names & space_names and names & food_names), names
    assert any(space_names & {e["name"] for e in d["entities"]} for d in details if d["level"] == 0)
    assert any(food_names & {e["name"] for e in d["entities"]} for d in details if d["level"] == 0)
    for d in details:
        assert d["report"] and d["title"] and d["chunk_ids"] and d["computed_at"]
        # A chunk the report cites is one of the community's own.
        cited = set(re.findall(r"\[chunk ([^\]]+)\]", d["report"]))
        assert cited and cited <= {str(c) for c in d["chunk_ids"]}, d["report"]
        if d["level"] == 1:
            parent = by_id[d["parent"]]
            assert parent["level"] == 0 and {e["id"] for e in d["entities"]} <= {e["id"] for e in parent["entities"]}
    # The evidence chunks are the collection's own.
    chunk_ids = sorted({c for d in details for c in d["chunk_ids"]})
    rows = await rt.postgres.q.documents.chunks_by_id([uuid.UUID(c) for c in chunk_ids], [collection])
    assert len(rows) == len(chunk_ids)

    # Global mode ranks the reports: the matching topic first, as hits of kind "community".
    wine = await rest_search(router, "Which wine regions and grapes are described?", mode="global", collections=[collection])
    assert wine["mode"] == "global" and wine["legs"]["global"]["status"] == "ok"
    top = wine["results"][0]
    assert top["kind"] == "community" and top["collection"] == collection
    # Which wine community comes first hangs on how NER splits the food graph on a given CPU; what holds
    # is the order of topics: every community naming a wine place or grape outranks every space one.
    wine_names = {"Bordeaux", "Burgundy", "Dijon", "Côte de Nuits", "Château Margaux", "Merlot", "Pinot Noir",
                  "Chardonnay", "Cabernet Sauvignon", "French wine"}
    ranked = [{e["name"] for e in h["entities"]} for h in wine["results"]]
    assert ranked[0] & wine_names and not ranked[0] & space_names, ranked
    wine_ranks = [i for i, names in enumerate(ranked) if names & wine_names]
    space_ranks = [i for i, names in enumerate(ranked) if names & (space_names | {"Curiosity", "Perseverance", "Hubble"})]
    assert all(w < s for w in wine_ranks for s in space_ranks), ranked
    assert top["community"]["id"] in by_id and top["chunk_id"] in top["community"]["chunk_ids"]
    assert top["source"].endswith(".md") and top["document_id"] and not top["community"]["stale"]
    assert all(set(h["legs"]) == {"global"} for h in wine["results"])
    rover = await rest_search(router, "rovers exploring craters on Mars", mode="global", collections=[collection], limit=3)
    rover_top = {e["name"] for e in rover["results"][0]["entities"]}
    assert rover_top & space_names and not rover_top & (wine_names | food_names), rover_top
    with pytest.raises(InvalidInput, match="filters"):
        await rest_search(router, "wine", mode="global", collections=[collection], filters={"year": 2020})

    # auto: the corpus-level question goes to the reports (the coarse ones, one per theme); an ordinary
    # question gets exactly the results it got before communities existed.
    themes = await rest_search(router, THEMES, mode="auto", collections=[collection], limit=4)
    assert themes["mode"] == "global" and themes["routed_from"] == "auto"
    assert "cue" in themes["legs"]["global"]["reason"]
    levels = [h["community"]["level"] for h in themes["results"]]
    assert levels == sorted(levels) and levels[0] == 0
    covered = {e["name"] for h in themes["results"][:summary["levels"]["0"]] for e in h["entities"]}
    assert covered & space_names and covered & food_names
    after = await rest_search(router, FACTUAL, mode="auto", collections=[collection], limit=5)
    assert after["mode"] == "auto" and "global" not in after["legs"]
    assert [(h["chunk_id"], h["score"]) for h in after["results"]] == [(h["chunk_id"], h["score"]) for h in before["results"]]
    assert all("kind" not in h for h in after["results"])

    # Re-running replaces: same communities, same ids, nothing duplicated.
    again = await compute_communities(rt.postgres, rt.neo4j, rt.embedders, collection)
    assert again["communities"] == summary["communities"]
    details_again = await _details(rt, collection)
    assert sorted(d["id"] for d in details_again) == sorted(by_id)
    assert {d["id"]: d["report"] for d in details_again} == {d["id"]: d["report"] for d in details}

    # A change to the collection marks the reports stale until they are computed again.
    await ingest_docs(await rt.ingestor(), tmp_path / "more", collection, {"comets.md": "# Comets\n\nHalley's Comet returns every 76 years."})
    listed = await list_communities(rt.postgres, rt.neo4j, [collection])
    assert listed and all(c["stale"] for c in listed)
    stale = await rest_search(router, "wine", mode="global", collections=[collection], limit=2)
    assert stale["results"] and all(h["community"]["stale"] for h in stale["results"])
    await compute_communities(rt.postgres, rt.neo4j, rt.embedders, collection)
    assert not any(c["stale"] for c in await list_communities(rt.postgres, rt.neo4j, [collection]))


def _report_writer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A stand-in model: the report's title names the first entity of the material it was given."""
    prompt = next(p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart))
    first = prompt.splitlines()[1].removeprefix("- ").split(" (")[0]
    if first == "Pasadena":
        raise RuntimeError("the model is unavailable for this one")
    return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {
        "title": f"Written report on {first}", "summary": f"This community is about {first}."})])


async def test_reports_written_by_a_model_keep_their_evidence(rt: Runtime, collection: str, tmp_path: Path) -> None:
    await ingest_docs(await rt.ingestor(), tmp_path / "docs", collection, SPACE)
    summary = await compute_communities(rt.postgres, rt.neo4j, rt.embedders, collection,
                                        report_model=FunctionModel(_report_writer), report_limit=3)
    details = await _details(rt, collection)
    written = [d for d in details if d["generated"]]
    assert 1 <= len(written) <= 3 and summary["generated_reports"] == len(written)
    for d in written:
        assert d["title"].startswith("Written report on ") and d["report"].startswith("This community is about")
        assert "[chunk " in d["report"], "the evidence sentences stay below the model's summary"
    assert all(not d["title"].startswith("Written") for d in details if not d["generated"])
    hits = (await rest_search(await rt.router(), "Written report", mode="global", collections=[collection]))["results"]
    assert any(h["community"]["generated"] for h in hits)


def _map_reduce_model(calls: list[str]) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        prompt = next(p.content for m in messages for p in m.parts if isinstance(p, UserPromptPart))
        if info.output_tools:  # map: one report
            calls.append("map")
            wine = "Bordeaux" in prompt or "Burgundy" in prompt
            return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {
                "answer": "Wine from Bordeaux and Burgundy." if wine else "",
                "relevance": 90 if "Bordeaux" in prompt else 60 if wine else 0})])
        calls.append("reduce")
        labels = sorted({part.split("]")[0] for part in prompt.split("[C")[1:]})
        return ModelResponse(parts=[TextPart("Wine is a main theme " + "".join(f"[C{n}]" for n in labels))])

    return FunctionModel(respond)


async def test_global_answer_maps_each_report_then_reduces(rt: Runtime, collection: str, tmp_path: Path) -> None:
    await ingest_docs(await rt.ingestor(), tmp_path / "docs", collection, {**SPACE, **FOOD})
    await compute_communities(rt.postgres, rt.neo4j, rt.embedders, collection)
    reports = (await rest_search(await rt.router(), THEMES, mode="global", collections=[collection], limit=8))["results"]
    assert len(reports) >= 3

    calls: list[str] = []
    answer = await global_answer(_map_reduce_model(calls), THEMES, reports)
    assert calls.count("map") == len(reports) and calls[-1] == "reduce" and calls.count("reduce") == 1
    assert answer.generated and answer.answer.startswith("Wine is a main theme [C1]")
    relevant = [r for r in reports if "Bordeaux" in r["content"] or "Burgundy" in r["content"]]
    assert {p.community_id for p in answer.partials} == {r["community"]["id"] for r in relevant}
    assert [p.relevance for p in answer.partials] == sorted((p.relevance for p in answer.partials), reverse=True)
    assert answer.communities == [p.community_id for p in answer.partials]
    evidence = {c for r in relevant for c in r["community"]["chunk_ids"]}
    assert answer.chunk_ids and set(answer.chunk_ids) <= evidence

    plain = await global_answer(None, THEMES, reports)
    assert not plain.generated and reports[0]["title"] in plain.answer and "[C1]" in plain.answer
    assert plain.communities == [r["community"]["id"] for r in reports[:5]]


async def test_cli_and_agent_tool_read_the_communities(rt: Runtime, collection: str, tmp_path: Path) -> None:
    from graphrag.agent import AgentDeps
    from graphrag.agent import tools as agent_tools

    await ingest_docs(await rt.ingestor(), tmp_path / "docs", collection, FOOD)
    deps = AgentDeps(rt, collections=[collection])
    assert (await agent_tools.global_search(deps, THEMES)).warnings, "no communities yet: the tool says so"
    summary = await compute_communities(rt.postgres, rt.neo4j, rt.embedders, collection)
    found = await agent_tools.global_search(deps, "Which wines are described?", limit=3)
    assert len(found.reports) == 3 and not found.warnings
    assert {"Bordeaux", "Burgundy"} & set(found.reports[0].entities) and found.reports[0].chunk_ids
    routed = await agent_tools.search(deps, THEMES)
    assert routed.mode == "global" and routed.hits and routed.hits[0].found_by == ["global"]
    with pytest.raises(InvalidInput):
        await agent_tools.global_search(deps, "   ")

    # `graphrag communities --show` reads the stored communities without loading a model.
    env = {"GRAPHRAG_HOME": str(rt.settings.home_dir), "GRAPHRAG_SPACY_MODEL": "/nonexistent/spacy-model",
           "GRAPHRAG_EMBEDDING_MODEL": "sentence-transformers:/nonexistent/embedding-model"}
    shown = await asyncio.to_thread(run_cli, "communities", "--collection", collection, "--show", "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    listed = json.loads(shown.stdout)
    assert len(listed) == summary["communities"] and {c["level"] for c in listed} == {0, 1}
    text = await asyncio.to_thread(run_cli, "communities", "--collection", collection, "--show", "--level", "0", env=env)
    assert text.returncode == 0, text.stderr
    assert len([line for line in text.stdout.splitlines() if line.startswith("L0 ")]) == summary["levels"]["0"]
    missing = await asyncio.to_thread(run_cli, "communities", "--collection", "no_such_collection_here", env=env)
    assert missing.returncode == 2 and "unknown collection" in missing.stderr and missing.stderr.count("\n") == 1
    bad = await asyncio.to_thread(run_cli, "communities", "--collection", collection, "--levels", "9", env=env)
    assert bad.returncode == 2


async def test_ingest_can_recompute_the_communities(rt: Runtime, collection: str, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in SPACE.items():
        (folder / name).write_text(text)
    env = {"GRAPHRAG_HOME": str(rt.settings.home_dir), "GRAPHRAG_COMMUNITIES_AFTER_INGEST": "true"}
    done = await asyncio.to_thread(run_cli, "ingest", str(folder), "--collection", collection, "--json", env=env)
    assert done.returncode == 0, done.stderr
    listed = await list_communities(rt.postgres, rt.neo4j, [collection])
    assert listed and not any(c["stale"] for c in listed)
    # An unchanged re-ingest computes nothing: the communities keep their computation time.
    again = await asyncio.to_thread(run_cli, "ingest", str(folder), "--collection", collection, "--json", env=env)
    assert again.returncode == 0 and json.loads(again.stdout)["unchanged"] == len(SPACE)
    assert {c["computed_at"] for c in await list_communities(rt.postgres, rt.neo4j, [collection])} == \
        {c["computed_at"] for c in listed}


# --- REST with scoped keys ----------------------------------------------------------------------

KEYS = {"admin": "admin-" + uuid.uuid4().hex, "reader_a": "reader-a-" + uuid.uuid4().hex}


@pytest.fixture(scope="module")
def scoped(settings: Settings, services: object, models: object) -> Iterator[dict[str, Any]]:
    a, b = f"comm_a_{uuid.uuid4().hex[:8]}", f"comm_b_{uuid.uuid4().hex[:8]}"
    entries = [{"name": "admin", "key": KEYS["admin"]},
               {"name": "reader-a", "sha256": digest(KEYS["reader_a"]).hex(), "collections": [a], "access": "read"}]
    locked = settings.model_copy(update={"api_keys": SecretStr(json.dumps(entries))})
    with InProcessApi(locked, models) as server:
        with server.client(timeout=300, headers={"X-API-Key": KEYS["admin"]}) as c:
            for coll, docs in ((a, SPACE), (b, FOOD)):
                for source, text in docs.items():
                    r = c.post("/documents", json={"text": text, "source": source, "collection": coll})
                    assert r.status_code == 201, r.text

        async def compute() -> None:
            async with open_services(settings, start_local=False, models=models) as rt:  # type: ignore[arg-type]
                for coll in (a, b):
                    await compute_communities(rt.postgres, rt.neo4j, rt.embedders, coll)

        asyncio.run(compute())
        yield {"url": server.url, "api": server, "a": a, "b": b}


def test_scoped_key_sees_only_its_collections_communities(scoped: dict[str, Any]) -> None:
    a, b = scoped["a"], scoped["b"]
    question = {"query": "Which wine regions and grapes are described?", "mode": "global", "limit": 20}
    with scoped["api"].client(timeout=300, headers={"X-API-Key": KEYS["admin"]}) as admin:
        everything = admin.post("/search", json={**question, "collections": [a, b]})
        assert everything.status_code == 200, everything.text
        assert {h["collection"] for h in everything.json()["results"]} == {a, b}, "the question does reach B"
        b_ids = {h["community"]["id"] for h in everything.json()["results"] if h["collection"] == b}
    with scoped["api"].client(timeout=300,
                      headers={"Authorization": f"Bearer {KEYS['reader_a']}"}) as reader:
        for body in (question, {**question, "mode": "auto", "query": THEMES}):
            r = reader.post("/search", json=body)
            assert r.status_code == 200, r.text
            data = r.json()
            assert data["mode"] == "global" and data["results"]
            assert {h["collection"] for h in data["results"]} == {a}
            assert not b_ids & {h["community"]["id"] for h in data["results"]}
            assert "Bordeaux" not in json.dumps(data)
        denied = reader.post("/search", json={**question, "collections": [b]})
        assert denied.status_code == 403 and denied.headers["content-type"].startswith("application/problem+json")
        filtered = reader.post("/search", json={**question, "filters": {"year": 2020}})
        assert filtered.status_code == 400 and "filters" in filtered.json()["detail"]


async def test_browser_queries_show_the_communities(rt: Runtime, collection: str, tmp_path: Path) -> None:
    import neo4j

    from graphrag.stores import queries

    await ingest_docs(await rt.ingestor(), tmp_path / "docs", collection, SPACE)
    summary = await compute_communities(rt.postgres, rt.neo4j, rt.embedders, collection)
    params = {"collection": collection, "entity": "jet propulsion LABORATORY", "limit": 50}

    async def read(name: str) -> list[Any]:
        async def work(tx: Any) -> list[Any]:
            return [r async for r in await tx.run(queries.cypher("inspect", name), params)]

        async with rt.neo4j.driver.session(database=rt.neo4j.database,
                                           default_access_mode=neo4j.READ_ACCESS) as session:
            return await session.execute_read(work)

    listed = await read("communities")
    assert len(listed) == summary["communities"] and listed[0]["level"] == 0
    hierarchy = await read("community_hierarchy_graph")
    assert len(hierarchy) == summary["levels"]["0"] and any(r["children"] for r in hierarchy)
    assert all(r["members"] for r in hierarchy)
    mine = await read("entity_communities")
    assert [r["level"] for r in mine] == sorted(r["level"] for r in mine) and mine[0]["level"] == 0
    assert {r["entity"] for r in mine} == {"Jet Propulsion Laboratory"} and all(r["report"] for r in mine)


async def test_answer_to_a_corpus_level_question_cites_community_reports(rt: Runtime, collection: str,
                                                                          tmp_path: Path) -> None:
    from graphrag.answer.model import AnswerModel
    from graphrag.answer.service import AnswerOptions, complete, prepare

    await ingest_docs(await rt.ingestor(), tmp_path / "docs", collection, {**SPACE, **FOOD})
    await compute_communities(rt.postgres, rt.neo4j, rt.embedders, collection)
    calls: list[str] = []
    options = AnswerOptions(mode="auto", limit=8, collections=[collection])
    prepared = await prepare(rt, THEMES, options, model=AnswerModel(_map_reduce_model(calls), "function"))
    assert prepared.search.mode == "global"  # auto routed the corpus-level question
    response = await complete(rt, prepared)
    assert calls.count("map") == len(response["hits"]) and calls[-1] == "reduce"
    assert response["answer"].startswith("Wine is a main theme [")
    assert response["citations"], response["answer"]
    for cited in response["citations"]:  # [n] is hits[n-1], a community report about the wine theme
        hit = response["hits"][cited["n"] - 1]
        assert hit["kind"] == "community" and ("Bordeaux" in hit["content"] or "Burgundy" in hit["content"])
