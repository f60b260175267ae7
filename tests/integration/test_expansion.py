"""Query expansion: synonym lists and entity aliases in the keyword leg, against the real stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphrag.errors import ConfigurationError, InvalidInput
from graphrag.ingest.aliases import best_long_form, definitions, is_acronym_of, is_short_form
from graphrag.ingest.pipeline import Ingestor
from graphrag.models import Document
from graphrag.runtime import Runtime
from graphrag.search.expansion import (
    QueryExpander,
    SynonymFile,
    check_groups,
    parse_synonyms,
    synonym_terms,
    word_runs,
)
from graphrag.search.router import SearchRouter
from tests.helpers import run_cli, rest_search


# --- pure logic ----------------------------------------------------------------------------------

def test_synonym_lists_parse_and_match_whole_words() -> None:
    groups = parse_synonyms("# vehicles\ncar, automobile, auto\n\nheart attack, myocardial infarction  # medical\n")
    assert groups == (("car", "automobile", "auto"), ("heart attack", "myocardial infarction"))
    found = synonym_terms("Which cars are repaired after a heart attack?", groups)
    assert [(t.term, t.of) for t in found] == [("automobile", "car"), ("auto", "car"),
                                               ("myocardial infarction", "heart attack")]
    assert synonym_terms("a scarf for the heart", groups) == []  # no partial words, no partial phrases
    with pytest.raises(InvalidInput, match="line 2"):
        parse_synonyms("car, auto\nlonely\n")


def test_request_synonyms_are_validated() -> None:
    assert check_groups([["car", " automobile "]]) == (("car", "automobile"),)
    for bad in ("car", [["car"]], [["car", ""]], [["car", 3]], [[]]):
        with pytest.raises(InvalidInput, match="synonyms"):
            check_groups(bad)


def test_abbreviation_definitions_and_acronyms() -> None:
    assert definitions("The European Space Agency (ESA) launched it. IL-6 (interleukin 6) rose. "
                       "Mice (see Fig. 2) ran.") == [("ESA", "European Space Agency"), ("IL-6", "interleukin 6")]
    assert best_long_form("TNF", "levels of tumor necrosis factor") == "tumor necrosis factor"
    # A long explanation in parentheses is not a definition (at most min(|SF| + 5, 2|SF|) words).
    assert definitions("FIFA (non-fans which had no knowledge of the previous games of the franchise) liked it. "
                       "UCF (University of Central Florida) won.") == [("UCF", "University of Central Florida")]
    assert best_long_form("XYZ", "nothing to see here") is None
    assert is_short_form("mTOR") and is_short_form("HbA1c") and not is_short_form("see") and not is_short_form("Fig")
    assert is_acronym_of("WHO", "World Health Organization") and is_acronym_of("DoD", "Department of Defense")
    assert not is_acronym_of("NASA", "European Space Agency")


def test_word_runs_keep_names_and_capitalised_small_words() -> None:
    runs = word_runs("What did WHO say about the European Space Agency?")
    assert runs["who"] == "WHO" and runs["european space agency"] == "European Space Agency"
    assert "what" not in runs and "the european" not in runs
    # A capital letter may be a glossary's name ("R"); a lower-case one and "A"/"I" are not names.
    letters = word_runs("Does A plot in R faster than in r or I thought?")
    assert letters["r"] == "R" and "a" not in letters and "i" not in letters
    assert "r" not in word_runs("plots in r")


def test_expansion_is_opt_in_per_request_or_collection() -> None:
    off = QueryExpander()
    assert not off.wanted(None, ["a"]) and off.wanted(True, ["a"])
    some = QueryExpander(collections=["a", "b"])
    assert some.wanted(None, ["a"]) and not some.wanted(None, ["a", "c"]) and not some.wanted(False, ["a"])
    assert not some.wanted(None, None)  # everything searched: only with "*"
    assert QueryExpander(collections=["*"]).wanted(None, None)


def test_a_bad_synonym_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="GRAPHRAG_SYNONYMS_FILE"):
        SynonymFile(tmp_path / "missing.txt").groups()
    path = tmp_path / "syn.txt"
    path.write_text("car\n")
    with pytest.raises(ConfigurationError, match="line 1"):
        SynonymFile(path).groups()


# --- real stores ---------------------------------------------------------------------------------

CARS = {
    "garage": "# Garage log\n\nThe automobile was repaired at the garage on Friday.",
    "road": "# Road trip\n\nThe car was repaired before the trip to the coast.",
    "tea": "# Tea\n\nGreen tea is grown in Japan.",
}
SPACE = {
    "launch": "# Launch\n\nThe European Space Agency (ESA) launched the probe from Kourou.",
    "shield": "# Shield tests\n\nESA engineers tested the heat shield in a vacuum chamber.",
    "apex": "# Depot\n\nApex Logistics (AL) moved its headquarters to Denver in 2019.",
    "drivers": "# Drivers\n\nApex Logistics hired forty drivers for the winter.",
}


async def ingest(ingestor: Ingestor, collection: str, docs: dict[str, str]) -> None:
    items = [(Document(source=name, title=name, text=text, kind="markdown"), name) for name, text in docs.items()]
    report = await ingestor.ingest_documents(items, collection=collection)
    assert report.ingested == len(docs), report.failed


def sources(response: dict[str, Any]) -> list[str]:
    return [hit["source"] for hit in response["results"]]


@pytest.fixture
def router(runtime: Runtime, models: Any, tmp_path: Path) -> SearchRouter:
    synonyms = tmp_path / "synonyms.txt"
    synonyms.write_text("car, automobile, auto\n")
    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    router.expander = QueryExpander.from_settings(runtime.settings.model_copy(update={"synonyms_file": synonyms}))
    return router


async def test_synonym_file_expands_the_keyword_leg(router: SearchRouter, ingestor: Ingestor, collection: str) -> None:
    await ingest(ingestor, collection, CARS)
    plain = await rest_search(router, "car repaired", mode="keyword", collections=[collection])
    assert sources(plain) == ["road"] and "expanded" not in plain["legs"]["keyword"]
    expanded = await rest_search(router, "car repaired", mode="keyword", collections=[collection], expand=True)
    keyword = expanded["legs"]["keyword"]
    assert keyword["expanded"] == ["automobile", "auto"]
    assert {"term": "automobile", "for": "car", "source": "synonyms"} in keyword["expansions"]
    # The document that only says "automobile" is found; the query's own word still weighs more.
    assert sources(expanded) == ["road", "garage"]
    only_synonym = await rest_search(router, "car", mode="keyword", collections=[collection], expand=True)
    assert sources(only_synonym) == ["road", "garage"]
    garage = only_synonym["results"][1]
    assert garage["legs"]["keyword"]["matched"] == ["automobil"]
    # Fused modes use the same expanded keyword evidence.
    hybrid = await rest_search(router, "car", mode="hybrid", collections=[collection], expand=True, limit=2)
    assert set(sources(hybrid)) == {"road", "garage"} and hybrid["legs"]["keyword"]["expanded"]


async def test_request_synonyms_and_collection_default(runtime: Runtime, models: Any, ingestor: Ingestor,
                                                       collection: str) -> None:
    await ingest(ingestor, collection, CARS)
    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    router.expander = QueryExpander(collections=[collection])  # this collection expands by default
    response = await rest_search(router, "vehicle", mode="keyword", collections=[collection],
                                   synonyms=[["vehicle", "automobile"]])
    assert sources(response) == ["garage"] and response["legs"]["keyword"]["expanded"] == ["automobile"]
    off = await rest_search(router, "vehicle", mode="keyword", collections=[collection], expand=False,
                              synonyms=[["vehicle", "automobile"]])
    assert sources(off) == [] and "expanded" not in off["legs"]["keyword"]


async def test_entity_aliases_expand_both_ways(router: SearchRouter, ingestor: Ingestor, collection: str) -> None:
    await ingest(ingestor, collection, SPACE)
    # "Apex Logistics (AL)": the entity Apex Logistics has the alias AL.
    forward = await rest_search(router, "Apex Logistics", mode="keyword", collections=[collection], expand=True)
    assert "AL" in forward["legs"]["keyword"]["expanded"]
    assert {"term": "AL", "for": "Apex Logistics", "source": "alias"} in forward["legs"]["keyword"]["expansions"]
    # A query that names the alias gets the entity's name.
    backward = await rest_search(router, "AL headquarters", mode="keyword", collections=[collection], expand=True)
    assert "Apex Logistics" in backward["legs"]["keyword"]["expanded"]
    assert "drivers" in sources(backward)  # says only "Apex Logistics"
    # A word is not the abbreviation written the same ("al", "esa"), whether the abbreviation is an alias
    # or an entity of its own.
    for query, name in (("al headquarters", "Apex Logistics"), ("esa shield", "European Space Agency")):
        lower = await rest_search(router, query, mode="keyword", collections=[collection], expand=True)
        assert name not in lower["legs"]["keyword"].get("expanded", []), query
    upper = await rest_search(router, "ESA shield", mode="keyword", collections=[collection], expand=True)
    assert "European Space Agency" in upper["legs"]["keyword"]["expanded"]
    plain = await rest_search(router, "AL headquarters", mode="keyword", collections=[collection])
    assert "drivers" not in sources(plain)
    # "European Space Agency (ESA)": the document that says only "ESA" is found by the long name.
    esa = await rest_search(router, "European Space Agency", mode="keyword", collections=[collection], expand=True)
    assert "ESA" in esa["legs"]["keyword"]["expanded"] and "shield" in sources(esa)
    assert "shield" not in sources(await rest_search(router, "European Space Agency", mode="keyword",
                                                       collections=[collection]))


async def test_rest_shows_expanded_terms(api: Any, ingestor: Ingestor, collection: str) -> None:
    await ingest(ingestor, collection, CARS)
    async with api.async_client(timeout=120) as client:
        r = await client.post("/search/keyword", json={"query": "vehicle", "collections": [collection],
                                                       "synonyms": [["vehicle", "automobile"]]})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["legs"]["keyword"]["expanded"] == ["automobile"] and sources(body) == ["garage"]
        bad = await client.post("/search", json={"query": "vehicle", "synonyms": [["vehicle"]]})
        assert bad.status_code == 400


def _cli(*args: str, env: dict[str, str]) -> Any:
    return run_cli(*args, env=env)


def test_cli_bad_synonym_file_fails_before_the_stores(settings: Any, tmp_path: Path) -> None:
    env = {"GRAPHRAG_HOME": str(settings.home_dir), "GRAPHRAG_POSTGRES_DSN": "postgresql://graphrag@127.0.0.1:9/none"}
    (tmp_path / "bad.txt").write_text("car\n")
    for name, message in (("missing.txt", "--synonyms"), ("bad.txt", "line 1")):
        result = _cli("search", "x", "--mode", "keyword", "--synonyms", str(tmp_path / name), env=env)
        assert result.returncode == 2 and message in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1


async def test_cli_search_with_a_synonym_file(settings: Any, services: Any, ingestor: Ingestor, collection: str,
                                              tmp_path: Path) -> None:
    import asyncio
    import json

    await ingest(ingestor, collection, CARS)
    (tmp_path / "syn.txt").write_text("car, automobile\n")
    result = await asyncio.to_thread(_cli, "search", "car", "--mode", "keyword", "--collection", collection,
                                     "--synonyms", str(tmp_path / "syn.txt"), "--json",
                                     env={"GRAPHRAG_HOME": str(settings.home_dir)})
    assert result.returncode == 0, result.stderr
    body = json.loads(result.stdout)
    assert body["legs"]["keyword"]["expanded"] == ["automobile"] and sources(body) == ["road", "garage"]


async def test_alias_backfill_for_documents_stored_without_aliases(router: SearchRouter, runtime: Runtime,
                                                                  ingestor: Ingestor, settings: Any,
                                                                  collection: str) -> None:
    """A collection whose entities have no aliases (stored before they were kept) gets them from its
    stored chunks with `graphrag aliases`; running it again adds nothing."""
    import asyncio
    import json

    from graphrag.ingest.alias_backfill import backfill_aliases, document_aliases

    assert document_aliases(["european space agency|ORG", "kourou|GPE"],
                            ["The European Space Agency (ESA) launched it from Kourou."]) == {
        "european space agency|ORG": {"ESA"}}
    await ingest(ingestor, collection, SPACE)
    await runtime.neo4j.driver.execute_query("MATCH (e:Entity {collection: $c}) REMOVE e.aliases",
                                             parameters_={"c": collection}, database_=runtime.neo4j.database)
    # Without aliases only the graph's acronym relations expand ("ESA" beside "European Space Agency").
    before = await rest_search(router, "AL headquarters", mode="keyword", collections=[collection], expand=True)
    assert "Apex Logistics" not in before["legs"]["keyword"].get("expanded", [])

    result = await asyncio.to_thread(_cli, "aliases", "--collection", collection, "--json",
                                     env={"GRAPHRAG_HOME": str(settings.home_dir)})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)[collection]
    assert report["documents"] == len(SPACE) and report["aliases"] >= 2 and report["entities"] >= 2
    backward = await rest_search(router, "AL headquarters", mode="keyword", collections=[collection], expand=True)
    assert "Apex Logistics" in backward["legs"]["keyword"]["expanded"] and "drivers" in sources(backward)
    rows = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) WHERE e.aliases IS NOT NULL RETURN e.name AS name, e.aliases AS aliases",
        parameters_={"c": collection}, database_=runtime.neo4j.database)
    assert {r["name"]: r["aliases"] for r in rows.records}.get("Apex Logistics") == ["AL"]
    again = await backfill_aliases(runtime.postgres, runtime.neo4j, collection)
    assert again.documents == len(SPACE) and again.aliases == 0 and again.entities == 0
