"""Domain terms: a user's glossary (GRAPHRAG_ENTITY_TERMS) and the shipped technology names.

The file format and the extractor's use of it are tested on their own (the real spaCy model); what
reaches the graph, the query expansion that uses a term's aliases and the CLI's errors are tested
against the real stores."""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from graphrag.config import Settings
from graphrag.errors import ConfigurationError
from graphrag.ingest.extract import SpacyExtractor
from graphrag.ingest.extractors import build_extractor, extract_options
from graphrag.ingest.glossary import Term, glossary_path, load_glossary, load_setting, tech_names
from graphrag.ingest.pipeline import Ingestor
from graphrag.models import Document
from graphrag.runtime import Runtime
from graphrag.search.expansion import QueryExpander
from graphrag.search.router import SearchRouter
from tests.helpers import rest_search, run_cli

GLOSSARY = [
    {"name": "Quillfeather", "label": "PRODUCT", "aliases": ["QF"]},
    {"name": "pgvector", "label": "TECH", "aliases": ["pg_vector"]},
    {"name": "Node.js", "label": "TECH"},
    {"name": "blue widget", "label": "part", "ignore_case": True},
]


def _write(path: Path, rows: list[Any]) -> Path:
    path.write_text("# our terms\n\n" + "\n".join(json.dumps(r) for r in rows) + "\n")
    return path


# --- the file ------------------------------------------------------------------------------------

def test_a_glossary_file_loads_with_defaults_and_a_fingerprint(tmp_path: Path) -> None:
    glossary = load_glossary(_write(tmp_path / "terms.jsonl", [*GLOSSARY, {"name": "Zorblax Engine"}]))
    assert glossary.terms[0] == Term("Quillfeather", "PRODUCT", ("QF",), False)
    assert glossary.terms[3] == Term("blue widget", "PART", (), True)  # labels are upper case
    assert glossary.terms[4].label == "TERM" and glossary.terms[4].key == "zorblax engine"
    again = load_glossary(_write(tmp_path / "again.jsonl", [*GLOSSARY, {"name": "Zorblax Engine"}]))
    other = load_glossary(_write(tmp_path / "other.jsonl", GLOSSARY))
    assert glossary.fingerprint == again.fingerprint != other.fingerprint
    assert load_glossary(None).terms == () and load_glossary(None).fingerprint == ""


@pytest.mark.parametrize("line, message", [
    ('{"name": "ok"', "terms.jsonl:3: not JSON"),
    ('["Quillfeather"]', "must be a JSON object"),
    ('{"name": "x"}', "fewer than two characters"),
    ('{"name": "7"}', "fewer than two characters"),
    ('{"name": "R", "ignore_case": true}', "a one-letter name is matched as written"),
    ('{"name": "GNU R", "aliases": ["R"]}', "a one-letter form must be the term's name"),
    ('{"name": "A"}', "'A' is a common word"),
    ('{"name": "Ok", "colour": "red"}', "unknown field 'colour'"),
    ('{"name": "Ok", "aliases": "OK"}', '"aliases" must be a list'),
    ('{"name": "Ok", "label": ""}', '"label" must be a non-empty string'),
    ('{"name": "Ok", "ignore_case": "yes"}', '"ignore_case" must be true or false'),
    ('{"name": "Zorblax", "aliases": ["pgvector"]}', "'pgvector' is already a name or alias of the term on line 3"),
    ('{"name": "Ok", "aliases": ["a"]}', "'a' keeps fewer than two characters"),
    ('{"name": "Ok", "aliases": ["the"]}', "'the' is a common word"),
])
def test_a_bad_line_is_a_one_line_error_naming_it(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "terms.jsonl"
    path.write_text("# terms\n\n" + (json.dumps(GLOSSARY[1]) + "\n" if "already" in message else "") + line + "\n")
    with pytest.raises(ConfigurationError) as caught:
        load_glossary(path)
    text = str(caught.value)
    assert text.startswith("GRAPHRAG_ENTITY_TERMS: ") and message in text and "\n" not in text, text


def test_a_json_string_may_hold_a_line_separator_and_an_empty_setting_is_no_file(tmp_path: Path) -> None:
    path = tmp_path / "terms.jsonl"
    path.write_text('{"name": "Quill\u2028Feather"}\n{"name": "Zorblax"}\n{"name": \n', encoding="utf-8")
    with pytest.raises(ConfigurationError, match="terms.jsonl:3: not JSON"):  # lines counted at \n only
        load_glossary(path)
    assert Settings(entity_terms="").entity_terms is None and Settings(synonyms_file=" ").synonyms_file is None


def test_a_missing_or_binary_file_is_a_configuration_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="No such file"):
        load_glossary(tmp_path / "missing.jsonl")
    (tmp_path / "binary.jsonl").write_bytes(b"\xff\xfe\x00junk")
    with pytest.raises(ConfigurationError, match="not UTF-8"):
        load_glossary(tmp_path / "binary.jsonl")


def test_a_folder_of_glossaries_gives_each_collection_its_own(tmp_path: Path) -> None:
    folder = tmp_path / "terms"
    folder.mkdir()
    own = _write(folder / "payments.jsonl", [{"name": "Ledgerline", "label": "SERVICE"}])
    assert glossary_path(folder, "payments") == own
    assert glossary_path(folder, "search") is None  # no file of its own and no default: no glossary
    default = _write(folder / "_default.jsonl", GLOSSARY)
    assert glossary_path(folder, "search") == default and glossary_path(folder, "payments") == own
    assert glossary_path(tmp_path / "one.jsonl", "payments") == tmp_path / "one.jsonl"  # a file: every collection
    assert glossary_path(None, "payments") is None
    # The setting's own glossary is the folder's default; every file in it is checked at once.
    assert [t.name for t in load_setting(folder).terms] == [t["name"] for t in GLOSSARY]
    (folder / "broken.jsonl").write_text('{"name": "Ledgerline"}\n{"name": \n')
    with pytest.raises(ConfigurationError, match=r"broken\.jsonl:2: not JSON"):
        load_setting(folder)
    (folder / "broken.jsonl").unlink()
    (folder / "_default.jsonl").unlink()
    assert load_setting(folder).terms == ()


def test_the_shipped_technology_list_has_two_sections() -> None:
    names = tech_names()
    assert {"JavaScript", "JSON", "Firefox", "PostgreSQL", "Node.js", "C++"} <= names.anywhere
    assert {"Java", "Python", "Kafka", "Rust", "TLS", "REST"} <= names.with_code
    assert not names.anywhere & names.with_code


# --- the extractor (the real spaCy model, no stores) ---------------------------------------------

def _extractor(settings: Settings) -> Any:
    spacy = SpacyExtractor(settings.spacy_model, extract_options(settings))
    return build_extractor(settings, spacy)


@pytest.fixture(scope="module")
def glossary_extractor(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = _write(tmp_path_factory.mktemp("glossary") / "terms.jsonl", GLOSSARY)
    return _extractor(Settings(entity_terms=path))


def test_terms_are_entities_under_their_name_label_and_aliases(glossary_extractor: Any) -> None:
    chunks = ["Olga Brandt ships Quillfeather to Norway. QF stores vectors with `pgvector`, or pg_vector as "
              "the old docs say, and runs on Node.js beside a Blue Widget.",
              "Nobody else sells a BLUE WIDGET; the quillfeather in lower case is a bird's feather."]
    [ex] = glossary_extractor.extract_many([chunks])
    got = {key: (e.name, e.label) for key, e in ex.entities.items()}
    assert got["quillfeather"] == ("Quillfeather", "PRODUCT")  # whatever NER says of it
    assert got["pgvector"] == ("pgvector", "TECH")  # the code span too is the term, not a CODE entity
    assert got["node.js"] == ("Node.js", "TECH") and got["blue widget"] == ("blue widget", "PART")
    assert "qf" not in got and "pg_vector" not in got  # aliases are mentions of their term
    assert ex.mentions[(0, "quillfeather")] == 2 and ex.mentions[(0, "pgvector")] == 2
    assert ex.mentions[(1, "blue widget")] == 1  # ignore_case
    assert (1, "quillfeather") not in ex.mentions  # names are matched as written
    assert ex.aliases["quillfeather"] == {"QF"} and ex.aliases["pgvector"] == {"pg_vector"}
    # Terms relate to what shares their sentences, as any entity does.
    assert ("olga brandt", "quillfeather") in ex.relations


def test_a_term_inside_a_longer_name_or_code_span_leaves_it_alone(tmp_path: Path) -> None:
    terms = [{"name": "Python", "label": "LANG"}, {"name": "pgvector", "label": "TECH"},
             {"name": "Quill Feather", "label": "PRODUCT"}]
    extractor = _extractor(Settings(entity_terms=_write(tmp_path / "terms.jsonl", terms)))
    [ex] = extractor.extract_many([[
        "The Python Software Foundation wrote Python. Use `pgvector.Vector` or `pgvector` itself.",
        "The Quill\nFeather pen and the Quill  Feather case: one product, however the lines wrap."]])
    got = {key: (e.name, e.label) for key, e in ex.entities.items()}
    assert got["python software foundation"][1] == "ORG" and got["python"] == ("Python", "LANG")
    assert ex.mentions[(0, "python")] == 1  # the one outside the foundation's name
    assert got["pgvector.vector"] == ("pgvector.Vector", "CODE") and got["pgvector"] == ("pgvector", "TECH")
    assert ex.mentions[(1, "quill feather")] == 2 and got["quill feather"] == ("Quill Feather", "PRODUCT")


def test_the_gate_relabels_only_names_written_as_the_glossary_writes_them(glossary_extractor: Any) -> None:
    from graphrag.ingest.extractors import BoilerplateGate
    from graphrag.models import Entity, Extraction

    class Shouting:
        def extract_many(self, documents: Any) -> list[Extraction]:
            return [Extraction(entities={"quillfeather": Entity("quillfeather", "QUILLFEATHER", "ORG"),
                                         "blue widget": Entity("blue widget", "Blue Widget", "ORG")},
                               mentions={(0, "quillfeather"): 1, (0, "blue widget"): 1}) for _ in documents]

    [ex] = BoilerplateGate(Shouting(), terms=glossary_extractor.terms.values()).extract_many([["x"]])
    assert ex.entities["quillfeather"].label == "ORG"  # the term is written "Quillfeather", as written
    assert ex.entities["blue widget"].label == "PART"  # ignore_case


def test_the_glossary_label_wins_over_an_llm_beside_spacy(glossary_extractor: Any) -> None:
    from graphrag.ingest.extractors import BoilerplateGate
    from graphrag.models import Entity, Extraction

    class Renamer:
        def extract_many(self, documents: Any) -> list[Extraction]:
            return [Extraction(entities={"quillfeather|ORG": Entity("quillfeather|ORG", "Quillfeather", "ORG")},
                               mentions={(0, "quillfeather|ORG"): 1}) for _ in documents]

    gate = BoilerplateGate(Renamer(), terms=glossary_extractor.terms.values())
    [ex] = gate.extract_many([["Quillfeather is here."]])
    assert (ex.entities["quillfeather"].name, ex.entities["quillfeather"].label) == ("Quillfeather", "PRODUCT")
    assert ex.aliases["quillfeather"] == {"QF"}


CODE_DOC = ["Run `cargo build`, then `cargo run`. JavaScript and Java both compile to something; "
            "`main` calls `helper`.", "```rust\nfn main() {}\n```\nJava and JavaScript again."]
PROSE_DOC = ["Java is an island of Indonesia; its capital is Jakarta. Rice grows in central Java.",
             "JavaScript was named after Java, which Sun Microsystems made."]


def test_technology_names_take_tech_where_they_are_unambiguous(glossary_extractor: Any) -> None:
    code, prose = glossary_extractor.extract_many([CODE_DOC, PROSE_DOC])
    assert code.entities["javascript"].label == "TECH" and code.entities["java"].label == "TECH"
    assert prose.entities["javascript"].label == "TECH"  # no other meaning
    assert prose.entities.get("java") is None or prose.entities["java"].label != "TECH"  # the island
    # Computing's acronyms, which the model takes for organisations, count only where there is code.
    acronyms = ["Run `cargo build`, then `cargo run`. The API is served by the CLI; the UI talks to the LLM.",
                "```rust\nfn main() {}\n```\nThe API again, and the SDK."]
    meeting = ["The API and the CLI were discussed by the board. The AI lab in Boston."]
    tech, plain_text = glossary_extractor.extract_many([acronyms, meeting])
    assert {tech.entities[k].label for k in ("api", "cli", "sdk")} == {"TECH"}
    assert {"api", "cli"} & set(plain_text.entities)  # found, with the model's label
    assert all(e.label != "TECH" for e in plain_text.entities.values())
    off = _extractor(Settings(tech_terms=False))
    [plain] = off.extract_many([PROSE_DOC])
    assert plain.entities["javascript"].label != "TECH"  # the model's own label


def test_web_framework_names_of_the_stop_46_list_take_tech(glossary_extractor: Any) -> None:
    # The model read FastAPI's docs' "Starlette" as PERSON and GPE, "Swagger UI" as PERSON, "Uvicorn"
    # as ORG; Vue's docs' "DOM" as ORG and "Vue" as PERSON.
    web = ["FastAPI is built on Starlette and served by Uvicorn. Swagger UI shows the docs of `app`.",
           "```python\napp = FastAPI()\n```\nVue updates the DOM when `count` changes."]
    bio = ["Dissolved organic matter (DOM) was measured in the lake. Vue Lake samples held more DOM."]
    code, plain = glossary_extractor.extract_many([web, bio])
    labels = {e.name: e.label for e in code.entities.values()}
    assert {labels.get(n) for n in ("Starlette", "Uvicorn", "Swagger UI", "DOM")} == {"TECH"}, labels
    assert all(e.label != "TECH" for e in plain.entities.values() if e.name in ("DOM", "Vue", "Vue Lake"))


def test_systems_and_web_acronyms_of_the_stop_48_list_take_tech(glossary_extractor: Any) -> None:
    # The model read the Rust books' "ABI" as ORG (43 pages), pydantic-ai's "MCP" as ORG (19), Vue's
    # "SSR" as ORG (15).
    systems = ["The ABI of `extern fn` calls is fixed; the FFI goes through `libc`, and QEMU runs the tests.",
               "```rust\nextern \"C\" { fn abs(x: i32) -> i32; }\n```\nThe MCP server streams over SSR pages."]
    bank = ["The ABI branch and the FFI office were audited; MCP shares rose."]
    code, plain = glossary_extractor.extract_many([systems, bank])
    labels = {e.name: e.label for e in code.entities.values()}
    found = {n: labels[n] for n in ("ABI", "FFI", "QEMU", "MCP", "SSR") if n in labels}
    assert len(found) >= 3 and set(found.values()) == {"TECH"}, labels
    assert all(e.label != "TECH" for e in plain.entities.values()), plain.entities


# --- against the real stores ---------------------------------------------------------------------

def _models_with(models: Any, settings: Settings) -> Any:
    """The session's models, with the extractor of ``settings`` (the embedder is not loaded again)."""
    plugged = copy.copy(models)
    plugged.settings, plugged._profiles = settings, {}
    plugged.extractor_options = extract_options(settings)
    plugged.spacy = SpacyExtractor(settings.spacy_model, plugged.extractor_options)
    plugged.extractor = build_extractor(settings, plugged.spacy)
    return plugged


DOCS = {
    "launch": "# Launch\n\nQuillfeather stores its vectors with pgvector. The team of Olga Brandt built it.\n",
    "notes": "# Notes\n\nQF is fast. Olga Brandt wrote these notes about the blue widget.\n",
}


async def test_a_glossary_reaches_the_graph_and_query_expansion(runtime: Runtime, models: Any, tmp_path: Path,
                                                                collection: str) -> None:
    settings = runtime.settings.model_copy(update={"entity_terms": _write(tmp_path / "terms.jsonl", GLOSSARY)})
    ingestor = Ingestor(settings, runtime.postgres, runtime.neo4j, _models_with(models, settings))
    items = [(Document(source=name, title=name, text=text, kind="markdown"), name) for name, text in DOCS.items()]
    report = await ingestor.ingest_documents(items, collection=collection)
    assert report.ingested == 2 and not report.failed
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.key AS key, e.name AS name, e.label AS label, "
        "e.aliases AS aliases, e.mentions AS mentions", c=collection)
    entities = {r["key"]: r for r in rows}
    assert (entities["quillfeather"]["name"], entities["quillfeather"]["label"]) == ("Quillfeather", "PRODUCT")
    assert entities["quillfeather"]["aliases"] == ["QF"] and entities["quillfeather"]["mentions"] == 2
    assert entities["blue widget"]["label"] == "PART" and entities["pgvector"]["label"] == "TECH"
    assert "qf" not in entities
    # A keyword search for the term's name finds the document that only says its alias.
    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    router.expander = QueryExpander.from_settings(settings)
    found = await rest_search(router, "Quillfeather", mode="keyword", collections=[collection], expand=True)
    assert "QF" in found["legs"]["keyword"]["expanded"]
    assert {hit["source"] for hit in found["results"]} == {"launch", "notes"}
    # Graph mode links a query naming an alias to the term's entity (the entity-alias index).
    graph = await rest_search(router, "What is QF?", mode="graph", collections=[collection])
    assert "Quillfeather" in {e["name"] for e in graph["graph_context"]["entities"]}
    assert {hit["source"] for hit in graph["results"]} == {"launch", "notes"}
    # ... as a name the query gives (full confidence: the leg's weight in fused modes), not only through
    # the passages the keyword leg found (0.25).
    assert graph["legs"]["graph"].get("confidence", 1.0) == 1.0, graph["legs"]["graph"]
    # The same documents under a changed glossary are extracted again on the next ingest.
    changed = [*GLOSSARY[1:], {"name": "Quillfeather", "label": "SERVICE"}]
    settings = settings.model_copy(update={"entity_terms": _write(tmp_path / "changed.jsonl", changed)})
    again = await Ingestor(settings, runtime.postgres, runtime.neo4j, _models_with(models, settings)) \
        .ingest_documents(items, collection=collection)
    assert again.updated == 2 and not again.failed
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c, key: 'quillfeather'}) RETURN e.label AS label, e.aliases AS aliases",
        c=collection)
    assert rows[0]["label"] == "SERVICE"


@pytest.mark.parametrize("folder", [False, True], ids=["file", "folder"])
async def test_cli_refuses_a_bad_glossary_before_writing_anything(settings: Settings, services: Any, runtime: Runtime,
                                                                  tmp_path: Path, collection: str, folder: bool) -> None:
    """A bad line is refused, in a folder of glossaries even in another collection's file."""
    (tmp_path / "doc.md").write_text("# Doc\n\nQuillfeather.\n")
    terms = tmp_path / "terms"
    terms.mkdir()
    (terms / "terms.jsonl").write_text('{"name": "Quillfeather", "label": "PRODUCT"}\n{"name": \n')
    if folder:
        _write(terms / f"{collection}.jsonl", GLOSSARY)
    setting = terms if folder else terms / "terms.jsonl"
    env = {"GRAPHRAG_HOME": str(settings.home_dir), "GRAPHRAG_ENTITY_TERMS": str(setting)}
    result = await asyncio.to_thread(run_cli, "ingest", str(tmp_path / "doc.md"), "--collection", collection, env=env)
    assert result.returncode != 0 and result.stderr.count("\n") == 1, result.stderr
    assert "GRAPHRAG_ENTITY_TERMS" in result.stderr and "terms.jsonl:2: not JSON" in result.stderr
    assert await runtime.postgres.pool.fetchval("SELECT count(*) FROM documents WHERE collection = $1",
                                                collection) == 0


async def _labels(runtime: Runtime, collection: str) -> dict[str, str]:
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.key AS key, e.label AS label", c=collection)
    return {r["key"]: r["label"] for r in rows}


async def test_a_folder_of_glossaries_applies_each_collections_own_on_one_server(
        runtime: Runtime, models: Any, tmp_path: Path, collection: str) -> None:
    """One process (a server) ingests two collections under their own glossaries; an edited file takes
    effect on the next ingest, without a restart; a file broken while it runs stops that collection's
    ingest before anything is written."""
    folder = tmp_path / "terms"
    folder.mkdir()
    payments, other = f"{collection}_pay", f"{collection}_other"
    _write(folder / f"{payments}.jsonl", [{"name": "Quillfeather", "label": "SERVICE", "aliases": ["QF"]}])
    _write(folder / "_default.jsonl", GLOSSARY)
    settings = runtime.settings.model_copy(update={"entity_terms": folder})
    ingestor = Ingestor(settings, runtime.postgres, runtime.neo4j, _models_with(models, settings))
    items = [(Document(source=name, title=name, text=text, kind="markdown"), name) for name, text in DOCS.items()]
    for name in (payments, other):
        report = await ingestor.ingest_documents(items, collection=name)
        assert report.ingested == 2 and not report.failed
    mine, theirs = await _labels(runtime, payments), await _labels(runtime, other)
    assert mine["quillfeather"] == "SERVICE" and "blue widget" not in mine  # only its own terms
    assert theirs["quillfeather"] == "PRODUCT" and theirs["blue widget"] == "PART"  # the folder's default
    # The collection's file edited: its documents are extracted again on the next ingest; the other
    # collection's are unchanged.
    _write(folder / f"{payments}.jsonl", [{"name": "Quillfeather", "label": "PLATFORM", "aliases": ["QF"]},
                                          {"name": "blue widget", "label": "GADGET", "ignore_case": True}])
    again = await ingestor.ingest_documents(items, collection=payments)
    assert again.updated == 2 and not again.failed
    mine = await _labels(runtime, payments)
    assert mine["quillfeather"] == "PLATFORM" and mine["blue widget"] == "GADGET"
    assert (await ingestor.ingest_documents(items, collection=other)).unchanged == 2
    # A file broken while the server runs: a one-line error for that collection, nothing written.
    (folder / f"{payments}.jsonl").write_text('{"name": "Quillfeather", "label": "X"}\n{"name": \n')
    changed = [(Document(source="launch", title="launch", text=DOCS["launch"] + "More.\n", kind="markdown"), "l")]
    with pytest.raises(ConfigurationError, match=r"\.jsonl:2: not JSON"):
        await ingestor.ingest_documents(changed, collection=payments)
    content = await runtime.postgres.pool.fetchval(
        "SELECT string_agg(c.content, ' ') FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE d.collection = $1 AND d.source = 'launch'", payments)
    assert "More." not in content and (await _labels(runtime, payments))["quillfeather"] == "PLATFORM"
    assert (await ingestor.ingest_documents(changed, collection=other)).updated == 1  # others go on


async def test_a_server_uploads_under_each_collections_glossary(runtime: Runtime, models: Any, tmp_path: Path,
                                                                 collection: str) -> None:
    """The REST API (the app `graphrag serve` runs): an upload takes its collection's glossary; a file
    broken while the server runs is a problem-details error for that collection, nothing written."""
    from tests.conftest import InProcessApi

    folder = tmp_path / "terms"
    folder.mkdir()
    _write(folder / f"{collection}.jsonl", [{"name": "Quillfeather", "label": "SERVICE"}])
    settings = runtime.settings.model_copy(update={"entity_terms": folder})
    other = f"{collection}_other"
    api = InProcessApi(settings, _models_with(models, settings))
    await asyncio.to_thread(api.__enter__)
    try:
        def upload(name: str, body: bytes) -> Any:
            with api.client() as client:
                return client.post("/documents", data={"collection": name},
                                   files={"file": ("launch.md", body, "text/markdown")})

        for name in (collection, other):
            r = await asyncio.to_thread(upload, name, DOCS["launch"].encode())
            assert r.status_code == 201, r.text
        assert (await _labels(runtime, collection))["quillfeather"] == "SERVICE"
        assert (await _labels(runtime, other)).get("quillfeather") != "SERVICE"  # no file, no default: NER's
        (folder / f"{collection}.jsonl").write_text('{"name": \n')
        r = await asyncio.to_thread(upload, collection, b"# Launch\n\nQuillfeather is new.\n")
        assert r.status_code == 500 and r.headers["content-type"].startswith("application/problem+json"), r.text
        assert ".jsonl:1: not JSON" in r.json()["detail"], r.json()
        assert await runtime.postgres.pool.fetchval(
            "SELECT count(*) FROM documents WHERE collection = $1", collection) == 1
        r = await asyncio.to_thread(upload, other, b"# Launch\n\nQuillfeather is new.\n")
        assert r.status_code == 201, r.text  # the other collection's ingests go on
    finally:
        await asyncio.to_thread(api.__exit__, None, None, None)


async def _ingest_under(runtime: Runtime, models: Any, path: Path, terms: list[dict[str, Any]],
                        docs: dict[str, str], collection: str) -> dict[str, str]:
    """Ingest ``docs`` (source -> Markdown) under a glossary of ``terms`` written to ``path``; the labels."""
    settings = runtime.settings.model_copy(update={"entity_terms": _write(path, terms)})
    ingestor = Ingestor(settings, runtime.postgres, runtime.neo4j, _models_with(models, settings))
    items = [(Document(source=name, title=name, text=text, kind="markdown"), name) for name, text in docs.items()]
    assert (await ingestor.ingest_documents(items, collection=collection)).ingested == len(docs)
    return await _labels(runtime, collection)


async def test_sharp_names_are_entities_of_their_own(runtime: Runtime, models: Any, tmp_path: Path,
                                                     collection: str) -> None:
    """A glossary may name C# and F# (keys "c#" and "f#", not "c" and "f"); a query naming one links to it."""
    terms = [{"name": "C#", "label": "TECH", "aliases": ["C Sharp"]}, {"name": "F#", "label": "TECH"}]
    docs = {"csharp": "# Classes\n\nC# compiles to IL. Roslyn is the C Sharp compiler of Vortigen Labs.\n",
            "fsharp": "# Pipelines\n\nF# pipes values with the forward operator of Quarrendale.\n",
            "c": "# Pointers\n\nC code passes pointers; Brannoch wrote this manual about C.\n"}
    labels = await _ingest_under(runtime, models, tmp_path / "terms.jsonl", terms, docs, collection)
    assert labels["c#"] == "TECH" and labels["f#"] == "TECH" and "f" not in labels
    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    graph = await rest_search(router, "What does F# do?", mode="graph", collections=[collection])
    assert {e["name"] for e in graph["graph_context"]["entities"]} >= {"F#"}
    assert [hit["source"] for hit in graph["results"]][:1] == ["fsharp"]
    assert graph["legs"]["graph"].get("confidence", 1.0) == 1.0, graph["legs"]["graph"]  # linked as a name
    alias = await rest_search(router, "Who makes the C Sharp compiler?", mode="graph", collections=[collection])
    assert [hit["source"] for hit in alias["results"]][:1] == ["csharp"]


def test_a_capital_letter_is_a_term_only_where_it_stands_alone(tmp_path: Path) -> None:
    """ "R" and "C" name languages: a glossary may list a capital letter as a name (matched as written),
    and only a letter that is a word of its own is a mention: not "R-squared", "C++" or "r"."""
    path = _write(tmp_path / "terms.jsonl", [{"name": "R", "label": "TECH", "aliases": ["GNU R"]},
                                             {"name": "C", "label": "TECH"}])
    assert [t.key for t in load_glossary(path).terms] == ["r", "c"]
    extractor = _extractor(Settings(entity_terms=path))
    chunks = ["We fit the models in R. R's plotting draws them (see the R manual), and GNU R is the same thing.",
              "The R-squared was 0.9 and r was 0.95; C++ and C# ran faster than x/R, but C itself was fastest.",
              "Nothing here names either: a plain sentence about Dr. R. Ellis and her kiln."]
    [ex] = extractor.extract_many([chunks])
    assert (ex.entities["r"].name, ex.entities["r"].label) == ("R", "TECH")
    assert ex.mentions[(0, "r")] == 4  # "in R.", "R's", "the R manual", "GNU R"
    assert (1, "r") not in ex.mentions and (2, "r") not in ex.mentions  # R-squared, r, x/R; the initial "R."
    assert ex.mentions[(1, "c")] == 1 and ex.entities["c"].label == "TECH"  # "C itself"; not C++ or C#


async def test_a_question_naming_a_one_letter_language_links_to_it(runtime: Runtime, models: Any, tmp_path: Path,
                                                                  collection: str) -> None:
    """A question's capital letter links to the glossary's one-letter entity, beside the other names
    it gives or without any; in a collection without such a term the letter links nothing."""
    terms = [{"name": "R", "label": "TECH"}, {"name": "C", "label": "TECH"}]
    docs = {"plots": "# Histograms\n\nIn R, the hist function draws a histogram of a numeric vector.\n",
            "pointers": "# Pointers\n\nC passes arrays to functions as pointers to their first element.\n",
            "quarto": "# Quarto\n\nQuarto renders notebooks of Python code into web pages.\n"}
    labels = await _ingest_under(runtime, models, tmp_path / "terms.jsonl", terms, docs, collection)
    assert labels["r"] == "TECH" and labels["c"] == "TECH"
    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    for question, source in [("how do i draw a histogram in R", "plots"),  # no name span: the query's grams
                             ("Can Quarto draw what R draws?", "plots"),  # beside the span "Quarto"
                             ("Why does C decay arrays?", "pointers")]:
        graph = await rest_search(router, question, mode="graph", collections=[collection])
        linked = {e["name"] for e in graph["graph_context"]["entities"]}
        assert {"R" if source == "plots" else "C"} <= linked, (question, linked)
        assert source in [hit["source"] for hit in graph["results"]][:2], (question, graph["results"])
        assert graph["legs"]["graph"].get("confidence", 1.0) == 1.0, graph["legs"]["graph"]  # linked as a name
    # Written in lower case, "r" names nothing: the walk starts from the keyword passages alone.
    lower = await rest_search(router, "how do i draw a histogram in r", mode="graph", collections=[collection])
    assert lower["legs"]["graph"]["confidence"] < 1.0, lower["legs"]["graph"]
