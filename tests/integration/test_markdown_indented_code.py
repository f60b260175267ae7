"""Markdown's indented code blocks read as code: fenced by the loader, so the chunker keeps them whole and the
graph does not take their identifiers for names; indentation that Markdown's extensions (lists,
admonitions, tabs, definitions, footnotes, HTML blocks) or an indented paragraph use stays as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphrag.ingest.chunk import Chunker, ChunkOptions
from graphrag.ingest.load import Found, load_file, load_text_document
from graphrag.ingest.pipeline import Ingestor
from graphrag.ingest.textprep import fence_indented_code
from graphrag.runtime import Runtime
from graphrag.search.router import SearchRouter
from tests.helpers import rest_search


@pytest.mark.parametrize(("source", "expected"), [
    # after a blank line, and right under a heading; a tab counts as four columns; blank lines inside stay
    ("Intro:\n\n    x = load(path)\n\n    y = x + 1\n\nAfter.\n", "Intro:\n\n```\nx = load(path)\n\ny = x + 1\n```\n\nAfter.\n"),
    ("## Usage\n    $ quill run\n", "## Usage\n```\n$ quill run\n```\n"),
    ("Text.\n\n\tint main() {\n\t\treturn 0;\n\t}\n", "Text.\n\n```\nint main() {\n\treturn 0;\n}\n```\n"),
    # a code block showing a fence gets a longer one
    ("See:\n\n    input.md:\n    ```js\n    a()\n    ```\n", "See:\n\n````\ninput.md:\n```js\na()\n```\n````\n"),
])
def test_indented_code_blocks_are_fenced(source: str, expected: str) -> None:
    assert fence_indented_code(source) == expected


@pytest.mark.parametrize("source", [
    "Paragraph\n    continued lazily = not code\n",  # cannot interrupt a paragraph
    "- item\n\n    continuation = of the item\n",  # list continuation
    "1. step\n\n        nested_code(x)\n\n    more = item text\n",  # code inside a list item
    '!!! note "Heads up"\n\n    The admonition = its body\n',  # MkDocs admonition
    '=== "pip"\n\n    pip install quill\n',  # content tab
    "Term\n:   The definition = its text\n\n    more(definition)\n",  # definition list
    "Term\n\n:    A statement of two parts:\n\n    1. header = a keyword\n",  # Pandoc's, the colon spaced wide
    "[^1]: A footnote.\n\n    Its second paragraph(x).\n",  # footnote
    "<div>\n\n    <b>inside = html</b>\n\n</div>\n".replace("\n\n    <b>", "\n    <b>"),  # open HTML block
    "<pre>\n\n    kept = as is\n</pre>\n",  # raw HTML block across a blank line
    "  <pre>\n\n    x = 1\n  </pre>\n", "<?php\n\n    echo 1;\n?>\n", "<![CDATA[\n\n    raw()\n]]>\n",  # more HTML blocks
    "```\n\n    inside = a fence\n```\n",  # already code
    "Text.\n\n    ```js\n    a()\n    ```\n",  # an indented fence: left to the fence rules, code either way
    "<!--\n\n    a = commented\n-->\n",  # an HTML comment
    # an indented paragraph of sentences stays prose
    "Notes:\n\n    The broker keeps every message until all of its readers have acknowledged it.\n",
])
def test_indentation_used_for_something_else_is_left_as_it_is(source: str) -> None:
    assert fence_indented_code(source) == source


def test_indented_code_is_one_chunk_and_code_to_the_extractor(tmp_path: Path, models: Any) -> None:
    from graphrag.ingest.textprep import prose_views

    listing = "\n".join(f"    wellington_{i} = Auckland.connect(port={8000 + i})" for i in range(12))
    (tmp_path / "guide.md").write_text(f"# Guide\n\nConnect the nodes.\n\n{listing}\n\nThen restart.\n")
    [doc] = load_file(Found(tmp_path / "guide.md", "md"), 1 << 20)
    chunks = Chunker(models.counter, ChunkOptions(budget=200, overlap_tokens=0)).chunk(doc)
    [code] = [c for c in chunks if "wellington_0" in c.text]
    assert code.has_code and "wellington_11" in code.text and code.text.count("```") == 2
    views = prose_views([c.text for c in chunks])
    assert all("Auckland" not in v.text for v in views)
    assert any("Auckland.connect" in b for v in views for b in v.code_blocks)
    # a notebook's Markdown cells, each on its own, and text handed in as Markdown are read the same way;
    # plain text is not
    import json

    cells = [{"cell_type": "markdown", "source": ["- a list item\n"]},
             {"cell_type": "markdown", "source": ["    shown_as_code(x)\n"]}]
    (tmp_path / "nb.ipynb").write_text(json.dumps({"nbformat": 4, "metadata": {}, "cells": cells}))
    [notebook] = load_file(Found(tmp_path / "nb.ipynb", "ipynb"), 1 << 20)
    assert notebook.text == "- a list item\n\n```\nshown_as_code(x)\n```\n"
    heading = {"nbformat": 3, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "heading", "level": 2, "source": ["    Indented title"]}]}]}
    (tmp_path / "old.ipynb").write_text(json.dumps(heading))
    assert load_file(Found(tmp_path / "old.ipynb", "ipynb"), 1 << 20)[0].text == "## Indented title\n"
    assert "```" in load_text_document("Intro.\n\n    run(x)\n", source="s").text
    assert "```" not in load_text_document("Intro.\n\n    run(x)\n", source="s", kind="text").text


async def test_indented_code_stays_out_of_the_graph_and_is_found_whole(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, models: Any, collection: str) -> None:
    (tmp_path / "cluster.md").write_text(
        "# Cluster setup\n\nThe Glimmerbank cluster is run by Oriana Valcourt in Tasmania.\n\n"
        "    cluster = Ravensworth.open(region=\"Patagonia\")\n    cluster.join(Kestrel)\n\nDone.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.name AS name, e.label AS label", c=collection)
    names = {r["name"]: r["label"] for r in rows}
    assert "Oriana Valcourt" in names and "Patagonia" not in names and "Kestrel" not in names, names
    router = SearchRouter(runtime.postgres, runtime.neo4j, models.embedder, models.nlp)
    response = await rest_search(router, "Kestrel", mode="keyword", limit=3, collections=[collection])
    top = response["results"][0]
    assert "```\ncluster = Ravensworth.open" in top["content"] and "cluster.join(Kestrel)\n```" in top["content"]
