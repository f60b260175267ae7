"""Entities fit for technical text: name filters, code entities, label merge, boilerplate, plug-ins.

Pure logic is tested directly; what reaches the graph is tested against the real Neo4j."""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from graphrag.config import Settings
from graphrag.errors import ConfigurationError
from graphrag.ingest.extract import SpacyExtractor, add_title_entity, unify_labels
from graphrag.ingest.extractors import BoilerplateGate, Extractor, build_extractor, extract_options
from graphrag.ingest.pipeline import Ingestor
from graphrag.ingest.textprep import (
    boilerplate_flags,
    code_name,
    is_boilerplate,
    prose_view,
    prose_views,
    reject_name,
    repeated_chunks,
)
from graphrag.models import Entity, Extraction, Relation
from graphrag.runtime import Runtime

FRAGMENTS = ["= &v[0", "Refund(BaseModel", "Function]int", "Model Access](", "std::sync::{Arc", "x && y",
             "Rc::new(Nil", "Summary` on `Vec<T>", "Claude Desktop](https://claude.ai", "s1`</span", "C++,",
             "Appendix B][appendix_b]<!--", "world&quot", "r3 = &mut s"]
STRUCTURAL = ["Chapter 15", "Listing 8-6", "Listing", "Figure 15-3", "Section 5.6", "Chapters 1", "Appendix B"]
NAMES = ["Apple Inc.", "C++", "AT&T", "Procter & Gamble", "Hello, World!", "U.S.", "O'Reilly", "Rust",
         "RAG (Retrieval-Augmented Generation)", "pydantic_ai.models.test", "E0502"]

LICENCE = ("Permission is granted to copy, distribute and/or modify this document under the terms of the GNU Free "
           "Documentation License, Version 1.3 or any later version published by the Free Software Foundation; "
           "with no Invariant Sections, no Front-Cover Texts, and no Back-Cover Texts. A copy of the license is "
           "included in the section entitled GNU Free Documentation License.")

MARKDOWN = """# Smart pointers in Zyrtle

The `Rc<T>` type counts references, and `Rc::clone` adds one. A `String` owns its text; `String` is
not `Copy`. See [Chapter 4][ch4] and [the `Vec<T>` docs](https://example.org/vec) for more.
Listing 15-18 shows it.

```rust
fn main() {
    let a = Rc::new(Cons(5, Rc::new(Cons(10, Rc::new(Nil)))));
    let first = &v[0];
    let s = String::from("hello");
}
```

## Strings

Olga Brandt wrote that `String` values are UTF-8. Call `push_str` to append, and `push_str` again.

[ch4]: ch04-00-understanding-ownership.html
"""


# --- pure logic ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", FRAGMENTS)
def test_code_fragments_are_rejected(name: str) -> None:
    assert reject_name(name) == "fragment"


@pytest.mark.parametrize("name", STRUCTURAL)
def test_structural_references_are_rejected(name: str) -> None:
    assert reject_name(name) == "structure"


@pytest.mark.parametrize("name", NAMES)
def test_real_names_pass(name: str) -> None:
    assert reject_name(name) is None


def test_versions_are_rejected() -> None:
    assert reject_name("v0.1.0") == "version" and reject_name("1.2.3") == "version"


@pytest.mark.parametrize(("content", "expected"), [
    ("Rc<T>", ("Rc<T>", "Rc")), ("Rc::clone()", ("Rc::clone", "Rc::clone")), ("&str", ("str", "str")),
    ("println!", ("println!", "println")), ("OLLAMA_BASE_URL", ("OLLAMA_BASE_URL", "OLLAMA_BASE_URL")),
    ("pydantic-ai-slim", ("pydantic-ai-slim", "pydantic-ai-slim")), ("let x = 5;", None), ("self", None),
    ("x", None), ("s1", None), ('"blue"', None), ("100", None), ('String::from("hi")', None), ("a - b", None),
])
def test_code_name(content: str, expected: tuple[str, str] | None) -> None:
    assert code_name(content) == expected


def test_prose_view_drops_code_and_markup() -> None:
    view = prose_view(MARKDOWN)
    assert "fn main" not in view.text and "&v[0]" not in view.text and len(view.code_blocks) == 1
    assert "https://" not in view.text and "ch4" not in view.text and "](" not in view.text
    assert "Chapter 4" in view.text  # a link keeps its text
    assert "Smart pointers in Zyrtle." in view.text  # a heading ends as a sentence
    spans = [c for _, _, c in view.code_spans]
    assert spans[:3] == ["Rc<T>", "Rc::clone", "String"] and "Vec<T>" in spans
    assert all(view.text[s:e] == c for s, e, c in view.code_spans)


def test_prose_view_marks_the_text_of_links_to_other_pages() -> None:
    view = prose_view("See [Usage Limits](agent.md#usage-limits), [**Retries**](#retries) and [Chapter 4][ch4], "
                      "not [Acme](https://acme.example) or [`Agent`](agent.md).\n\n## [Models](models.md)")
    # Internal links (a relative path, an anchor, a reference) name a page or section of the same site.
    assert [view.text[a:b].strip() for a, b in view.links] == ["Usage Limits", "Retries", "Chapter 4", "Models"]
    assert "**" not in view.text and "Acme" in view.text and "Agent" in view.text
    assert all(view.text[s:e] == c for s, e, c in view.code_spans) and "\x01" not in view.text
    # A reference defined as another site's address is external, in the chunk or in another of the document.
    refs = "See [Acme][1], [Limits][lim] and [Retries][].\n\n[1]: https://acme.example\n[lim]: agent.md#limits"
    assert [prose_view(refs).text[a:b] for a, b in prose_view(refs).links] == ["Limits", "Retries"]
    first, _ = prose_views(["See [Acme][1] and [Limits][lim].", "More.\n\n[1]: <https://acme.example>"])
    assert [first.text[a:b] for a, b in first.links] == ["Limits"]
    # Emphasis next to a link stays where it was text ("2*n"), and goes where it marked the link.
    assert prose_view("2*[n](x.md) and foo_[bar](y.md)").text.startswith("2*n and foo_bar")


def test_one_block_state_reads_comments_and_fences_for_every_markdown_walk() -> None:
    from graphrag.ingest.textprep import BlockState

    state = BlockState()
    lines = ["Keep <!-- hidden", "still hidden", "hidden --> shown <!-- again", "not this --> end", "```py",
             "<!-- code -->", "```", "<!-- whole -->", "plain"]
    kinds = [(state.step(line), state.outside) for line in lines]
    assert [k for k, _ in kinds] == ["comment", "comment", "comment", "comment", "fence", "code", "code",
                                     "text", "text"]
    assert [o for k, o in kinds[:4]] == ["Keep ", None, " shown ", " end"]
    assert state.fence is None and not state.in_comment
    # The prose view NER reads keeps the text outside comments and sets the code aside.
    view = prose_view("\n".join(lines))
    assert "Keep" in view.text and "shown" in view.text and "end" in view.text and "plain" in view.text
    assert not any(word in view.text for word in ("hidden", "again", "not this", "code -->"))
    assert view.code_blocks == ["<!-- code -->"]


def test_licence_text_is_boilerplate_and_a_mention_is_not() -> None:
    assert is_boilerplate(LICENCE)
    assert not is_boilerplate("Zyrtle is MIT licensed; the `Rc<T>` type counts references to a value on the heap.")
    assert not is_boilerplate(MARKDOWN)


def test_repeated_chunks_across_documents() -> None:
    nav = "Keyboard shortcuts: press left or right to navigate between chapters"
    docs = [["own text one", nav], ["own text two", nav + "  "], ["own text three", nav], ["only here"]]
    assert repeated_chunks(docs, 3) == {nav}
    assert repeated_chunks(docs, 4) == set()


def test_unify_labels_takes_the_majority_label() -> None:
    ex = Extraction()
    ex.entities = {"rust|ORG": Entity("rust|ORG", "Rust", "ORG"), "rust|PERSON": Entity("rust|PERSON", "Rust", "PERSON"),
                   "cargo|PRODUCT": Entity("cargo|PRODUCT", "Cargo", "PRODUCT")}
    ex.mentions = {(0, "rust|ORG"): 2, (1, "rust|ORG"): 1, (1, "rust|PERSON"): 1, (1, "cargo|PRODUCT"): 1}
    ex.relations = {("cargo|PRODUCT", "rust|PERSON"): Relation("cargo|PRODUCT", "rust|PERSON", {1: 1}, {("use", 1)}),
                    ("cargo|PRODUCT", "rust|ORG"): Relation("cargo|PRODUCT", "rust|ORG", {1: 2})}
    out = unify_labels(ex)
    assert {k: e.label for k, e in out.entities.items()} == {"rust": "ORG", "cargo": "PRODUCT"}
    assert out.mentions == {(0, "rust"): 2, (1, "rust"): 2, (1, "cargo"): 1}
    [rel] = out.relations.values()
    assert (rel.source, rel.target, rel.chunk_weights, rel.predicates) == ("cargo", "rust", {1: 3}, {("use", 1)})
    assert unify_labels(out).entities == out.entities  # idempotent


# --- the spaCy extractor (the real model, no stores) -------------------------------------------

@pytest.fixture(scope="module")
def spacy_extractor() -> SpacyExtractor:
    settings = Settings()
    return SpacyExtractor(settings.spacy_model, extract_options(settings))


def test_code_spans_label_a_name_code_in_the_whole_document(spacy_extractor: SpacyExtractor) -> None:
    chunks = [MARKDOWN, "Olga Brandt says String and Rc are the first smart pointers to learn in Zyrtle."]
    [ex] = spacy_extractor.extract_many([chunks])
    labels = {e.name: e.label for e in ex.entities.values()}
    assert labels.get("Rc<T>") == "CODE" and labels.get("Rc::clone") == "CODE"
    assert labels.get("String") == "CODE"  # also in the second chunk's prose, where NER may say PERSON
    assert (1, "string") in ex.mentions  # the prose mention joined the code entity
    assert not any(reject_name(e.name) for e in ex.entities.values() if e.label != "CODE")
    assert "push_str" in {e.name for e in ex.entities.values()}  # a plain identifier seen in 2 chunks
    # Code blocks yield no names of their own, but the document's identifiers count as mentions there.
    assert not any("Cons(" in e.name or "&v" in e.name for e in ex.entities.values())


def test_a_name_found_only_in_a_heading_is_the_sections_topic(spacy_extractor: SpacyExtractor) -> None:
    chunks = ["## CLI Usage\n\nThe usage of the tool is simple: run it with `tool` and `path`, or `-v`.",
              "## Different Errors\n\nSome errors stop the run and others are retried by Olga Brandt's code.",
              "## Apache Kafka\n\nThe broker keeps the events in order.",
              "## Zyrtle Labs\n\nZyrtle Labs ships the broker to Norway."]
    [ex] = spacy_extractor.extract_many([chunks])
    labels = {e.name: e.label for e in ex.entities.values()}
    # Found only in a heading whose head word the document writes in lower case: the section's topic
    # (a question about the section links to it), whatever NER took it for.
    assert labels["CLI Usage"] == "TOPIC" and labels["Different Errors"] == "TOPIC"
    assert labels["Apache Kafka"] != "TOPIC"  # only in a heading, but nothing in it is a common word here
    assert labels["Zyrtle Labs"] != "TOPIC" and ex.mentions[(3, "zyrtle labs")] == 2  # heading and text count
    assert prose_view("## CLI Usage\n\nText.").headings == [(0, 9)]
    # Only in documents with code: in other prose a heading "General Electric" is as likely a name.
    [prose] = spacy_extractor.extract_many([["## General Electric\n\nThe company makes electric motors "
                                              "in Schenectady, New York."]])
    assert all(e.label != "TOPIC" for e in prose.entities.values())


def test_a_block_title_of_common_words_is_not_a_name(spacy_extractor: SpacyExtractor) -> None:
    # FastAPI's "/// info | Technical Details" asides, shown as a line in bold: the model's ORG on many pages.
    chunks = ["**Technical Details**\nThe worker runs `a()`, `b()` and `c()` in order.",
              "**Olga Brandt**\nThe team ships the broker to Norway.",
              "**Zyrtle Labs**\nZyrtle Labs ships the broker.", "**Swagger UI**\nThe page lists the routes.",
              "**Tab 1**\nLorem ipsum dolor sit amet, consectetur adipiscing elit."]
    [ex] = spacy_extractor.extract_many([chunks])
    labels = {e.name: e.label for e in ex.entities.values()}
    # Found only in a block's title: an aside's label, not a name (the model's ORG, PERSON; "Tab 1." with
    # the period the title ends its sentence with).
    assert "Technical Details" not in labels and "Olga Brandt" not in labels, labels
    assert not any(name.startswith("Tab") for name in labels), labels
    # A title the text names too, or a technology's name, stays.
    assert {"Zyrtle Labs", "Norway"} <= set(labels) and labels.get("Swagger UI") == "TECH", labels


def test_a_sentence_set_in_bold_keeps_its_names(spacy_extractor: SpacyExtractor) -> None:
    # A line wholly in bold is a title only when it reads as one (80 characters at most, not ending as a
    # sentence), in Markdown as in HTML: a warning or a thank-you set in bold is text, and names its people.
    from graphrag.ingest.textprep import prose_view, reads_as_bold_title

    warning = "**Do not deploy the broker before Olga Brandt has signed the release in Oslo.**"
    assert not reads_as_bold_title(warning.strip("*")) and reads_as_bold_title("Olga Brandt")
    assert prose_view(warning + "\nThe broker runs nightly.").titles == []
    [ex] = spacy_extractor.extract_many([[warning + "\nThe broker runs nightly."]])
    labels = {e.name: e.label for e in ex.entities.values()}
    assert labels.get("Olga Brandt") == "PERSON", labels


LOREM_PAGE = ("# Grids\n\nOlga Brandt of Brannoch Systems designed the card grid.\n\n"
              "Lorem ipsum dolor sit amet, consectetur adipiscing elit. Nulla et euismod nulla. Curabitur "
              "feugiat, tortor non consequat finibus, justo purus auctor massa, nec semper lorem quam in massa. "
              "Donec dictum ut ligula et hendrerit. Pellentesque habitant morbi tristique senectus et netus.\n\n"
              "Phasellus Brannoch Systems uses the grid in Norway.\n")


def test_placeholder_text_names_nothing(spacy_extractor: SpacyExtractor) -> None:
    # Material for MkDocs' examples: the model read "Donec", "Nulla" and "massa" in lorem ipsum as names.
    from graphrag.ingest.language import placeholder

    assert placeholder("Donec dictum ut ligula et hendrerit.") and placeholder("Lorem ipsum dolor sit amet.")
    for prose in ("Use sed to edit the massa file in place.", "Magna Carta was sealed in 1215.",
                  "The tempor and dolor settings.", "Phasellus Brannoch Systems uses the grid in Norway."):
        assert not placeholder(prose), prose
    [ex] = spacy_extractor.extract_many([[LOREM_PAGE]])
    names = {e.name for e in ex.entities.values()}
    assert {"Olga Brandt", "Brannoch Systems", "Norway"} <= names, names
    lorem = {"lorem", "ipsum", "nulla", "curabitur", "donec", "pellentesque", "massa", "tortor", "ligula"}
    assert not any(set(n.lower().split()) & lorem for n in names), names
    # A text whose only lorem is one short sentence is checked too (three words, as a sentence needs):
    # the model read "Aenean" and "diam" as names.
    [short] = spacy_extractor.extract_many([["# Cards\n\nOlga Brandt designed the card grid.\n\n"
                                              "Aenean in finibus diam.\n\nSee `grid()`, `card()` and `x()`.\n"]])
    names = {e.name for e in short.entities.values()}
    assert "Olga Brandt" in names and not names & {"Aenean", "diam", "Aenean in finibus diam"}, names


PACKAGE_PAGE = ("# Getting started\n\nOlga Brandt wrote Quellmark Flow for Brannoch Systems. Install it:\n\n"
                "```bash\npip install \"quellmark-flow>=1.0\"\n```\n\n```python\nfrom quellmark_flow import Pump\n"
                "pump = Pump(\"seal\")\n```\n\nQuellmark Flow primes `pump.run()` and `pump.stop()` in order. "
                "Quellmark Flow ships from Norway.\n")


def test_a_name_the_code_imports_or_installs_is_a_technology(spacy_extractor: SpacyExtractor) -> None:
    # pydantic-ai's docs: the model tagged "Pydantic AI" LOC, where the code imports pydantic_ai.
    from graphrag.ingest.extract import packages_in

    assert packages_in('pip install "pydantic-ai>=1.0" logfire[fastapi]\nnpm install -D vitest') == {
        "pydanticai", "logfire", "vitest"}
    assert packages_in("from pydantic_ai import Agent\nimport numpy as np\nimport React from 'react'") == {
        "pydanticai", "numpy", "react"}
    [ex] = spacy_extractor.extract_many([[PACKAGE_PAGE]])
    labels = {e.name: e.label for e in ex.entities.values()}
    assert labels.get("Quellmark Flow") == "TECH", labels
    assert labels.get("Olga Brandt") == "PERSON" and labels.get("Norway") == "GPE", labels
    # Without the code the name keeps the model's label.
    [plain] = spacy_extractor.extract_many([[PACKAGE_PAGE.split("```")[0] + PACKAGE_PAGE.split("```")[-1]]])
    assert {e.name: e.label for e in plain.entities.values()}.get("Quellmark Flow") != "TECH"


def test_a_name_found_only_as_a_link_to_a_section_is_its_topic(spacy_extractor: SpacyExtractor) -> None:
    chunks = ["Limits on a run: `UsageLimits` caps requests, and `run_sync` checks them with `agent.run`; see "
              "[Usage Limits](agent.md#usage-limits). The limits apply to every tool.",
              "The team wrote it with Olga Brandt in Norway."]
    [ex] = spacy_extractor.extract_many([chunks])
    labels = {e.name: e.label for e in ex.entities.values()}
    assert labels["Usage Limits"] == "TOPIC"  # the model's ORG: the title of the section the link goes to
    assert labels["Olga Brandt"] == "PERSON" and labels["Norway"] == "GPE"


def test_a_name_the_document_also_writes_in_lower_case_is_a_concept(spacy_extractor: SpacyExtractor) -> None:
    graphics = ["## Turtle Graphics\n\nThe Turtle Graphics module draws on a canvas. Call `forward` and `left`.",
                "Many languages ship turtle graphics, and `turtle.done()` ends the program.",
                "The Zyrtle Labs team at Acme Robotics wrote it in Norway."]
    types = ["Integer Types are listed below. Olga Brandt wrote that integer types differ in size."]
    capitals_only = ["Integer Types are listed below. Olga Brandt wrote that they differ in size."]
    league = ["Tottenham won the FA Cup and the Football League twice. A football league is a competition."]
    found = spacy_extractor.extract_many([graphics, types, capitals_only, league])
    labels = [{e.name: e.label for e in ex.entities.values()} for ex in found]
    # The model calls them ORG and PERSON; the document's own lower-case writing says they are terms.
    assert labels[0]["Turtle Graphics"] == "CONCEPT" and labels[1]["Integer Types"] == "CONCEPT"
    # Names written only with capitals keep the model's label, and proper names are left alone.
    assert labels[2]["Integer Types"] == "PERSON"
    assert labels[0]["Acme Robotics"] == "ORG" and labels[1]["Olga Brandt"] == "PERSON"
    # "the Football League" in running text is the name of one thing, though "a football league" is not.
    assert labels[3]["Football League"] == "ORG"


def test_a_list_of_names_tagged_as_one_is_split_in_documents_with_code(spacy_extractor: SpacyExtractor) -> None:
    code = "Call `client.send()` and `client.close()`, then `run()`.\n\n"
    listed = ("It was used by Mozilla, Red Hat and Eventbrite in production. Acme, Inc. sells the pumps. The "
              "program is called Hello, World! and it runs.")
    pair = "We thank Webargs and Marshmallow for the ideas. The team read Structure and Interpretation of Computer Programs."
    found = spacy_extractor.extract_many([
        [code + listed], [listed], [code + "It parses with `Webargs` and with `Marshmallow`.", pair], [code + pair]])
    names = [{e.name for e in ex.entities.values()} for ex in found]
    # The model tags the list as one ORG; with code around, it is three names, related to each other.
    assert {"Mozilla", "Red Hat", "Eventbrite", "Acme, Inc.", "Hello, World!"} <= names[0], names[0]
    assert "Mozilla, Red Hat and Eventbrite" not in names[0]
    assert {("eventbrite", "mozilla"), ("mozilla", "red hat")} <= set(found[0].relations)
    # In prose without code such a list is as often one name (a band, a publisher): left whole.
    assert "Mozilla, Red Hat and Eventbrite" in names[1], names[1]
    # "A and B" is split only where each side is a name of its own in the document.
    assert {"Webargs", "Marshmallow", "Structure and Interpretation of Computer Programs"} <= names[2], names[2]
    assert "Webargs and Marshmallow" not in names[2] and "Webargs and Marshmallow" in names[3], names[3]


def test_keyphrases_need_to_recur(spacy_extractor: SpacyExtractor) -> None:
    text = "The borrow checker rejects the program. Reference counting keeps values alive."
    [ex] = spacy_extractor.extract_many([[text, text.replace("rejects", "accepts"), text, "Nothing else here."]])
    assert ("borrow checker", "CONCEPT") in {(e.name, e.label) for e in ex.entities.values()}
    [once] = spacy_extractor.extract_many([[text, "Nothing else here."]])
    assert "borrow checker" not in once.entities


def _nodes(extractor: SpacyExtractor) -> list[Any]:
    return [node for _, pipe in extractor.nlp.pipeline if hasattr(pipe, "model") for node in pipe.model.walk()]


def test_products_go_through_numpy_blas_on_one_thread_with_the_same_extraction() -> None:
    from thinc.api import NumpyOps
    from threadpoolctl import threadpool_info

    settings = Settings(extraction_precision="float32")
    spacy_extractor = SpacyExtractor(settings.spacy_model, extract_options(settings))
    nodes = _nodes
    assert nodes(spacy_extractor) and not any(n.ops.use_blis for n in nodes(spacy_extractor))
    assert {lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"} == {1}
    # The same entities, mentions and relations as with thinc's default (BLIS) products.
    blis = SpacyExtractor(settings.spacy_model, extract_options(settings))
    for node in nodes(blis):
        node.ops = NumpyOps()
    assert all(n.ops.use_blis for n in nodes(blis))
    texts = [["Marie Curie worked with Pierre Curie at the University of Paris in France.",
              "Google and Microsoft compete with Amazon Web Services in Seattle and New York."],
             ["The World Health Organization met in Geneva with officials from Brazil and India."]]

    def summary(exs: list[Extraction]) -> list[tuple[object, ...]]:
        return [(sorted((k, e.label) for k, e in ex.entities.items()), sorted(ex.mentions.items()),
                 sorted((k, sorted(r.chunk_weights.items()), sorted(r.predicates)) for k, r in ex.relations.items()))
                for ex in exs]

    mine = spacy_extractor.extract_many(texts)
    assert {"marie curie", "google", "geneva"} <= {k for ex in mine for k in ex.entities}
    assert summary(mine) == summary(blis.extract_many(texts))


def test_bfloat16_products_run_the_large_layers_in_bfloat16_and_find_the_same_names(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With ``GRAPHRAG_EXTRACTION_PRECISION=bfloat16`` the token-to-vector layers multiply in
    bfloat16 (PyTorch), the small products stay float32, the vectors stay close to float32's, and
    plain names come out as with float32 products; ``auto`` follows the CPU's bfloat16 support."""
    import numpy as np
    import torch

    from graphrag.ingest import extract as extract_module
    from graphrag.ingest.embed import cpu_has_native_bf16

    model = Settings().spacy_model
    precise = SpacyExtractor(model, extract_options(Settings(extraction_precision="float32")))
    rounded = SpacyExtractor(model, extract_options(Settings(extraction_precision="bfloat16")))
    assert extract_options(Settings()).precision == ("bfloat16" if cpu_has_native_bf16() else "float32")
    with pytest.raises(ConfigurationError, match="GRAPHRAG_EXTRACTION_PRECISION"):
        extract_options(Settings(extraction_precision="half"))
    ops_class = extract_module._bfloat16_ops_class()
    assert all(isinstance(n.ops, ops_class) for n in _nodes(rounded))
    assert not any(isinstance(n.ops, ops_class) for n in _nodes(precise))
    dtypes: list[torch.dtype] = []
    real_mm = torch.mm

    def counting_mm(a: Any, b: Any) -> Any:
        dtypes.append(a.dtype)
        return real_mm(a, b)

    text = ("Marie Curie worked with Pierre Curie at the University of Paris in France. "
            "The World Health Organization met in Geneva with officials from Brazil and India. ") * 6
    with monkeypatch.context() as patch:
        patch.setattr(torch, "mm", counting_mm)
        doc = next(iter(rounded.parse([text])))
    assert dtypes and set(dtypes) == {torch.bfloat16}
    reference = next(iter(precise.parse([text])))
    a, b = doc.tensor, reference.tensor
    cosine = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert not np.array_equal(a, b) and float(cosine.min()) > 0.99
    assert ({(k, e.label) for k, e in rounded.extract_many([[text]])[0].entities.items()}
            == {(k, e.label) for k, e in precise.extract_many([[text]])[0].entities.items()})


# --- the registry ------------------------------------------------------------------------------

class UpperExtractor:
    """A plug-in for the registry test: every capitalised word is a THING, labels by document."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def extract_many(self, documents: Sequence[Sequence[str]]) -> list[Extraction]:
        out = []
        for texts in documents:
            ex = Extraction()
            for i, text in enumerate(texts):
                for word in re.findall(r"[A-Z]\w+", text):
                    if word:
                        label = "PERSON" if "person" in text else "ORG"
                        key = f"{word.lower()}|{label}"
                        ex.entities.setdefault(key, Entity(key, word, label))
                        ex.mentions[(i, key)] = ex.mentions.get((i, key), 0) + 1
            out.append(ex)
        return out


def test_registry_builds_spacy_llm_and_plugins(spacy_extractor: SpacyExtractor) -> None:
    assert build_extractor(Settings(), spacy_extractor).inner is spacy_extractor
    plugin = build_extractor(Settings(extractor="tests.integration.test_entities:UpperExtractor"), spacy_extractor)
    assert isinstance(plugin.inner, UpperExtractor) and isinstance(plugin.inner, Extractor)
    [ex] = plugin.extract_many([["Zyrtle ships Quarn.", LICENCE]])
    assert set(ex.entities) == {"zyrtle", "quarn"}  # keyed by name; the licence chunk was blanked
    with pytest.raises(ConfigurationError, match="GRAPHRAG_EXTRACTOR"):
        build_extractor(Settings(extractor="nope"), spacy_extractor)
    with pytest.raises(ConfigurationError, match="cannot import"):
        build_extractor(Settings(extractor="tests.integration.test_entities:Missing"), spacy_extractor)
    with pytest.raises(ConfigurationError, match="LLM_EXTRACTOR_MODEL"):
        build_extractor(Settings(extractor="llm"), spacy_extractor)


# --- against the real stores -------------------------------------------------------------------

async def _entities(rt: Runtime, collection: str) -> dict[str, tuple[str, str, int]]:
    rows, _, _ = await rt.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.key AS key, e.name AS name, e.label AS label, "
        "e.mentions AS mentions", c=collection)
    return {r["key"]: (r["name"], r["label"], r["mentions"]) for r in rows}


async def test_code_fragment_names_never_become_entities(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                                         collection: str) -> None:
    (tmp_path / "pointers.md").write_text(MARKDOWN + "\n\n## Licence\n\n" + LICENCE + "\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 1 and not report.failed
    entities = await _entities(runtime, collection)
    names = {name for name, _, _ in entities.values()}
    assert entities and not names & set(FRAGMENTS)
    for name, label, _ in entities.values():
        assert label == "CODE" or reject_name(name) is None, name  # code names are checked by code_name
        assert "(" not in name or ")" in name, name
    assert entities["rc"][:2] == ("Rc<T>", "CODE") and entities["string"][1] == "CODE"
    assert not any(name.startswith(("Listing", "Chapter")) for name in names)
    # The licence section is boilerplate: its names stay out of the graph.
    assert not {"Free Software Foundation", "Invariant Sections", "GNU Free Documentation License"} & names


async def test_title_case_terms_and_link_titles_reach_the_graph_with_their_labels(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> None:
    (tmp_path / "graphics.md").write_text(
        "# Drawing\n\nThe Turtle Graphics module draws on a canvas. Call `forward` and `left`.\n\n"
        "Many languages ship turtle graphics, and `turtle.done()` ends the program. Limits on a run: "
        "`UsageLimits` caps requests; see [Usage Limits](agent.md#usage-limits). The limits apply to every "
        "tool. The API is served by the CLI.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 1 and not report.failed
    entities = await _entities(runtime, collection)
    # The model's ORGs: a term the document also writes in lower case, the title of a linked section,
    # and computing's acronyms in a document with code.
    assert entities["turtle graphics"][:2] == ("Turtle Graphics", "CONCEPT")
    assert entities["usage limits"][:2] == ("Usage Limits", "TOPIC")
    assert {entities[k][1] for k in ("api", "cli") if k in entities} == {"TECH"}


async def test_one_name_is_one_entity_per_collection_with_the_majority_label(
        tmp_path: Path, runtime: Runtime, models: object, collection: str) -> None:
    plugged = copy.copy(models)
    plugged.extractor = BoilerplateGate(UpperExtractor(runtime.settings))  # type: ignore[attr-defined]
    ingestor = Ingestor(runtime.settings, runtime.postgres, runtime.neo4j, plugged)  # type: ignore[arg-type]
    (tmp_path / "a.txt").write_text("Rust and Cargo. Rust again. Rust.")  # ORG x3
    (tmp_path / "b.txt").write_text("a person: Rust.")  # PERSON x1
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 2 and not report.failed
    entities = await _entities(runtime, collection)
    assert entities["rust"] == ("Rust", "ORG", 2)  # one entity, mentioned by both documents' chunks
    assert not any(k.startswith("rust|") for k in entities)
    # The label follows the evidence: more PERSON mentions tip it, deleting them tips it back.
    (tmp_path / "c.txt").write_text("person Rust. Rust, Rust, Rust, Rust.")
    await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (await _entities(runtime, collection))["rust"][1] == "PERSON"
    assert await ingestor.delete(collection=collection, source=str((tmp_path / "c.txt").resolve())) == 1
    assert (await _entities(runtime, collection))["rust"][1] == "ORG"


async def test_a_list_of_names_reaches_the_graph_as_its_names(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                                               collection: str) -> None:
    (tmp_path / "history.md").write_text(
        "# History\n\nThe client grew out of `zentrovia.send()`, `zentrovia.close()` and `zentrovia.run()`.\n\n"
        "It was used by Mozilla, Red Hat and Eventbrite in production.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 1 and not report.failed
    entities = await _entities(runtime, collection)
    assert {"mozilla", "red hat", "eventbrite"} <= set(entities), entities
    assert not any("," in name for name, _, _ in entities.values()), entities
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (a:Entity {collection: $c, key: 'mozilla'})-[:RELATED_TO]-(b:Entity {collection: $c}) "
        "RETURN collect(b.key) AS keys", c=collection)
    assert {"red hat", "eventbrite"} <= set(rows[0]["keys"]), rows


async def test_placeholder_text_leaves_no_names_in_the_graph(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                                              collection: str) -> None:
    (tmp_path / "grids.md").write_text(LOREM_PAGE)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 1 and not report.failed
    entities = await _entities(runtime, collection)
    assert {"olga brandt", "brannoch systems", "norway"} <= set(entities), entities
    assert not {"donec", "nulla", "curabitur", "massa", "pellentesque", "lorem ipsum"} & set(entities), entities
    # The text itself stays: it is what the page shows.
    [content] = [r["content"] for r in await runtime.postgres.pool.fetch(
        "SELECT content FROM chunks WHERE collection = $1", collection)]
    assert "Donec dictum ut ligula" in content


async def test_a_package_name_reaches_the_graph_as_a_technology(tmp_path: Path, ingestor: Ingestor,
                                                                 runtime: Runtime, collection: str) -> None:
    (tmp_path / "start.md").write_text(PACKAGE_PAGE)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 1 and not report.failed
    entities = await _entities(runtime, collection)
    assert entities["quellmark flow"][1] == "TECH" and entities["olga brandt"][1] == "PERSON", entities


def test_a_licence_section_is_boilerplate_as_a_whole() -> None:
    prose = "The borrow checker compares scopes to decide whether all borrows are valid in Zyrtle."
    weak = "A Secondary Section is a named appendix of the Document that deals with the publishers."
    three = [prose] * 3
    assert boilerplate_flags([*three, LICENCE, weak, LICENCE, *three]) == [False] * 3 + [True] * 3 + [False] * 3
    assert boilerplate_flags([*three, LICENCE, "Closing words by the authors."]) == [False] * 3 + [True, False]
    assert boilerplate_flags([LICENCE, weak, LICENCE, weak]) == [True] * 4  # a licence document


async def test_numbered_specifications_are_one_entity_each_and_a_pep_page_is_its_own(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> None:
    """"PEP 9001" is one SPEC entity in the page that is PEP 9001 (from its header's title, with the title's
    subject as an alias) and in the pages that cite it, whatever the spelling; "this PEP" is no entity."""
    (tmp_path / "pep-9001.rst").write_text(
        "PEP: 9001\nTitle: Quorvath Lazy Loading\nAuthor: Jane Doe <jane@example.org>\nStatus: Draft\n\n"
        "Abstract\n========\n\nThis PEP proposes that Quorvath loads modules lazily, as RFC 9110 caches do.\n")
    (tmp_path / "notes.md").write_text(
        "# Notes\n\nThe Quorvath team adopted PEP-9001 last year, and PEP9001 loading is now the default.\n\n"
        "Marta Ilves reviewed PEP 9001 against RFC 9110 and the PEP process.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (2, []), report
    entities = await _entities(runtime, collection)
    assert entities["pep 9001"][:2] == ("PEP 9001", "SPEC") and entities["rfc 9110"][:2] == ("RFC 9110", "SPEC")
    assert "pep" not in entities and not any(name.startswith("PEP 9001 –") for name, _, _ in entities.values())
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c, key: 'pep 9001'})<-[:MENTIONS]-(:Chunk)<-[:HAS_CHUNK]-(d:Document) "
        "RETURN DISTINCT d.title AS title, e.aliases AS aliases", c=collection)
    assert {r["title"] for r in rows} == {"PEP 9001 – Quorvath Lazy Loading", "Notes"}
    assert rows[0]["aliases"] == ["Quorvath Lazy Loading"]


SPEC_PAGE = """# Build frontends

Explicit markup (like XML or TeX) is widely considered unreadable by the uninitiated.

If the name is not found there, the builtin namespace is searched.

"Exception" is to be used when none of the other suffixes are proper to use and no specific suffix is a better fit.

Front ends SHOULD check explicitly for requirement cycles, and terminate the build with an informative message.

But whatever mechanism is used MUST meet the following criteria, as Guido van Rossum wrote from Amsterdam.
"""


async def test_words_in_lower_case_and_requirement_keywords_are_not_names(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> None:
    """The model reads "markup" as a PERSON, "builtin" as a NORP and "suffix" as a GPE, and a
    specification's "SHOULD" and "MUST" as ORGs: none of them names anything."""
    (tmp_path / "frontends.md").write_text(SPEC_PAGE)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 1 and not report.failed
    entities = await _entities(runtime, collection)
    assert not {"markup", "builtin", "suffix", "should", "must"} & set(entities), entities
    assert entities["guido van rossum"][1] == "PERSON" and entities["amsterdam"][1] == "GPE", entities


PROPOSAL = """# PEP 9001 – Harbour Tide Tables

## Overview

## Background

PEP 472 was opened in 2014 by Olga Brandt. The proposal detailed various use cases of the tide tables
and was created from a broad discussion on the harbour mailing list, although no clear consensus was
reached on which table layout should be used in Quellport.

## Rejected Ideas

The Zyrtle Labs team proposed printed tables instead.

## Version History

- 2024-02-01: the first draft.
"""


def test_section_titles_are_no_entities(spacy_extractor: SpacyExtractor) -> None:
    """The small model reads "Motivation" as an ORG and "Rejected Ideas" as a PERSON: a part of the
    document, which would link every proposal with such a section."""
    first, *sections = PROPOSAL.split("\n\n## ")
    [ex] = spacy_extractor.extract_many([[first, *("## " + s for s in sections)]])
    names = {e.key for e in ex.entities.values()}
    assert not {"overview", "background", "rejected ideas", "version history"} & names, names  # "Version History" PERSON
    assert "olga brandt" in names and "zyrtle labs" in names, names
    overview = Extraction()
    assert add_title_entity(overview, "Overview") is None and add_title_entity(overview, "Quellport Harbour") == "quellport harbour"


async def test_section_titles_do_not_reach_the_graph(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                                      collection: str) -> None:
    for number in (1, 2):
        (tmp_path / f"pep-900{number}.md").write_text(PROPOSAL.replace("9001", f"900{number}"))
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 2 and not report.failed
    entities = await _entities(runtime, collection)
    assert not {"overview", "background", "rejected ideas", "version history"} & set(entities), entities
    assert "olga brandt" in entities, entities
