"""AsciiDoc read as the Markdown its rendered page shows: the converter on its own, then a page ingested into
the real PostgreSQL and Neo4j and searched through the real router."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from graphrag.ingest.asciidoc import asciidoc_markdown
from graphrag.ingest.chunk import Chunker, ChunkOptions
from graphrag.ingest.load import Found, LoadError, load_bytes, load_file
from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime
from graphrag.search.router import SearchRouter
from tests.helpers import rest_search

# A page the way Antora and Spring/Hibernate docs write them: header with author and attributes, an
# include, conditionals, cross references, a titled listing with callouts and attributes in it, lists
# with continuations, description lists, an admonition block, a table with spans and an AsciiDoc cell,
# a CSV table, a comment block, a passthrough, a literal paragraph and extension macros.
PAGE = """\ufeff= Configuring the Quillstone Broker
Mara Lindqvist <mara@example.org>
v3.2, 2025-02-01
:description: How to configure the broker.
:keywords: quillstone, broker
:broker-version: 3.2.7
:url-docs: https://docs.example.org/quillstone
ifdef::env-github[]
:tip-caption: :bulb:
endif::[]
ifndef::env-github[]
:site-only: yes
endif::[]

[[overview]]
== Overview

Quillstone {broker-version} routes messages between *Zephyrine* clusters; see <<tuning>>,
<<_the_settings_table,the table>> and xref:ops/backup.adoc#restore[restoring backups].
Read the {url-docs}[reference manual^] or the {site-docs-base}/intro.html[site introduction].
Press kbd:[Ctrl+Shift+Q] to quit.footnote:[The shortcut works on every platform
the broker supports.] The client is javadoc:org.quill.stone.BrokerClient[].
Unknown {build-attribute} references are dropped.

include::partial$secrets.adoc[]

NOTE: The broker needs Java 21.

[#tuning]
== Tuning the broker

.Broker settings file
[source,yaml,subs="attributes+"]
----
broker:
  version: {broker-version} # <1>
  threads: 8 <2>
----
<1> The version installed.
<2> One thread per core.

. Stop the broker.
. Edit the file:
+
[source,bash]
----
vi /etc/quill/broker.yml
----
.. Keep a copy of `+{original}+` settings.

`--threads`::
`-t`::
  The worker thread count.
Heap:: The memory the broker may use.

[WARNING]
====
Never run the broker as root.
====

=== The settings table

.Settings
[cols="1,2,1",options="header"]
|===
|Setting |Meaning |Default

|`retention`
|How long messages stay \\| in hours.
|72

2+|Spans two columns
|n/a

a|
* a list in a cell
* with two items
|Plain cell
|7
|===

[%header,format=csv]
|===
Region,Latency
"Frost Vale, north",12 ms
|===

////
Reviewer note: remove the Glimmerbank section before release.
////

++++
<div class="video"><iframe src="x"></iframe><p>Embedded walkthrough</p></div>
++++

 $ quill status
 quill is running

image::diagram.png[Broker diagram]

Closing words with #highlighted text# and ((indexed terms))(((hidden, entry))).

Manual pages
------------

See linkgit:git-log[1] for the history.
"""


def test_asciidoc_page_reads_as_its_rendered_text() -> None:
    markdown, meta = asciidoc_markdown(PAGE)
    assert meta == {"author": "Mara Lindqvist", "email": "mara@example.org", "revision": "v3.2, 2025-02-01",
                    "description": "How to configure the broker.", "keywords": "quillstone, broker"}
    expected = [
        "# Configuring the Quillstone Broker\n",
        "## Overview\n",
        # attributes, cross references (to a section's title, a label, another page's label), links
        "Quillstone 3.2.7 routes messages between *Zephyrine* clusters; see Tuning the broker,\nthe table "
        "and restoring backups.",
        "Read the [reference manual](https://docs.example.org/quillstone) or the site introduction.",
        "Press Ctrl+Shift+Q to quit.[1] The client is `BrokerClient`.\nUnknown  references are dropped.",
        "Note: The broker needs Java 21.",
        # a titled listing: the language kept, callouts out, attributes substituted as subs asks
        "Broker settings file\n\n```yaml\nbroker:\n  version: 3.2.7\n  threads: 8\n```",
        "(1) The version installed.\n(2) One thread per core.",
        # a numbered list with a continuation holding a code block, and a nested item
        "1. Stop the broker.\n1. Edit the file:\n\n```bash\nvi /etc/quill/broker.yml\n```",
        "   1. Keep a copy of `{original}` settings.",
        "- `--threads`:\n- `-t`:\nThe worker thread count.\n- Heap: The memory the broker may use.",
        "Warning:\nNever run the broker as root.",
        "### The settings table",
        # cells across lines, an escaped pipe, a cell spanning two columns, an AsciiDoc cell
        "Settings\n\n| Setting | Meaning | Default |\n| --- | --- | --- |\n| `retention` | How long messages stay \\| in "
        "hours. | 72 |\n| Spans two columns |  | n/a |\n| a list in a cell with two items | Plain cell | 7 |",
        "| Region | Latency |\n| --- | --- |\n| Frost Vale, north | 12 ms |",
        "Embedded walkthrough",
        "```\n$ quill status\nquill is running\n```",  # an indented paragraph is literal
        "Closing words with highlighted text and indexed terms.",
        "## Manual pages\n\nSee git-log(1) for the history.",  # a two-line title
        "[1] The shortcut works on every platform the broker supports.",
    ]
    position = 0
    for piece in expected:
        found = markdown.find(piece, position)
        assert found >= 0, (piece, markdown[position:position + 400])
        position = found + len(piece)
    assert "![Broker diagram](diagram.png)" in markdown  # an image's alt text, as Markdown pages keep it
    for gone in ("include::", "image::", "secrets", "Glimmerbank", "iframe", "hidden", "tip-caption", "site-only",
                 "ifdef", "<1>", "----", "|===", "[source", "{broker-version}", "{url-docs}", "mara@example.org>\n"):
        assert gone not in markdown.replace("Mara Lindqvist <mara@example.org>", ""), gone


@pytest.mark.parametrize(("source", "expected"), [
    # a block title right under a paragraph names the next block, not the paragraph
    ("Text before:\n.Query\n[source,cypher]\n----\nMATCH (n) RETURN n\n----\n",
     "Text before:\n\nQuery\n\n```cypher\nMATCH (n) RETURN n\n```\n"),
    # [,lang] and a bare [source]; a listing filled by an include only is left out
    ("[,java]\n----\nint x = 1;\n----\n\n[source]\n----\ninclude::example$A.java[]\n----\n", "```java\nint x = 1;\n```\n"),
    # a code span holding backticks, a macro inside monospace, a passthrough kept as written
    ("Use `+{x}+` and `xref:a.adoc[cfg.key]` and pass:[<b>]!\n", "Use `{x}` and `cfg.key` and <b>!\n"),
    # symmetric titles, Markdown-style titles, nested example blocks with longer delimiters
    ("== Setup ==\n\n# Title\n\n=====\n======\nInner text\n======\n=====\n", "## Setup\n\n# Title\n\nInner text\n"),
    # ifeval keeps its lines; a one-line ifdef; an attribute unset before use
    ("ifeval::[{x} > 1]\nKept\nendif::[]\n\n:a: A\nifdef::a[Shown {a}]\n\n:a!:\nGone {a}.\n", "Kept\n\nShown A\n\nGone .\n"),
    # a table without cols counts the first line's cells; rowspans fill the rows below
    ("|===\n|A |B\n.2+|tall |one\n|two\n|===\n", "| A | B |\n| --- | --- |\n| tall | one |\n| tall | two |\n"),
    # a line that reads as Markdown structure is escaped; a >-quote stays a quote
    ("#notatag here\n\n> quoted\n", "\\#notatag here\n\n> quoted\n"),
    # Windows line endings
    ("= T\r\n\r\n== S\r\n\r\nBody.\r\n", "# T\n\n## S\n\nBody.\n"),
    # a quote's attribution and citation under it, as Asciidoctor shows them (a paragraph and a block)
    ("[quote,Captain Kirk,Star Trek IV]\nRemember where we parked.\n\n[verse,attribution=Carl Sandburg]\n____\n"
     "The fog comes\non little cat feet.\n____\n\n____\nUnattributed.\n____\n",
     "Remember where we parked.\n\n— Captain Kirk, Star Trek IV\n\nThe fog comes\non little cat feet.\n\n"
     "— Carl Sandburg\n\nUnattributed.\n"),
    # a bibliography entry's anchor shows as its label, and so does a reference to it
    ("* [[[gof,Gang of Four]]] Design Patterns.\n* [[[taoup]]] The Art of Unix Programming.\n\nSee <<taoup>>.\n",
     "- [Gang of Four] Design Patterns.\n- [taoup] The Art of Unix Programming.\n\nSee [taoup].\n"),
    # AsciiDoc cells: a code block as code (its braces, brackets and colons as written), a nested table in a
    # row; cells that look like attribute lists kept; a cell of site attributes named
    ('|===\n|Query |Rows\n\na|\n[source, cypher]\n----\nMATCH (a {foo:1})-[:T]->(b) [WHERE x]\n----\n|["Peter","Tim"]\n\n'
     'a|\n!===\n!k !v\n!===\n|{check-mark}\n|===\n',
     '| Query | Rows |\n| --- | --- |\n| `MATCH (a {foo:1})-[:T]->(b) [WHERE x]` | ["Peter","Tim"] |\n| k v | check mark |\n'),
    # extension labels, a description term holding a macro, a term whose text comes after a blank line
    ("New label:new[Introduced in 5.8] here.\n\nxref:html.adoc[HTML]::\n\n\tThe HTML backend.\n",
     "New Introduced in 5.8 here.\n\n- HTML:\n\nThe HTML backend.\n"),
    # footnotes: code in them, one glued to a word, one used again by its id
    ("Set `x`.footnote:[The default is `false`.] Dbsfootnote:cdb[Composite only.] and Cfootnote:cdb[].\n",
     "Set `x`.[1] Dbs[2] and C[2].\n\n[1] The default is `false`.\n[2] Composite only.\n"),
    # roles, escapes, character references, link labels holding brackets, the author's attributes
    ("= Doc\nAda Byron <ada@example.org>\n\n[.path]_a.html_ \\<<x>> \\xref:a[b] `\\*.c` &#10004; &mdash; "
     "xref:r.adoc[RETURN [AS]] by {author}.\n",
     "# Doc\n\n_a.html_ <<x>> xref:a[b] `*.c` \u2714 \u2014 RETURN [AS] by Ada Byron.\n"),
    # in code, an extension's macro shape stays as written; an index page's cross reference names its module
    ("Use `org.x:core[:1.0]` and xref:cli:index.adoc[].\n", "Use `org.x:core[:1.0]` and cli.\n"),
    # a one-letter cell is a cell, not a spec; text before the first separator is a cell too
    ("|===\n|a|all\n|v|verbose\n|===\n\n|===\nfoo|bar\n|===\n",
     "| a | all |\n| --- | --- |\n| v | verbose |\n\n| foo | bar |\n| --- | --- |\n"),
    # a column's style from cols; a passthrough's scripts and styles out; xref text with attributes; an
    # unresolved <<id>>; character references in code
    ('[cols="1,2a"]\n|===\n|Key |Example\n\n|note\n|\n[source,yaml]\n----\nnote: {x}\n----\n|===\n\n'
     "++++\n<style>.g { margin: 3px; }</style><p>Shown</p><script>go({a: 1});</script>\n++++\n\n"
     "See xref:api/index.html[Javadoc,window=_blank], <<DOC-50>> and `&#x2192;`.\n",
     "| Key | Example |\n| --- | --- |\n| note | `note: {x}` |\n\nShown\n\nSee Javadoc, [DOC-50] and `\u2192`.\n"),
    # lists nest by marker, as Asciidoctor reads them: a new marker opens a list in the item before it
    ("* a\n- b\n* c\n. d\n\nPara.\n\n. one\n.. two\n* three\n. four\n",
     "- a\n  - b\n- c\n  1. d\n\nPara.\n\n1. one\n   1. two\n      - three\n1. four\n"),
    # Neo4j's tabbed examples: a tab's name is a role on its block, shown as the block's title
    ("[.tabbed-example]\n=====\n[.include-with-cypher]\n======\nCypher reads it.\n======\n\n"
     "[.include-with-python]\n======\nPython reads it.\n======\n=====\n",
     "cypher\n\nCypher reads it.\n\npython\n\nPython reads it.\n"),
    # a value continued over lines; a reference before its attribute's entry stays unresolved
    (":note: first part \\\n  second part\n\nSee {v}: {note}.\n\n:v: 2.0\n\nNow {v}.\n",
     "See : first part second part.\n\nNow 2.0.\n"),
])
def test_asciidoc_constructs(source: str, expected: str) -> None:
    assert asciidoc_markdown(source)[0] == expected


@pytest.mark.timeout(60)  # a hang guard: before their spans were bounded, several of these took minutes
@pytest.mark.parametrize("hostile", [
    "[" * 50_000, "`a " * 50_000, "kbd:[" * 50_000, "link:a[" * 50_000, '"`a' * 50_000, "+++a" * 50_000,
    "pass:[" * 50_000, "{a}[" * 50_000, "ab:cd[" * 50_000, "[[a," * 50_000, "<" * 50_000,
    "|===\n" + "2+|a .3+|b 3*|c " * 5_000 + "\n|===", "\n".join(["====", "****"] * 5_000),
    "ifdef::a[]\n" * 20_000, "= T" + " " * 50_000 + "x", "Title" + " " * 50_000 + "x\n-----",
    ":a: x\n" + ":a: {a}{a}\n" * 40 + "{a}" * 1_000,
    # found by a code review: targets without a "[", author and revision lines of spaces, callouts after
    # long runs of spaces, a repeat spec multiplying the cells
    "link:" * 40_000, "{a}" * 40_000, "xref:a" * 20_000, "http://x" * 20_000, "<<a," + " " * 20_000 + "x",
    "= T\na" + " " * 4_000 + "b", "= T\nA\nv" + " " * 4_000 + "x", "----\n" + (" " * 198 + "x>\n") * 200 + "----\n",
    "|===\n" + "1000*|x\n" * 2_000 + "|===\n",
])
def test_asciidoc_reads_hostile_input_in_linear_time(hostile: str) -> None:
    markdown, _ = asciidoc_markdown(hostile)
    assert len(markdown) < 12 * len(hostile) + 6_000_000


def test_asciidoc_never_reads_another_file(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("TOPSECRET-4471")
    (tmp_path / "page.adoc").write_text(
        "= Page\n\ninclude::secret.txt[]\n\n[source]\n----\ninclude::secret.txt[]\n----\n\n"
        f"include::{tmp_path / 'secret.txt'}[]\n\nBody text.\n")
    [doc] = load_file(Found(tmp_path / "page.adoc", "adoc"), 1 << 20)
    assert "TOPSECRET" not in doc.text and "include" not in doc.text and "Body text." in doc.text


def test_asciidoc_titles_and_load_errors(tmp_path: Path, models: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    [doc] = load_bytes("guide.asciidoc", PAGE.encode(), 1 << 20)
    assert (doc.title, doc.kind, doc.metadata["keywords"]) == ("Configuring the Quillstone Broker", "markdown",
                                                               "quillstone, broker")
    [untitled] = load_bytes("notes.adoc", b"Just a paragraph.\n", 1 << 20)
    assert untitled.title == "notes"
    with pytest.raises(LoadError, match="no text content"):
        load_bytes("attrs.adoc", b":a: b\n:c: d\n// nothing else\n", 1 << 20)
    [latin] = load_bytes("latin.adoc", "= Caf\u00e9\n\nA paragraph.\n".encode("latin-1"), 1 << 20)  # Windows-1252
    assert latin.title == "Caf\u00e9"
    with pytest.raises(LoadError, match="not valid UTF-8"):
        load_bytes("noise.adoc", bytes(range(128, 256)) * 4, 1 << 20)

    def broken(text: str) -> None:
        raise ValueError("a reader bug")

    with monkeypatch.context() as patch:  # a bug in the reader is the file's one-line error, not a 500
        patch.setattr("graphrag.ingest.asciidoc.asciidoc_markdown", broken)
        with pytest.raises(LoadError, match=r"^odd.adoc: unreadable AsciiDoc \(ValueError\)$"):
            load_bytes("odd.adoc", b"= Odd\n", 1 << 20)
    # The Markdown chunker keeps the converted table whole and the heading path clean.
    chunks = Chunker(models.counter, ChunkOptions(budget=60, overlap_tokens=0)).chunk(doc)
    [table] = [c for c in chunks if "Spans two columns" in c.text]
    assert [line.startswith("| --- |") for line in table.text.splitlines()].count(True) == 1
    assert "Plain cell" in table.text
    assert table.heading_path[-1] == "The settings table"


async def test_asciidoc_page_is_searchable_with_its_tables_and_code(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    (tmp_path / "broker.adoc").write_text(PAGE)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed, report.skipped) == (1, [], [])
    for term, piece in [("Frost Vale", "| Frost Vale, north | 12 ms |"), ("retention", "| `retention` |"),
                        ("Zephyrine", "routes messages between")]:
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        top = response["results"][0]
        assert top["title"] == "Configuring the Quillstone Broker" and piece in top["content"], (term, top)
    for term in ("Glimmerbank", "TOPSECRET", "iframe", "tip-caption"):
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert response["results"] == [], term
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.name AS name", c=collection)
    names = {r["name"] for r in rows}
    assert {"BrokerClient", "Frost Vale"} <= names, sorted(names)
    assert not any("xref" in n or "{" in n or "<<" in n or "kbd" in n for n in names), sorted(names)


async def test_quote_attributions_and_bibliography_labels_reach_the_stores(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    (tmp_path / "sayings.adoc").write_text(
        "= Harbour sayings\n\n[quote,Olga Zyxquart,The Tide Almanac]\n____\nNever moor at ebb.\n____\n\n"
        "[bibliography]\n== References\n\n* [[[vantorel,Vantorel Charts]]] Charts of the northern quays.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    [quote] = (await rest_search(router, "Zyxquart", mode="keyword", limit=3, collections=[collection]))["results"]
    assert "— Olga Zyxquart, The Tide Almanac" in quote["content"], quote
    [entry] = (await rest_search(router, "Vantorel", mode="keyword", limit=3, collections=[collection]))["results"]
    assert "[Vantorel Charts] Charts of the northern quays." in entry["content"], entry
