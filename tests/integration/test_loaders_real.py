"""Loaders on documents shaped like real ones: tables, site furniture, inline markup, abbreviations.

Ingested into the real PostgreSQL and Neo4j and searched through the real router; the pure parts
(HTML to text, sentence boundaries) are also checked directly.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from graphrag.ingest.chunk import Chunker, ChunkOptions, sentence_spans
from graphrag.ingest.load import Found, LoadError, NoText, load_bytes, load_file
from graphrag.ingest.pipeline import Ingestor
from graphrag.models import Document
from graphrag.runtime import Runtime
from graphrag.search.router import SearchRouter
from tests.helpers import rest_search

MB = 1024 * 1024

# A documentation page the way site generators render one: a hidden help popup, a site banner with the
# book's name as <h1>, a sidebar of every chapter, prev/next links, a footer, scripts. Only <main> is
# the article.
NAV_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<title>Shared State - The Gadget Handbook</title>
<script>const path_to_root = "";</script><style>body { color: black; }</style></head>
<body>
<div id="help-container"><div id="help-popup"><h2 class="help-title">Keyboard shortcuts</h2>
  <p>Press <kbd>←</kbd> or <kbd>→</kbd> to navigate between chapters</p><p>Press <kbd>?</kbd> to show this help</p></div></div>
<a class="skip-to-content" href="#content">Skip to content</a>
<nav id="sidebar" class="sidebar" aria-label="Table of contents"><ol class="chapter">
  <li><a href="intro.html">Introduction to gizmos</a></li><li><a href="install.html">Installing sprockets</a></li>
  <li><a href="state.html">Shared State</a></li></ol></nav>
<div class="page">
  <div id="menu-bar" class="menu-bar sticky">
    <div class="left-buttons"><button id="theme-toggle" type="button">Change theme</button></div>
    <h1 class="menu-title">The Gadget Handbook</h1>
    <div class="right-buttons"><a href="print.html" title="Print this book">Print</a></div>
  </div>
  <div id="search-wrapper" class="hidden" hidden><input type="search" placeholder="Search this book ..."></div>
  <div id="content" class="content"><main>
    <h2 id="shared-state"><a class="header" href="#shared-state">Shared State</a></h2>
    <p><em>Mutex</em> is an abbreviation for <em>mutual exclusion</em>, as in a mutex allows only one thread
    to access some data at any given time. Call <code>lock</code>, then <a href="x.html">read the guard</a>.</p>
    <h3 id="api">The API of <code>Mutex&lt;T&gt;</code><a class="headerlink" href="#api" title="Link to this heading">¶</a></h3>
    <pre><code class="language-rust">let m = Mutex::new(5);
let mut num = m.lock().unwrap();</code></pre>
    <table><thead><tr><th>Primitive</th><th>Crate</th></tr></thead>
      <tbody><tr><td><code>Mutex</code></td><td>quillstd</td></tr><tr><td>Spinlock</td><td>froobvault</td></tr></tbody></table>
  </main>
  <nav class="nav-wrapper" aria-label="Page navigation"><a rel="prev" href="install.html">Previous chapter</a>
    <a rel="next" href="next.html">Next chapter</a></nav></div>
</div>
<footer class="site-footer"><p>Copyright © 2024 Gadget Authors. Made with love.</p></footer>
<script src="book.js"></script>
</body></html>
"""
FURNITURE = ["Keyboard shortcuts", "navigate between chapters", "Skip to content", "Introduction to gizmos",
             "Installing sprockets", "Change theme", "Print", "Search this book", "Previous chapter",
             "Next chapter", "Copyright", "Gadget Handbook", "¶", "path_to_root", "color: black"]

ABBREVIATED = ("Dr. Smith met Mr. Jones in the U.S. Army. He left. Smith et al. described it in Fig. 3 of "
               "vol. 2, e.g. in the appendix. Prof. Brown disagreed, i.e. not at all. No. 5 was chosen.")
WHOLE_SENTENCES = ["Dr. Smith met Mr. Jones in the U.S. Army.", "He left.",
                   "Smith et al. described it in Fig. 3 of vol. 2, e.g. in the appendix.",
                   "Prof. Brown disagreed, i.e. not at all.", "No. 5 was chosen."]


def _load(path: Path, kind: str) -> Document:
    [doc] = load_file(Found(path, kind), 50 * MB)
    return doc


def make_table_docx(path: Path) -> None:
    """A DOCX with a heading, a paragraph, a table (a merged cell, a nested table) and a paragraph after it."""
    import docx

    document = docx.Document()
    document.add_heading("Specs", level=1)
    document.add_paragraph("Intro.")
    table = document.add_table(rows=3, cols=3)
    for r, values in enumerate([["Part", "Material", "Mass"], ["Hull", "Vantablorium", "1200 kg"],
                                ["Fin", "Carbon", "40 kg"]]):
        for c, value in enumerate(values):
            table.cell(r, c).text = value
    table.cell(2, 1).merge(table.cell(2, 2))
    nested = table.cell(1, 0).add_table(rows=1, cols=2)
    nested.cell(0, 0).text = "Keel"
    nested.cell(0, 1).text = "Zorbatite"
    document.add_paragraph("Closing remarks.")
    document.save(str(path))


def make_table_pdf(path: Path) -> None:
    """A two-page PDF: a paragraph, a ruled table, a paragraph after it; then a page of plain text."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 8, "Limits of the Zephyr pump.")
    with pdf.table() as table:
        for values in [("Parameter", "Value"), ("Max pressure", "42 glorbars"), ("Flow rate", "17 quuxlitres")]:
            row = table.row()
            for value in values:
                row.cell(value)
    pdf.multi_cell(0, 8, "Warranty terms follow.")
    pdf.add_page()
    pdf.multi_cell(0, 8, "The second page has no table.")
    pdf.output(str(path))


# -- pure logic ----------------------------------------------------------------------------------------
def test_nav_heavy_page_yields_only_its_article(tmp_path: Path) -> None:
    path = tmp_path / "state.html"
    path.write_text(NAV_PAGE)
    doc = _load(path, "html")
    assert doc.title == "Shared State"  # the site's name is not part of the title
    assert doc.text.startswith("## Shared State\n")
    for text in FURNITURE:
        assert text not in doc.text, text
    assert "### The API of `Mutex<T>`\n" in doc.text
    assert "```rust\nlet m = Mutex::new(5);\nlet mut num = m.lock().unwrap();\n```" in doc.text
    assert "| Primitive | Crate |\n| --- | --- |\n| `Mutex` | quillstd |\n| Spinlock | froobvault |" in doc.text


def test_inline_tags_add_no_space_before_punctuation(tmp_path: Path) -> None:
    path = tmp_path / "inline.html"
    path.write_text("<p><em>Mutex</em> is short for <em>mutual exclusion</em>, as in <a href='#'>one</a>; "
                    "call <code>lock</code>. Done <strong>now</strong>!</p><ul><li><p>first</p><p>second</p></li></ul>")
    doc = _load(path, "html")
    assert "Mutex is short for mutual exclusion, as in one; call `lock`. Done now!" in doc.text
    assert not re.search(r"\w \s*[,.;:!?]", doc.text.replace("`", ""))
    assert "- first second" in doc.text  # a list item's paragraphs stay one item


def test_html_table_becomes_a_pipe_table_in_document_order(tmp_path: Path) -> None:
    path = tmp_path / "table.html"
    path.write_text("<main><h1>Specs</h1><p>Intro.</p><table><caption>Masses</caption>"
                    "<tr><td>Part</td><td>Mass</td></tr><tr><td>Hull</td><td colspan='2'>1200 <b>kg</b></td></tr>"
                    "<tr><td>a | b</td><td><p>two</p><p>paragraphs</p></td></tr></table><p>After.</p></main>")
    doc = _load(path, "html")
    assert doc.text == ("# Specs\n\nIntro.\n\nMasses\n\n| Part | Mass |  |\n| --- | --- | --- |\n"
                        "| Hull | 1200 kg |  |\n| a \\| b | two paragraphs |  |\n\nAfter.")


# A Javadoc class page (17+): members are list items holding a section with a heading, the signature
# and the description; the method summary is a grid of <div>s.
JAVADOC_PAGE = """<html><head><title>Range (Widgetry 3.1 API)</title></head><body><main role="main">
<div class="header"><h1 title="Class Range" class="title">Class Range&lt;T&gt;</h1></div>
<div class="sub-title"><span class="package-label-in-type">Package</span>&nbsp;<a href="p.html">org.widgetry.lang</a></div>
<section class="summary"><ul class="summary-list"><li><section class="method-summary" id="method-summary">
<h2>Method Summary</h2>
<div class="summary-table three-column-summary">
<div class="table-header col-first">Modifier and Type</div><div class="table-header col-second">Method</div>
<div class="table-header col-last">Description</div>
<div class="col-first even-row-color"><code>boolean</code></div>
<div class="col-second even-row-color"><code><a href="#isAfter(T)">isAfter</a>(T&nbsp;element)</code></div>
<div class="col-last even-row-color"><div class="block">Checks whether this range is after the element.</div></div>
<div class="col-first odd-row-color"><code>boolean</code></div>
<div class="col-second odd-row-color"><code><a href="#isBefore(T)">isBefore</a>(T&nbsp;element)</code></div>
<div class="col-last odd-row-color"><div class="block">Checks whether this range is before the element.</div></div>
</div></section></li></ul></section>
<section class="details"><ul class="member-list">
<li><section class="detail" id="isAfter(T)"><h3>isAfter</h3>
<div class="member-signature"><span class="modifiers">public</span>&nbsp;<span class="return-type">boolean</span>&nbsp;<span class="element-name">isAfter</span>(T&nbsp;element)</div>
<div class="block">Checks whether this range lies wholly after the quasiflange element.</div>
<dl class="notes"><dt>Returns:</dt><dd>true if this range is after the element</dd></dl></section></li>
<li><section class="detail" id="isBefore(T)"><h3>isBefore</h3>
<div class="member-signature"><span class="modifiers">public</span>&nbsp;<span class="return-type">boolean</span>&nbsp;<span class="element-name">isBefore</span>(T&nbsp;element)</div>
<div class="block">Checks whether this range lies wholly before the zorblet element.</div>
<dl class="notes"><dt>Returns:</dt><dd>true if this range is before the element</dd></dl></section></li>
</ul></section></main></body></html>"""


def test_javadoc_members_keep_their_text_under_their_own_heading(tmp_path: Path) -> None:
    path = tmp_path / "Range.html"
    path.write_text(JAVADOC_PAGE)
    doc = _load(path, "html")
    assert doc.title == "Class Range<T>"
    assert "Package org.widgetry.lang" in doc.text  # white space between inline tags separates words
    assert ("| Modifier and Type | Method | Description |\n| --- | --- | --- |\n"
            "| `boolean` | `isAfter(T element)` | Checks whether this range is after the element. |") in doc.text
    after = doc.text.index("### isAfter")
    before = doc.text.index("### isBefore")
    assert after < doc.text.index("public boolean isAfter(T element)") < doc.text.index("quasiflange") < before
    assert before < doc.text.index("public boolean isBefore(T element)") < doc.text.index("zorblet")
    assert "Returns: true if this range is after the element" in doc.text  # a term and its definition, one line


@pytest.mark.parametrize("html,expected", [
    # a list item's text after its code block comes after the block, a parent's after its nested list
    ("<ul><li>Response:<pre><code>{}</code></pre>Then returned.</li><li>Parent <ul><li>child</li></ul> goes on.</li></ul>",
     "- Response:\n\n```\n{}\n```\n\nThen returned.\n\n- Parent\n  - child\n\ngoes on."),
    ("<ol start='3'><li>Create.</li><li>Configure:<ol><li>name</li><li>size</li></ol></li></ol>",
     "3. Create.\n4. Configure:\n   1. name\n   2. size"),
    ("<blockquote><p>One.</p><p>Two.</p></blockquote>", "> One. Two."),
    ("<div class='highlight-python notranslate'><div class='highlight'><pre><span class='linenos'>1</span>x = 1<br>"
     "<span class='linenos'>2</span>y = 2</pre></div></div>", "```python\nx = 1\ny = 2\n```"),
    ("<table class='highlighttable'><tr><td class='linenos'><div class='linenodiv'><pre>1\n2</pre></div></td>"
     "<td class='code'><div class='highlight'><pre><code>a()\nb()</code></pre></div></td></tr></table>",
     "```\na()\nb()\n```"),
    # Sphinx and MkDocs with line numbers: the language is on the wrapper around the line-number table
    ("<div class='highlight-python notranslate'><table class='highlighttable'><tr><td class='linenos'>"
     "<div class='linenodiv'><pre>1</pre></div></td><td class='code'><div class='highlight'><pre>a()</pre></div>"
     "</td></tr></table></div>", "```python\na()\n```"),
    ("<pre class='rust rust-example-rendered'><code>let x = 1;</code></pre>", "```rust\nlet x = 1;\n```"),
    ("<table><tr><th>Region</th><th>Quarter</th><th>Sales</th></tr><tr><td rowspan='2'>North</td><td>Q1</td>"
     "<td>100</td></tr><tr><td>Q2</td><td>150</td></tr></table>",
     "| Region | Quarter | Sales |\n| --- | --- | --- |\n| North | Q1 | 100 |\n| North | Q2 | 150 |"),
    ("<h2>Setup<a href='#setup' class='hash-link' aria-label='Direct link to Setup'>&#8203;</a></h2>"
     "<p>Click <a href='/'>Home <span class='sr-only'>(current)</span></a> to go on&shy;wards.</p>",
     "## Setup\n\nClick Home to go onwards."),
    ("<p>Water boils at 100 degrees.<sup><a class='footnote-ref' href='#fn:1'>1</a></sup></p><div class='footnote'>"
     "<ol><li id='fn:1'><p>At sea level.&#160;<a class='footnote-backref' href='#fnref:1'>&#8617;</a></p></li></ol></div>",
     "Water boils at 100 degrees.[1]\n\n1. At sea level."),
    ("<p>Write <code>`Rc&lt;T&gt;`</code> with backticks.</p>", "Write `` `Rc<T>` `` with backticks."),
    ("<div><label>Python</label><label>Bash</label></div>", "Python\n\nBash"),
    ("<table><tr><td rowspan=2 colspan=2>A</td><td>B</td></tr><tr><td>C</td></tr></table>",
     "| A |  | B |\n| --- | --- | --- |\n| A |  | C |"),
    # counts that are not small ASCII numbers are ignored, not a crash
    ("<ol start='²'><li>a</li></ol><table><tr><td rowspan='²' colspan='9999999999'>x</td><td>y</td></tr></table>",
     "1. a\n\n| x | y |\n| --- | --- |"),
    ("<p># apt install nginx</p><p>1. not a list</p>", "\\# apt install nginx\n\n1\\. not a list"),
    ('<div class="two-column-summary">' * 300 + "deep" + "</div>" * 300, "deep"),
    # pdoc: the "View Source" toggle goes, the source it shows stays (without its line numbers)
    ('<section id="f"><input id="f-view-source" class="view-source-toggle-state" type="checkbox" aria-hidden="true">'
     '<div class="attr function"><span class="def">def</span> <span class="name">f</span>'
     '<span class="signature pdoc-code condensed">(<span class="n">x</span>):</span>'
     '<label class="view-source-button" for="f-view-source"><span>View Source</span></label></div>'
     '<div class="pdoc-code codehilite"><pre><span id="f-6"><a href="#f-6"><span class="linenos">6</span></a>'
     'def f(x):\n</span><span id="f-7"><a href="#f-7"><span class="linenos">7</span></a>    return x\n</span></pre>'
     '</div><div class="docstring"><p>Frobnicates x.</p></div></section>',
     "def f(x):\n\n```\ndef f(x):\n    return x\n```\n\nFrobnicates x."),
])
def test_html_structure_survives(tmp_path: Path, html: str, expected: str) -> None:
    path = tmp_path / "page.html"
    path.write_text(f"<html><body><main>{html}</main></body></html>")
    assert _load(path, "html").text == expected


# A page as Sphinx builds one: sections whose ids are their headings' slugs, a heading whose text links
# back to the contents, and sphinx-tabs panels (all but the first hidden until chosen), their labels in
# buttons of a tab list.
SPHINX_PAGE = """<html><head><title>Security Considerations</title></head><body>
<nav class="sidebar"><ul><li><a href="index.html">Contents</a></li></ul></nav>
<div class="body" role="main"><section id="security"><h1>Security Considerations</h1>
<p>Web applications face many kinds of attack.</p>
<section id="navigation"><h2><a class="toc-backref" href="#id1" role="doc-backlink">Navigation</a><a class="headerlink" href="#navigation">¶</a></h2>
<p>The zyxquart menu keeps its links on the server.</p></section>
<section id="set-cookie-options"><span id="security-cookie"></span><h2>Set-Cookie options</h2>
<p>The Vantorel session cookie is sent over HTTPS only.</p></section>
<section id="run"><h2>Run</h2>
<div role="tablist"><button id="tab-bash" role="tab" aria-selected="true">Bash</button>
<button id="tab-fish" role="tab">Fish</button></div>
<div role="tabpanel" aria-labelledby="tab-bash"><pre>$ export QUELLPORT_PORT=8000</pre></div>
<div role="tabpanel" aria-labelledby="tab-fish" hidden="true"><pre>$ set -x MARROWGATE_PORT 8000</pre></div>
</section></section></div>
<div class="cookie-banner">We use cookies to improve your visit.</div></body></html>"""


def test_html_sections_named_like_furniture_and_hidden_tabs_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "security.html"
    path.write_text(SPHINX_PAGE)
    doc = _load(path, "html")
    assert doc.text == (
        "# Security Considerations\n\nWeb applications face many kinds of attack.\n\n## Navigation\n\n"
        "The zyxquart menu keeps its links on the server.\n\n## Set-Cookie options\n\n"
        "The Vantorel session cookie is sent over HTTPS only.\n\n## Run\n\n**Bash**\n\n"
        "```\n$ export QUELLPORT_PORT=8000\n```\n\n**Fish**\n\n```\n$ set -x MARROWGATE_PORT 8000\n```"), doc.text


def test_html_images_alt_text_is_kept_and_emoji_and_logos_are_not(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text(
        '<html><head><title>Pipeline</title></head><body><header><img src="logo.svg" alt="Quellport Docs"></header>'
        '<main><h1>Pipeline</h1><p>The stages <img src="fire.svg" alt="\U0001f525" class="twemoji"> run in order.</p>'
        '<figure><img src="stages.png" alt="Diagram of the zyxquart ingest stages"><figcaption>Figure 1: stages'
        '</figcaption></figure><p><img src="logo.png" alt="logo"> <img src="x.png"> The end.</p></main></body></html>')
    assert _load(path, "html").text == (
        "# Pipeline\n\nThe stages run in order.\n\n![Diagram of the zyxquart ingest stages](stages.png)\n\n"
        "Figure 1: stages\n\nThe end.")


DOCUSAURUS_PAGE = (
    '<html><head><title>Install</title></head><body><main><article><h1>Install</h1><p>Add the package.</p>'
    '<div class="tabs-container"><ul role="tablist" class="tabs"><li role="tab" aria-selected="true">npm</li>'
    '<li role="tab" aria-selected="false">Yarn</li></ul><div class="margin-top--md">'
    '<div role="tabpanel"><pre><code>npm install blimbar</code></pre></div>'
    '<div role="tabpanel" hidden=""><pre><code>yarn add blimbar</code></pre></div></div></div>'
    '<p>Then import it.</p></article></main></body></html>')


def test_docusaurus_tabs_are_read_under_their_labels(tmp_path: Path) -> None:
    """Docusaurus names no tab for its panels: the panel's place in the tab list does."""
    path = tmp_path / "install.html"
    path.write_text(DOCUSAURUS_PAGE)
    assert _load(path, "html").text == ("# Install\n\nAdd the package.\n\n**npm**\n\n```\nnpm install blimbar\n```\n\n"
                                        "**Yarn**\n\n```\nyarn add blimbar\n```\n\nThen import it.")


async def test_html_sections_named_like_furniture_and_hidden_tabs_are_searchable(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    (tmp_path / "security.html").write_text(SPHINX_PAGE)
    (tmp_path / "install.html").write_text(DOCUSAURUS_PAGE)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (2, [])
    for term in ("zyxquart menu", "Vantorel session cookie", "MARROWGATE_PORT"):
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert [r["title"] for r in response["results"]] == ["Security Considerations"], term
    response = await rest_search(router, "improve your visit", mode="keyword", limit=3, collections=[collection])
    assert response["results"] == []  # the cookie banner is still furniture
    [yarn] = (await rest_search(router, "yarn add blimbar", mode="keyword", limit=3, collections=[collection]))["results"]
    assert yarn["title"] == "Install" and "**Yarn**" in yarn["content"], yarn  # a hidden Docusaurus tab, labelled


def test_html_page_with_an_empty_main_has_no_text(tmp_path: Path) -> None:
    """A search page filled in by script: its landmark is empty, and the links around it are no article."""
    path = tmp_path / "search.html"
    path.write_text("<html><body><a class='skip-to-content' href='#main'>Skip to content</a><div class='page'>"
                    "<a class='back-to-top' href='#'>Back to top</a><main id='main'><noscript>Enable JavaScript."
                    "</noscript><div id='search-results'></div></main></div></body></html>")
    with pytest.raises(LoadError, match="search.html: no text content"):
        _load(path, "html")


def test_docx_table_becomes_a_pipe_table_in_document_order(tmp_path: Path) -> None:
    path = tmp_path / "specs.docx"
    make_table_docx(path)
    doc = _load(path, "docx")
    assert doc.text == ("# Specs\n\nIntro.\n\n| Part | Material | Mass |\n| --- | --- | --- |\n"
                        "| Hull Keel Zorbatite | Vantablorium | 1200 kg |\n| Fin | Carbon 40 kg |  |\n\nClosing remarks.")


def test_abbreviations_keep_sentences_whole() -> None:
    assert [ABBREVIATED[a:b] for a, b in sentence_spans(ABBREVIATED)] == WHOLE_SENTENCES
    text = "# Notes\n\nIt rained. Then it stopped!\n- Item one. Still item one\n- Item two"
    assert [text[a:b] for a, b in sentence_spans(text, 9)] == [
        "It rained.", "Then it stopped!", "- Item one.", "Still item one", "- Item two"]


@pytest.mark.parametrize("text", [
    "", ".", "...", "x", "Hello world", ". Hello there.", '"Hi." she said. (Yes.) Ok! "Fine," he said.',
    "Dr. Smith met Mr. Jones in the U.S. Army. It rained.", "End .Start here? No!! Yes... maybe",
    "See Fig. 3 and et al. showed it. \u0964 Next \u3002 one", "!!! ??? Yes", "a.b.c. d", "1. 2. 3. done.",
    ABBREVIATED,
])
def test_sentence_starts_are_the_sentencizers_own(text: str) -> None:
    """The starts computed from the token arrays at once are the ones spaCy's sentencizer sets."""
    from graphrag.ingest.chunk import _sentencizer, _sentencizer_starts

    nlp = _sentencizer()
    doc = nlp(text)
    assert _sentencizer_starts(nlp.make_doc(text)) == [t.i for t in doc if t.is_sent_start]


def test_markdown_chunker_keeps_a_converted_table_whole(tmp_path: Path, models: Any) -> None:
    rows = "".join(f"<tr><td>row {i}</td><td>value {i} of the sample table</td></tr>" for i in range(12))
    path = tmp_path / "big.html"
    path.write_text(f"<main><h1>Big</h1><p>{'Some words here. ' * 30}</p><table>{rows}</table></main>")
    doc = _load(path, "html")
    chunks = Chunker(models.counter, ChunkOptions(budget=40)).chunk(doc)
    tables = [c for c in chunks if "| row" in c.text]
    assert len(tables) == 1 and "| row 0 |" in tables[0].text and "| row 11 |" in tables[0].text
    assert tables[0].heading_path == ("Big",)


def test_pdf_table_becomes_a_pipe_table_in_place(tmp_path: Path) -> None:
    path = tmp_path / "pump.pdf"
    make_table_pdf(path)
    doc = _load(path, "pdf")
    first, second = (doc.text[a:b] for a, b in doc.pages)
    assert first == ("Limits of the Zephyr pump.\n\n| Parameter | Value |\n| --- | --- |\n"
                     "| Max pressure | 42 glorbars |\n| Flow rate | 17 quuxlitres |\n\nWarranty terms follow.")
    assert second == "The second page has no table."


# -- against the real stores -----------------------------------------------------------------------------
async def test_table_cells_from_html_docx_and_pdf_are_found_by_keyword_search(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    (tmp_path / "state.html").write_text(NAV_PAGE)
    make_table_docx(tmp_path / "specs.docx")
    make_table_pdf(tmp_path / "pump.pdf")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (3, [])
    for term, title, row in [("froobvault", "Shared State", "| Spinlock | froobvault |"),
                             ("glorbars", "pump", "| Max pressure | 42 glorbars |"),
                             ("Vantablorium", "Specs", "| Hull Keel Zorbatite | Vantablorium | 1200 kg |"),
                             ("Zorbatite", "Specs", "Zorbatite")]:
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        top = response["results"][0]
        assert top["title"] == title and row in top["content"], (term, top)


async def test_nav_heavy_page_stores_no_furniture(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                                  router: SearchRouter, collection: str) -> None:
    (tmp_path / "state.html").write_text(NAV_PAGE)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == 1
    rows = await runtime.postgres.pool.fetch(
        "SELECT content, heading_path FROM chunks WHERE collection = $1 ORDER BY chunk_index", collection)
    assert rows
    for row in rows:
        assert not [text for text in FURNITURE if text in row["content"]], row["content"]
        assert list(row["heading_path"])[0] == "Shared State"  # no heading path starts with the site name
    assert "mutual exclusion, as in" in rows[0]["content"]
    for term in ("sprockets", "shortcuts", "Copyright"):
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert response["results"] == [], term


async def test_abbreviation_rich_text_is_chunked_at_whole_sentences(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str, models: Any) -> None:
    doc = Document(source="abbr.txt", title="Abbreviations", text=ABBREVIATED, kind="text")
    chunks = Chunker(models.counter, ChunkOptions(budget=8, overlap_tokens=0)).chunk(doc)
    assert [c.text for c in chunks] == WHOLE_SENTENCES  # no two sentences fit the budget together
    (tmp_path / "abbr.txt").write_text(ABBREVIATED)
    # The models are the session's: the small budget must not outlive this test.
    saved = ingestor.models.chunk_options  # type: ignore[attr-defined]
    ingestor.models.chunk_options = ChunkOptions(budget=8, overlap_tokens=0)  # type: ignore[attr-defined]
    try:
        report = await ingestor.ingest_paths([tmp_path], collection=collection)
    finally:
        ingestor.models.chunk_options = saved  # type: ignore[attr-defined]
    assert report.ingested == 1
    rows = await runtime.postgres.pool.fetch(
        "SELECT content FROM chunks WHERE collection = $1 ORDER BY chunk_index", collection)
    assert [r["content"] for r in rows] == WHOLE_SENTENCES


async def test_javadoc_page_chunks_keep_each_member_under_its_heading(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    (tmp_path / "Range.html").write_text(JAVADOC_PAGE)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    for term, member in [("quasiflange", "isAfter"), ("zorblet", "isBefore")]:
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        [hit] = response["results"]
        assert f"public boolean {member}(T element)" in hit["content"], hit
        rows = await runtime.postgres.pool.fetch(
            "SELECT heading_path FROM chunks WHERE collection = $1 AND content LIKE $2", collection, f"%{term}%")
        assert [list(r["heading_path"])[-1] for r in rows] == [member]


# -- PDFs as real ones come ------------------------------------------------------------------------------
def _pdf_with_table(path: Path, cells: list[tuple[str, str]], *, columns: bool = False, title: str = "") -> None:
    """A page with a ruled table (``cells``: its rows), optionally above 40 lines of two-column text."""
    from fpdf import FPDF

    pdf = FPDF()
    if title:
        pdf.set_title(title)
    pdf.set_font("helvetica", size=9)
    pdf.add_page()
    with pdf.table(width=120) as table:
        for values in cells:
            row = table.row()
            for value in values:
                row.cell(value)
    if columns:  # written column after column, as typesetters do
        top = pdf.get_y() + 5
        for x, words in ((10, "Left column line {} about gearboxes."), (115, "Right column line {} about turbines.")):
            for i in range(40):
                pdf.set_xy(x, top + i * 5)
                pdf.cell(85, 5, words.format(i))
    pdf.output(str(path))


def _pdf_with_bookmarks(path: Path, bookmarks: bool = True) -> None:
    """A manual: its title in large type, two chapters with bookmarks (one with a section), and a line
    of an example that starts with "#". Without ``bookmarks`` the headings are only in the type."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()

    def line(text: str, size: int, section: int | None = None) -> None:
        if section is not None and bookmarks:
            pdf.start_section(text, level=section)
        pdf.set_font("Helvetica", size=size)
        pdf.cell(0, 10, text, new_x="LMARGIN", new_y="NEXT")

    line("Quellport Harbour Manual", 26)
    line("1. Berths", 14, 0)
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "The harbour has twelve berths along the Vantorel quay. " * 3)
    line("1.1. Mooring", 12, 1)
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "Ships moor with zyxquart lines at the north berths. " * 3)
    pdf.add_page()
    line("2. Tides", 14, 0)
    pdf.set_font("Helvetica", size=11)
    pdf.multi_cell(0, 6, "# not a heading: a comment in an example\nThe Marrowgate tide tables list each hour.")
    pdf.output(str(path))


def test_pdf_bookmarks_are_headings_and_large_type_on_page_one_the_title(tmp_path: Path) -> None:
    path = tmp_path / "manual.pdf"
    _pdf_with_bookmarks(path)
    [doc] = load_bytes("manual.pdf", path.read_bytes(), 1 << 24)
    assert doc.title == "Quellport Harbour Manual"  # no metadata title: the first page's largest type
    assert [(level, title) for _, level, title in doc.headings] == [(1, "1. Berths"), (2, "1.1. Mooring"), (1, "2. Tides")]
    assert all(doc.text[start:].startswith("#" * level + " " + title) for start, level, title in doc.headings)
    assert "\n# not a heading" in doc.text and "not a heading" not in {t for _, _, t in doc.headings}


def test_pdf_without_bookmarks_takes_its_headings_from_the_type(tmp_path: Path) -> None:
    path = tmp_path / "manual.pdf"
    _pdf_with_bookmarks(path, bookmarks=False)
    [doc] = load_bytes("manual.pdf", path.read_bytes(), 1 << 24)
    assert doc.title == "Quellport Harbour Manual"  # the largest type, on the first page only: the title
    assert [(level, title) for _, level, title in doc.headings] == [(1, "1. Berths"), (2, "1.1. Mooring"), (1, "2. Tides")]
    assert all(doc.text[start:].startswith("#" * level + " " + title) for start, level, title in doc.headings)
    assert "\n# not a heading" in doc.text


def test_pdf_locked_only_against_copying_is_read(tmp_path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    plain = tmp_path / "plain.pdf"
    _pdf_with_table(plain, [("Part", "Mass"), ("Hull", "1200 kg")])
    writer = PdfWriter()
    for page in PdfReader(str(plain)).pages:
        writer.add_page(page)
    writer.encrypt(user_password="", owner_password="owner-secret", permissions_flag=0)
    locked = tmp_path / "locked.pdf"
    with locked.open("wb") as handle:
        writer.write(handle)
    doc = _load(locked, "pdf")
    assert "| Hull | 1200 kg |" in doc.text


def test_pdf_table_rows_holding_several_rows_are_split_line_by_line(tmp_path: Path) -> None:
    """Ruling coarser than the text: one table row holds three states and their counts; joined into
    one cell each, which count is whose would be lost."""
    path = tmp_path / "checks.pdf"
    _pdf_with_table(path, [("State", "Checks"), ("Alabama\nAlaska\nArizona", "18,870\n209\n2,303"),
                           ("Texas", "1,234")])
    doc = _load(path, "pdf")
    assert doc.text == ("| State | Checks |\n| --- | --- |\n| Alabama | 18,870 |\n| Alaska | 209 |\n"
                        "| Arizona | 2,303 |\n| Texas | 1,234 |")


def test_pdf_text_in_columns_is_not_read_across(tmp_path: Path) -> None:
    path = tmp_path / "columns.pdf"
    _pdf_with_table(path, [("Part", "Mass"), ("Hull", "1200 kg")], columns=True)
    doc = _load(path, "pdf")
    assert not [line for line in doc.text.splitlines() if "gearboxes" in line and "turbines" in line]
    assert "Left column line 3 about gearboxes.\nLeft column line 4" in doc.text


def _pdf_spaced_and_tight(path: Path) -> None:
    """A page with a ruled table as typesetters set real ones: a letter-spaced heading (5 pt between
    letters, over pdfplumber's 3 pt), small type with each word placed 0.25 em apart and no space glyph
    (as TeX sets words; 1.75 pt, under pdfplumber's 3 pt), a letter-spaced table header, and a margin
    stamp turned to read upwards."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=14)
    pdf.set_char_spacing(5)
    pdf.cell(0, 10, "Zephyr torque limits", new_x="LMARGIN", new_y="NEXT")
    pdf.set_char_spacing(0)
    pdf.set_font("helvetica", size=7)
    x, y = pdf.l_margin, pdf.get_y() + 5
    for word in "Each flange bolt takes its quuxbolt torque.".split():
        pdf.text(x, y, word)
        x += pdf.get_string_width(word) + 0.25 * 7 / pdf.k
    pdf.set_y(y + 5)
    pdf.set_font("helvetica", size=9)
    with pdf.table(width=120) as table:
        for i, values in enumerate([("Flange size", "Bolt torque"), ("DN 50", "85 newton metres")]):
            pdf.set_char_spacing(4 if i == 0 else 0)
            row = table.row()
            for value in values:
                row.cell(value)
    pdf.set_char_spacing(0)
    with pdf.rotation(90, x=6, y=200):
        pdf.text(6, 200, "Draft copy for review")
    pdf.output(str(path))


def test_pdf_table_pages_keep_words_of_letter_spaced_and_tightly_set_type(tmp_path: Path) -> None:
    """Before: "Z e p h y r t o r q u e l i m i t s", "Eachflangebolttakesitsquuxbolttorque." and
    "weiver rof ypoc tfarD", one letter or word a line."""
    path = tmp_path / "torque.pdf"
    _pdf_spaced_and_tight(path)
    doc = _load(path, "pdf")
    # the line in the largest type of a one-page PDF without bookmarks is its heading
    assert doc.text == ("# Zephyr torque limits\nEach flange bolt takes its quuxbolt torque.\n\n"
                        "| Flange size | Bolt torque |\n| --- | --- |\n| DN 50 | 85 newton metres |\n\n"
                        "Draft copy for review")


async def test_words_of_letter_spaced_and_tight_pdf_type_are_found_by_keyword_search(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    _pdf_spaced_and_tight(tmp_path / "torque.pdf")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    for term in ("quuxbolt", "Zephyr", "flange", "Draft"):
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert response["results"], term
        top = response["results"][0]
        assert top["title"] == "Zephyr torque limits" and top["metadata"]["page"] == 1, (term, top)
        assert "Zephyr torque limits\nEach flange bolt takes its quuxbolt torque." in top["content"], top
        assert "| Flange size | Bolt torque |" in top["content"], top


def _pdf_fake_bold(path: Path) -> None:
    """Page 1: a heading in fake bold (drawn four times, a quarter point apart, as the Chinese annual
    report of pdfplumber's issue 842 is), then plain text; page 2: plain text only."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt")
    pdf.add_page()
    pdf.set_font("helvetica", size=20)
    for dx, dy in ((0, 0), (0.25, 0), (0, 0.25), (0.25, 0.25)):
        pdf.text(72 + dx, 100 + dy, "Annual Report 2011")
    pdf.set_font("helvetica", size=11)
    pdf.text(72, 140, "Revenue of the quuxcorp group grew in every quarter.")
    pdf.add_page()
    pdf.text(72, 100, "Second page of plain text.")
    pdf.output(str(path))


def test_pdf_fake_bold_is_read_once(tmp_path: Path) -> None:
    """Before: "Annual Report 2011Annual Report 2011Annual Report 2011Annual Report 2011" (pypdf reads
    every copy)."""
    path = tmp_path / "report.pdf"
    _pdf_fake_bold(path)
    doc = _load(path, "pdf")
    assert doc.text == ("Annual Report 2011\nRevenue of the quuxcorp group grew in every quarter.\n\n"
                        "Second page of plain text.")
    assert [doc.text[a:b] for a, b in doc.pages][1] == "Second page of plain text."


def _pdf_fake_bold_columns(path: Path) -> None:
    """One page in two columns, each under a heading in fake bold (drawn four times)."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt")
    pdf.add_page()
    for x, heading, word in ((60, "Pump Setup", "zephyr"), (320, "Valve Care", "quux")):
        pdf.set_font("helvetica", size=16)
        for dx, dy in ((0, 0), (0.25, 0), (0, 0.25), (0.25, 0.25)):
            pdf.text(x + dx, 80 + dy, heading)
        pdf.set_font("helvetica", size=10)
        for line in range(18):
            pdf.text(x, 110 + 14 * line, f"Line {line + 1} of the {word} column text.")
    pdf.output(str(path))


def test_pdf_fake_bold_in_two_columns_is_read_once_column_by_column(tmp_path: Path) -> None:
    """A page set in two columns, each under a heading in fake bold: before, pypdf's text kept every
    copy ("Pump SetupPump SetupPump SetupPump Setup"); read straight across, the columns would interleave."""
    path = tmp_path / "columns.pdf"
    _pdf_fake_bold_columns(path)
    text = _load(path, "pdf").text
    assert text.count("Pump Setup") == 1 and text.count("Valve Care") == 1, text
    left, right = text.split("\n\n")
    assert left.splitlines()[:3] == ["Pump Setup", "Line 1 of the zephyr column text.", "Line 2 of the zephyr column text."]
    assert right.splitlines()[0] == "Valve Care" and "zephyr" not in right and "quux" not in left
    assert right.splitlines()[-1] == "Line 18 of the quux column text."


def test_pdf_subscripts_and_superscripts_stay_in_their_line(tmp_path: Path) -> None:
    """Before: "Water is H O and ammonium is NH +; E = mc2." with "2 4" as a line of its own (a
    subscript sits lower than the line's tops allow). Small type under the line stays apart."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt")
    pdf.add_page()
    pdf.set_font("helvetica", size=10)
    pdf.set_xy(72, 100)
    for text, position in (("Water is H", "LINE"), ("2", "SUB"), ("O and ammonium is NH", "LINE"), ("4", "SUB"),
                           ("+", "SUP"), ("; E = mc", "LINE"), ("2", "SUP"), (".", "LINE")):
        pdf.char_vpos = position  # type: ignore[assignment]
        pdf.write(12, text)
    pdf.char_vpos = "LINE"
    pdf.ln(30)
    pdf.set_font("helvetica", size=6)
    pdf.set_x(72)
    pdf.write(8, "Footnote in small type under the line.")
    pdf.ln(20)
    pdf.set_font("helvetica", size=9)
    with pdf.table(width=200) as table:  # a ruled table: the page is read from its characters
        for values in (("Ion", "Charge"), ("Ammonium", "+1")):
            row = table.row()
            for value in values:
                row.cell(value)
    path = tmp_path / "ions.pdf"
    pdf.output(str(path))
    assert _load(path, "pdf").text == ("Water is H2O and ammonium is NH4+; E = mc2.\n"
                                       "Footnote in small type under the line.\n\n"
                                       "| Ion | Charge |\n| --- | --- |\n| Ammonium | +1 |")


def test_pdf_script_lines_join_only_beside_their_glyphs() -> None:
    """Small type joins a larger line only where it sits between that line's glyphs (pure logic)."""
    from graphrag.ingest.pdf_reader import _pdf_inline_scripts

    def glyphs(text: str, size: float, x: float, top: float) -> list[dict[str, Any]]:
        return [{"text": t, "x0": x + i * size * 0.5, "x1": x + (i + 1) * size * 0.5, "top": top,
                 "bottom": top + size, "size": size} for i, t in enumerate(text)]

    def read(lines: list[list[dict[str, Any]]]) -> list[str]:
        return ["".join(c["text"] for c in sorted(line, key=lambda c: c["x0"])) for line in _pdf_inline_scripts(lines)]

    heading = glyphs("NCCN Guidelines 2020", 12, 50, 100)
    # Two lines of small print stacked at the end of a heading's line (a box of links) stay lines of their own.
    box = [glyphs("Guidelines Index", 6, 250, 100), glyphs("Table of Contents", 6, 250, 106)]
    assert read([heading, *box]) == ["NCCN Guidelines 2020", "Guidelines Index", "Table of Contents"]
    # A subscript right after a letter joins its line; a drop cap hosts nothing (fewer glyphs than its neighbour).
    base = glyphs("CO", 10, 50, 100) + glyphs(" total", 10, 63, 100)
    assert read([base, glyphs("2", 7, 60, 105)]) == ["CO2 total"]
    drop_cap = glyphs("W", 30, 10, 100)
    assert read([drop_cap, glyphs("ater is wet", 10, 30, 105)]) == ["W", "ater is wet"]


def test_pdf_overprint_rule() -> None:
    """Copies are glyphs repeated within a point and a tenth of an em, on pages where they are 5% of
    the glyphs (pure logic)."""
    from graphrag.ingest.pdf_reader import _pdf_overprints

    def glyphs(text: str, size: float, x: float = 100.0, top: float = 50.0, advance: float | None = None
               ) -> list[dict[str, Any]]:
        step = size * 0.5 if advance is None else advance
        return [{"text": t, "x0": x + i * step, "top": top, "size": size} for i, t in enumerate(text)]

    heading = [c for dx, dy in ((0, 0), (0.25, 0), (0, 0.25), (0.25, 0.25))
               for c in glyphs("Annual Report", 20, 100 + dx, 50 + dy)]
    copies = _pdf_overprints(heading + glyphs("plain text follows the heading", 10, top=90))
    assert len(copies) == 3 * len("AnnualReport")  # three of each glyph's four draws
    assert {id(c) for c in heading[len("Annual Report"):] if c["text"] != " "} == copies
    # "ll" in 4 pt type: the second l starts 0.9 pt after the first, within a point but not a tenth of an em.
    assert _pdf_overprints(glyphs("all skill fill ill", 4, advance=0.9)) == set()
    # A few copies on a page of plain text are left alone (under 5%).
    assert _pdf_overprints(glyphs("x" * 2, 10, advance=0.0) + glyphs("plain text " * 10, 10, top=90)) == set()


async def test_fake_bold_pdf_heading_is_found_by_keyword_search(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    _pdf_fake_bold(tmp_path / "report.pdf")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    response = await rest_search(router, "annual report quuxcorp", mode="keyword", limit=3, collections=[collection])
    top = response["results"][0]
    assert top["metadata"]["page"] == 1 and top["content"].startswith("Annual Report 2011\n"), top


def test_pdf_line_words_from_gaps_and_space_glyphs() -> None:
    """The word rule on characters as pdfplumber gives them (pure logic)."""
    from graphrag.ingest.pdf_reader import _pdf_left_to_right, _pdf_line_text, _pdf_text_lines

    def line(spec: str, size: float = 10.0, advance: float = 5.0, tracking: float = 0.0,
             word_gap: float = 0.0) -> list[dict[str, Any]]:
        chars, x = [], 100.0
        for letter in spec:
            if letter == "_":  # a word placed apart, no glyph
                x += word_gap
                continue
            chars.append({"text": letter, "x0": x, "x1": x + (advance if letter != " " else 2.5), "size": size,
                          "matrix": (1, 0, 0, 1, x, 0)})
            x = chars[-1]["x1"] + tracking
        return chars

    assert _pdf_line_text(line("max_bolt_torque", size=7, word_gap=1.75)) == "max bolt torque"
    assert _pdf_line_text(line("max_bolt", size=7, word_gap=0.7)) == "maxbolt"  # kerning, not a word gap
    assert _pdf_line_text(line("tracked type", tracking=5.0)) == "tracked type"
    assert _pdf_line_text(line("tracked type_far", tracking=5.0, word_gap=9.0)) == "tracked type far"
    assert _pdf_line_text(line("1 2 3", tracking=0.0)) == "1 2 3"
    assert _pdf_line_text(line("oﬃce")) == "office"  # a ligature glyph written out
    assert _pdf_line_text([]) == ""
    assert _pdf_line_text(line("日本語の文章", size=10.5, advance=10.5, tracking=2.0)) == "日本語の文章"  # CJK set apart
    assert _pdf_line_text(line("TRACKED_HEADING", size=12, tracking=2.0, word_gap=6.0)) == "TRACKED HEADING"
    mark = {"text": "\u0308", "x0": 107.0, "x1": 107.0, "size": 10.0, "matrix": (1, 0, 0, 1, 0, 0)}
    assert _pdf_line_text(line("nive")[:2] + [mark] + line("nive")[2:]).startswith("ni\u0308")  # a mark after its letter
    mirrored = [dict(c, matrix=(-1, 0, 0, 1, 0, 0)) for c in line("backwards")]
    assert not _pdf_left_to_right(mirrored) and _pdf_left_to_right(line("forwards" * 2) + mirrored[:1])
    turned = [dict(c, upright=False) for c in line("sideways")]
    assert not _pdf_left_to_right(turned) and _pdf_left_to_right(line("upright text") + turned[:3])

    def label(text: str, bottom: float) -> list[dict[str, Any]]:  # turned counter-clockwise: reads upwards
        return [{"text": t, "x0": 20.0, "x1": 30.0, "top": bottom - 6 * (i + 1), "bottom": bottom - 6 * i,
                 "size": 10.0, "upright": False, "matrix": (0, 1, -1, 0, 0, 0)} for i, t in enumerate(text)]

    assert [text for _, text in _pdf_text_lines(label("North", 300.0) + label("South", 600.0))] == ["North", "South"]


def test_pdf_title_placeholders_give_way_to_the_file_name(tmp_path: Path) -> None:
    for title, expected in [("Microsoft Word - Pump Manual.doc", "manual"), ("Untitled document", "manual"),
                            ("Microsoft Word - Pump Manual", "Pump Manual"), ("Zephyr Pump Manual", "Zephyr Pump Manual")]:
        path = tmp_path / "manual.pdf"
        _pdf_with_table(path, [("Part", "Mass"), ("Hull", "1200 kg")], title=title)
        assert _load(path, "pdf").title == expected, title


def test_docx_title_placeholders_give_way_to_the_text_or_file_name(tmp_path: Path) -> None:
    """Word's and converters' default titles ("Word Document", a file name) title nothing (stop 53)."""
    import docx

    for title, expected in [("Word Document", "Pump notes"), ("Microsoft Word - pump.docx", "Pump notes"),
                            ("Zephyr Pump Notes", "Zephyr Pump Notes")]:
        document = docx.Document()
        document.core_properties.title = title
        document.add_heading("Pump notes", level=1)
        document.add_paragraph("The pump runs at 42 glorbars.")
        path = tmp_path / "notes.docx"
        document.save(str(path))
        assert _load(path, "docx").title == expected, title


def _docx_with_a_box(path: Path) -> None:
    """A DOCX with a note framed in a one-cell table (a heading and two paragraphs in it) and a data table."""
    import docx

    document = docx.Document()
    document.add_heading("Pump notes", level=1)
    box = document.add_table(rows=1, cols=1).cell(0, 0)
    box.paragraphs[0].text = "Warning"
    box.paragraphs[0].style = document.styles["Heading 2"]
    box.add_paragraph("Close the zyxquart valve first.")
    box.add_paragraph("Then drain the tank.")
    data = document.add_table(rows=2, cols=2)
    for row, values in zip(data.rows, [("Part", "Mass"), ("Hull", "1200 kg")], strict=True):
        for cell, value in zip(row.cells, values, strict=True):
            cell.text = value
    document.save(str(path))


def test_docx_one_column_table_is_a_box_read_as_the_documents_text(tmp_path: Path) -> None:
    path = tmp_path / "notes.docx"
    _docx_with_a_box(path)
    assert _load(path, "docx").text == ("# Pump notes\n\n## Warning\n\nClose the zyxquart valve first.\n\n"
                                        "Then drain the tank.\n\n| Part | Mass |\n| --- | --- |\n| Hull | 1200 kg |")


async def test_docx_box_paragraphs_are_chunked_under_their_heading(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    _docx_with_a_box(tmp_path / "notes.docx")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    [hit] = (await rest_search(router, "zyxquart valve", mode="keyword", limit=3, collections=[collection]))["results"]
    assert hit["heading_path"] == ["Pump notes", "Warning"], hit
    assert "Close the zyxquart valve first.\n\nThen drain the tank." in hit["content"], hit  # not one table cell


async def test_docx_placeholder_title_is_not_the_documents_title_in_the_stores(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    import docx

    document = docx.Document()
    document.core_properties.title = "Word Document"
    document.add_heading("Zephyr pump notes", level=1)
    document.add_paragraph("The pump runs at 42 glorbars.")
    document.save(str(tmp_path / "notes.docx"))
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    [hit] = (await rest_search(router, "glorbars", mode="keyword", limit=3, collections=[collection]))["results"]
    assert hit["title"] == "Zephyr pump notes", hit


def test_pdf_without_pages_and_pdf_errors_are_load_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pypdf import PdfWriter

    empty = tmp_path / "nopages.pdf"
    with empty.open("wb") as handle:
        PdfWriter().write(handle)
    with pytest.raises(LoadError, match="nopages.pdf: the PDF has no pages"):
        _load(empty, "pdf")
    # pypdf raises plain Python errors from deep inside on damaged files (found by mutating real PDFs).
    import pypdf

    from fpdf import FPDF

    path = tmp_path / "damaged.pdf"
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 8, "Plain text, no table.")
    pdf.output(str(path))

    def broken(self: Any, *args: Any, **kwargs: Any) -> str:
        raise AttributeError("'DictionaryObject' object has no attribute 'get_data'")

    monkeypatch.setattr(pypdf.PageObject, "extract_text", broken)
    with pytest.raises(LoadError, match=r"damaged.pdf: unreadable PDF \(AttributeError: "):
        _load(path, "pdf")


# -- Word documents as real ones come ------------------------------------------------------------------
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
FOOTNOTES_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/footnotes"


def _docx_from_body(path: Path, body: str, footnotes: str = "") -> None:
    """A DOCX (python-docx's template: its styles and numbering) whose body is ``body`` (WordprocessingML,
    ``w:`` prefix), with a footnotes part when ``footnotes`` is given."""
    import io
    import zipfile

    import docx

    buf = io.BytesIO()
    docx.Document().save(buf)
    source = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    out = zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED)
    ns = (f'xmlns:w="{W_NS}" xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006" '
          'xmlns:m="http://schemas.openxmlformats.org/officeDocument/2006/math"')
    for item in source.infolist():
        data = source.read(item.filename)
        if item.filename == "word/document.xml":
            data = f'<?xml version="1.0" encoding="UTF-8"?><w:document {ns}><w:body>{body}</w:body></w:document>'.encode()
        elif footnotes and item.filename == "word/_rels/document.xml.rels":
            data = data.replace(b"</Relationships>", f'<Relationship Id="rIdFn" Type="{FOOTNOTES_REL}" '
                                                     'Target="footnotes.xml"/></Relationships>'.encode())
        elif footnotes and item.filename == "[Content_Types].xml":
            data = data.replace(b"</Types>", b'<Override PartName="/word/footnotes.xml" ContentType="application/'
                                             b'vnd.openxmlformats-officedocument.wordprocessingml.footnotes+xml"/></Types>')
        out.writestr(item, data)
    if footnotes:
        out.writestr("word/footnotes.xml", f'<?xml version="1.0"?><w:footnotes {ns}>{footnotes}</w:footnotes>')
    out.close()


def _p(text: str, style: str = "", num: tuple[int, int] | None = None) -> str:
    props = (f'<w:pStyle w:val="{style}"/>' if style else "") + (
        f'<w:numPr><w:ilvl w:val="{num[1]}"/><w:numId w:val="{num[0]}"/></w:numPr>' if num else "")
    return f"<w:p><w:pPr>{props}</w:pPr><w:r><w:t xml:space=\"preserve\">{text}</w:t></w:r></w:p>"


def test_docx_text_in_revisions_controls_fields_boxes_and_notes_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "manual.docx"
    body = (
        _p("Pump Manual", "Title")
        # a tracked insertion and deletion: the inserted text is the document's, the deleted is not
        + '<w:p><w:r><w:t xml:space="preserve">The limit is </w:t></w:r><w:ins w:id="1" w:author="a"><w:r>'
          '<w:t>42</w:t></w:r></w:ins><w:del w:id="2" w:author="a"><w:r><w:delText>40</w:delText></w:r></w:del>'
          '<w:r><w:t xml:space="preserve"> glorbars.</w:t></w:r></w:p>'
        # content controls: a block one, an inline one; a simple field; a symbol
        + '<w:sdt><w:sdtPr/><w:sdtContent>' + _p("The warranty lasts 24 months.") + '</w:sdtContent></w:sdt>'
        + '<w:p><w:r><w:t xml:space="preserve">Customer: </w:t></w:r><w:sdt><w:sdtContent><w:r><w:t>ACME Corp</w:t>'
          '</w:r></w:sdtContent></w:sdt><w:r><w:t xml:space="preserve">, see section </w:t></w:r>'
          '<w:fldSimple w:instr=" REF sec "><w:r><w:t>4.2 Pressure</w:t></w:r></w:fldSimple>'
          '<w:r><w:t xml:space="preserve"> at 90</w:t></w:r><w:r><w:sym w:font="Symbol" w:char="F0B0"/></w:r></w:p>'
        # a text box, once as a drawing and once as its VML fallback: read once
        + '<w:p><w:r><w:t>Figure:</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing>'
          '<w:txbxContent>' + _p("Datum plane") + '</w:txbxContent></w:drawing></mc:Choice><mc:Fallback>'
          '<w:pict><w:txbxContent>' + _p("Datum plane") + '</w:txbxContent></w:pict></mc:Fallback>'
          '</mc:AlternateContent></w:r></w:p>'
        + '<w:p><w:r><w:t>Water boils at 100 degrees.</w:t></w:r><w:r><w:footnoteReference w:id="1"/></w:r></w:p>'
    )
    footnotes = ('<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
                 '<w:footnote w:id="1">' + _p("At sea level.") + '</w:footnote>')
    _docx_from_body(path, body, footnotes)
    doc = _load(path, "docx")
    assert doc.title == "Pump Manual"
    assert doc.text == ("# Pump Manual\n\nThe limit is 42 glorbars.\n\nThe warranty lasts 24 months.\n\n"
                        "Customer: ACME Corp, see section 4.2 Pressure at 90°\n\nFigure:\n\nDatum plane\n\n"
                        "Water boils at 100 degrees.[1]\n\n[1] At sea level.")


def test_docx_lists_headings_and_tables_keep_their_structure(tmp_path: Path) -> None:
    path = tmp_path / "steps.docx"
    row = "<w:tr>{}</w:tr>"
    cell = "<w:tc><w:tcPr>{}</w:tcPr>{}</w:tc>"
    inner = ("<w:tbl>" + "".join(row.format(cell.format("", _p(f"r{r}c1")) + cell.format("", _p(f"r{r}c2")))
                                 for r in (1, 2)) + "</w:tbl>")
    table = ("<w:tbl>" + row.format(cell.format("", _p("Region")) + cell.format("", _p("Part")))
             + row.format(cell.format('<w:vMerge w:val="restart"/>', _p("North")) + cell.format("", _p("Valve")))
             + "<w:sdt><w:sdtContent>" + row.format(cell.format("<w:vMerge/>", _p("")) + cell.format("", _p("Pump")))
             + "</w:sdtContent></w:sdt>"
             + row.format(cell.format("", _p("Nested")) + cell.format("", _p("before") + inner + _p("after")))
             + "</w:tbl>")
    body = (_p("Setup", "Heading1")
            + '<w:p><w:pPr><w:outlineLvl w:val="1"/></w:pPr><w:r><w:t>Outline heading</w:t><w:br/>'
              '<w:t>on two lines</w:t></w:r></w:p>'
            + _p("Open the valve.", "ListNumber") + _p("Check the gauge.", "ListNumber")
            + _p("# not a heading") + _p("- not a list")
            + table)
    _docx_from_body(path, body)
    doc = _load(path, "docx")
    assert doc.text == ("# Setup\n\n## Outline heading on two lines\n\n1. Open the valve.\n2. Check the gauge.\n\n"
                        "\\# not a heading\n\n\\- not a list\n\n| Region | Part |\n| --- | --- |\n| North | Valve |\n"
                        "| North | Pump |\n| Nested | before r1c1 r1c2 r2c1 r2c2 after |")


@pytest.mark.parametrize("name,mangle,message", [
    ("deflate64", "method", "unreadable DOCX \\(NotImplementedError: That compression method is not supported"),
    ("encrypted", "flag", "unreadable DOCX \\(RuntimeError: File 'word/document.xml' is encrypted"),
    ("macro", "content-type", "unreadable DOCX \\(not a Word document: content type application/vnd.ms-word"),
])
def test_docx_zip_and_type_errors_are_one_line_load_errors(tmp_path: Path, name: str, mangle: str, message: str) -> None:
    import struct

    path = tmp_path / f"{name}.docx"
    _docx_from_body(path, _p("Text."))
    data = bytearray(path.read_bytes())
    if mangle == "content-type":  # a macro-enabled document renamed to .docx
        import io
        import zipfile

        source = zipfile.ZipFile(io.BytesIO(path.read_bytes()))
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as out:
            for item in source.infolist():
                body = source.read(item.filename)
                if item.filename == "[Content_Types].xml":
                    body = body.replace(b"application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
                                        b"application/vnd.ms-word.document.macroEnabled.main+xml")
                out.writestr(item, body)
        data = bytearray(buf.getvalue())
    else:
        # In word/document.xml's central directory entry: the compression method (9 = Deflate64), or
        # the "encrypted" flag bit.
        at = data.find(b"PK\x01\x02")
        while at >= 0:
            name_len = struct.unpack_from("<H", data, at + 28)[0]
            if data[at + 46:at + 46 + name_len] == b"word/document.xml":
                if mangle == "method":
                    struct.pack_into("<H", data, at + 10, 9)
                else:
                    struct.pack_into("<H", data, at + 8, struct.unpack_from("<H", data, at + 8)[0] | 1)
                break
            at = data.find(b"PK\x01\x02", at + 4)
    path.write_bytes(bytes(data))
    with pytest.raises(LoadError, match=f"^{name}.docx: {message}"):
        _load(path, "docx")


async def test_docx_content_controls_and_revisions_are_searchable(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    body = ('<w:sdt><w:sdtContent>' + _p("The warranty covers the quasiflange for 24 months.") + '</w:sdtContent></w:sdt>'
            + '<w:p><w:r><w:t xml:space="preserve">Rated at </w:t></w:r><w:ins w:id="1" w:author="a"><w:r>'
              '<w:t>42 zorbars</w:t></w:r></w:ins><w:del w:id="2" w:author="a"><w:r><w:delText>40 blimbars</w:delText>'
              '</w:r></w:del></w:p>')
    _docx_from_body(tmp_path / "warranty.docx", body)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    for term in ("quasiflange", "zorbars"):
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert [r["title"] for r in response["results"]] == ["warranty"], term
    response = await rest_search(router, "blimbars", mode="keyword", limit=3, collections=[collection])
    assert response["results"] == []  # deleted text is not the document's


DGM_NS = "http://schemas.openxmlformats.org/drawingml/2006/diagram"
A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"


def _docx_with_pictures_diagram_and_drop_cap(path: Path) -> None:
    """A DOCX as Word writes one: two pictures (one with alt text, one with Office's guessed alt
    text), a SmartArt diagram of three steps (the middle one with a sub-step), and a drop cap."""
    import base64
    import io

    import docx
    from docx.opc.constants import RELATIONSHIP_TYPE as RT
    from docx.opc.packuri import PackURI
    from docx.opc.part import Part
    from docx.oxml import parse_xml

    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==")
    document = docx.Document()
    document.add_heading("Quellport pumps", 1)
    run = document.add_paragraph("The intake ").add_run()
    run.add_picture(io.BytesIO(png))
    run.element.xpath(".//wp:docPr")[0].set("descr", "Cutaway of the zyxquart impeller housing")
    document.paragraphs[-1].add_run(" sits below the waterline.")
    document.add_paragraph().add_run().add_picture(io.BytesIO(png))
    document.paragraphs[-1].runs[0].element.xpath(".//wp:docPr")[0].set(
        "descr", "A picture containing diagram. Description automatically generated")
    points = "".join(
        f'<dgm:pt modelId="{key}"{kind}><dgm:t><a:p><a:r><a:t>{text}</a:t></a:r></a:p></dgm:t></dgm:pt>'
        for key, kind, text in (("0", ' type="doc"', ""), ("1", "", "Prime the Vantorel pump"),
                                ("2", "", "Open the valve"), ("3", "", "Check the gauge"), ("4", "", "Start")))
    links = "".join(f'<dgm:cxn modelId="c{dst}" srcId="{src}" destId="{dst}" srcOrd="0" destOrd="0"/>'
                    for src, dst in (("0", "1"), ("0", "2"), ("2", "3"), ("0", "4")))
    data = (f'<dgm:dataModel xmlns:dgm="{DGM_NS}" xmlns:a="{A_NS}"><dgm:ptLst>{points}</dgm:ptLst>'
            f'<dgm:cxnLst>{links}</dgm:cxnLst></dgm:dataModel>')
    part = Part(PackURI("/word/diagrams/data1.xml"),
                "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml", data.encode(),
                document.part.package)
    rel = document.part.relate_to(part, RT.DIAGRAM_DATA)
    document.add_paragraph("Steps:")._p.addnext(parse_xml(
        f'<w:p xmlns:w="{W_NS}"><w:r><w:drawing><wp:inline xmlns:wp="http://schemas.openxmlformats.org/drawingml/'
        f'2006/wordprocessingDrawing"><wp:extent cx="1" cy="1"/><wp:docPr id="9" name="Diagram 1"/><a:graphic '
        f'xmlns:a="{A_NS}"><a:graphicData uri="{DGM_NS}"><dgm:relIds xmlns:dgm="{DGM_NS}" xmlns:r="http://schemas.'
        f'openxmlformats.org/officeDocument/2006/relationships" r:dm="{rel}"/></a:graphicData></a:graphic>'
        '</wp:inline></w:drawing></w:r></w:p>'))
    document.add_paragraph("D")._p.get_or_add_pPr().append(parse_xml(
        f'<w:framePr xmlns:w="{W_NS}" w:dropCap="drop" w:lines="3" w:wrap="around" w:vAnchor="text" w:hAnchor="text"/>'))
    document.add_paragraph("rain the sump weekly.")
    document.save(str(path))


def test_docx_pictures_alt_text_diagrams_and_drop_caps_are_read(tmp_path: Path) -> None:
    path = tmp_path / "pumps.docx"
    _docx_with_pictures_diagram_and_drop_cap(path)
    doc = _load(path, "docx")
    assert doc.text == (
        "# Quellport pumps\n\nThe intake ![Cutaway of the zyxquart impeller housing](media/image1.png) sits "
        "below the waterline.\n\nSteps:\n\n- Prime the Vantorel pump\n- Open the valve\n  - Check the gauge\n"
        "- Start\n\nDrain the sump weekly."), doc.text


async def test_images_alt_text_and_diagram_steps_are_searchable(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    _docx_with_pictures_diagram_and_drop_cap(tmp_path / "pumps.docx")
    (tmp_path / "dock.adoc").write_text("= Dock guide\n\n.Marrowgate crane layout\nimage::crane.svg[Quuxlift crane rails]\n")
    (tmp_path / "berth.rst").write_text("Berth guide\n===========\n\n.. image:: berth.png\n   :alt: Blimbar mooring posts\n")
    (tmp_path / "quay.html").write_text('<html><head><title>Quay guide</title></head><body><main><h1>Quay guide</h1>'
                                        '<p><img src="q.png" alt="Glorbar tide gauge on the quay"></p></main></body></html>')
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (4, [])
    for term, title in (("zyxquart impeller", "Quellport pumps"), ("Vantorel pump", "Quellport pumps"),
                        ("Drain the sump", "Quellport pumps"), ("Quuxlift crane rails", "Dock guide"),
                        ("Marrowgate crane layout", "Dock guide"), ("Blimbar mooring posts", "Berth guide"),
                        ("Glorbar", "Quay guide")):
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert [r["title"] for r in response["results"]] == [title], term
    response = await rest_search(router, "automatically generated", mode="keyword", limit=3, collections=[collection])
    assert response["results"] == []  # Office's guessed alt text is not the document's


def test_images_alt_text_in_rst_and_asciidoc_is_kept_as_markdown_images(tmp_path: Path) -> None:
    """As a Markdown page keeps ``![alt](src)``: an image's alt text is what the image says; a figure's
    title is its caption. Alt text that describes nothing ("logo", a file name) is left out."""
    rst = tmp_path / "guide.rst"
    rst.write_text("Guide\n=====\n\nThe zyxquart debugger.\n\n.. image:: debugger.png\n   :class: invert-in-dark-mode\n   "
                   ":alt: The zyxquart debugger in action\n\n.. image:: logo.png\n   :alt: logo\n\nAnd a |reel| inline.\n\n"
                   ".. |reel| image:: reel.jpg\n   :alt: A Vantorel film reel\n")
    assert _load(rst, "rst").text == ("# Guide\n\nThe zyxquart debugger.\n\n![The zyxquart debugger in action](debugger.png)"
                                      "\n\nAnd a ![A Vantorel film reel](reel.jpg) inline.")
    adoc = tmp_path / "guide.adoc"
    adoc.write_text("= Guide\n\nIntro.\n\n.Marrowgate data access layers\nimage::layers.svg[Data Access Layers,align=center]"
                    "\n\nimage::spacer.png[width=600]\n\nimage::sunset.jpg[alt=Sunset over Quellport,width=300]\n\nAfter.\n")
    assert _load(adoc, "adoc").text == ("# Guide\n\nIntro.\n\nMarrowgate data access layers\n\n"
                                        "![Data Access Layers](layers.svg)\n\n![Sunset over Quellport](sunset.jpg)\n\nAfter.\n")


# -- Markdown as real projects write it ----------------------------------------------------------------
async def _entity_names(runtime: Runtime, collection: str) -> set[str]:
    """The names of the collection's entities in Neo4j."""
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN collect(e.name) AS names", c=collection)
    return set(rows[0]["names"])


def _md(tmp_path: Path, text: str, name: str = "page.md") -> Document:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return _load(path, "md")


def test_markdown_front_matter_that_does_not_parse_keeps_the_document(tmp_path: Path) -> None:
    doc = _md(tmp_path, "---\ntitle: Broken: colon\ntags: [a, b\n---\n# Real Heading\n\nValuable body text.\n")
    assert doc.title == "Real Heading" and "Valuable body text." in doc.text and doc.metadata == {}
    doc = _md(tmp_path, "---\n\nA file that opens with a thematic break.\n\n---\n\n# Section\n")
    assert "opens with a thematic break" in doc.text
    doc = _md(tmp_path, '+++\ntitle = "Toml Title"\ndraft = false\n+++\nBody.\n')
    assert (doc.title, doc.metadata, doc.text.strip()) == ("Toml Title", {"draft": False}, "Body.")
    doc = _md(tmp_path, "---\n---\n# Empty Front Matter\n")
    assert doc.title == "Empty Front Matter" and "---" not in doc.text
    doc = _md(tmp_path, "---\ntitle:\n  en: English Title\n  fr: Titre\n---\nBody.\n")
    assert doc.title == "English Title"


@pytest.mark.parametrize("text,title", [
    ('<h1 align="center">Acme CLI</h1>\n\nInstall:\n\n```bash\n# install with pip\npip install acme\n```\n', "Acme CLI"),
    ("Project Title\n=============\n\nText.\n\n## Usage\n", "Project Title"),
    ("# Dependencies { #dependencies }\n", "Dependencies"),
    ("# `async` and **await** with [asyncio](https://docs.python.org)\n", "async and await with asyncio"),
    ("# Using C#\n", "Using C#"),
    ("<!--\n# TODO rewrite\n-->\n# Kept Title\n", "Kept Title"),
    ('<!-- Old headings. Do not remove. -->\n\n<a id="closures-old"></a>\n\n## Closures\n\nText.\n', "Closures"),
    # no level-1 heading, and text before the first one: the folder's name (a README)
    ('<p align="center"><img src="logo.svg" alt="Widgetry"></p>\n\nWidgetry renders widgets fast.\n\n## Sponsors\n',
     "widgetry"),
])
def test_markdown_titles(tmp_path: Path, text: str, title: str) -> None:
    assert _md(tmp_path, text, "widgetry/README.md").title == title


def test_markdown_chunks_keep_code_whole_and_headings_clean(tmp_path: Path, models: Any) -> None:
    text = ("# Install { #install }\n\nIntro.\n\n"
            '=== "pip"\n\n    ```bash\n    # Create a virtual environment first\n    pip install widgetry\n    ```\n\n'
            '``` title="Example"\n    ``` c\n    int main(void);\n    ```\n\n# not a heading inside the outer block\n```\n\n'
            "<!--\n## Old notes\n-->\n\n"
            "Setext Section\n--------------\n\nAfter the comment.\n\n## `Client` and **Server**\n\nLast.\n")
    doc = _md(tmp_path, text)
    chunks = Chunker(models.counter, ChunkOptions(budget=20, overlap_tokens=0)).chunk(doc)
    paths = {c.heading_path for c in chunks}
    assert paths == {("Install",), ("Install", "Setext Section"), ("Install", "Client and Server")}
    [pip] = [c.text for c in chunks if "pip install widgetry" in c.text]  # the indented block stays whole
    assert pip.count("```") == 2 and "Create a virtual environment" in pip
    for chunk in chunks:  # no chunk ends inside a fenced block it opened
        opened = [line for line in chunk.text.splitlines() if line.strip().startswith("```")]
        assert len(opened) % 2 == 0, chunk.text


def test_pieces_of_a_code_block_over_the_model_limit_are_code_not_prose(tmp_path: Path, models: Any) -> None:
    from graphrag.ingest.textprep import prose_views

    body = "\n".join(f"def function_number_{i}(argument_{i}):\n    return compute(argument_{i})" for i in range(60))
    doc = _md(tmp_path, f"# Big code\n\nIntro paragraph.\n\n```python\n{body}\n```\n\nAfter.\n")
    chunks = Chunker(models.counter, ChunkOptions()).chunk(doc)
    pieces = [c for c in chunks if "function_number" in c.text]
    assert len(pieces) >= 3 and all(c.has_code for c in pieces)
    views = prose_views([c.text for c in chunks])
    for chunk, view in zip(chunks, views, strict=True):
        if chunk in pieces:
            assert not view.text.strip() and view.code_blocks, chunk.text[:80]
    assert views[-1].text.strip() == "After."


@pytest.mark.parametrize("line,prose,codes", [
    ("Set `{\"http://\": proxy}` at `http://localhost:8000`; use `<details>` and `Option<S>`.",
     'Set  {"http://": proxy}  at  http://localhost:8000 ; use  <details>  and  Option<S> .',
     ['{"http://": proxy}', "http://localhost:8000", "<details>", "Option<S>"]),
    ("Written at AT&amp;T &mdash; the &#x27;first&#x27;[^1].", "Written at AT&T — the 'first' .", []),
    ("> [!NOTE]\n> Requires **Node** 18.", "\nRequires  Node  18.", []),
    (":::tip Pro tip\nColons.\n:::", "Pro tip.\nColons.\n", []),
    ("See <https://example.com/guide> or <team@example.com>.", "See   or  .", []),
    ("[^1]: Ada wrote the first algorithm.", "Ada wrote the first algorithm.", []),
])
def test_prose_view_reads_markup_as_a_reader_would(line: str, prose: str, codes: list[str]) -> None:
    from graphrag.ingest.textprep import prose_view

    view = prose_view(line)
    assert view.text.rstrip("\n") == prose.rstrip("\n")
    assert [c for _, _, c in view.code_spans] == codes
    assert [view.text[a:b] for a, b, _ in view.code_spans] == codes


def test_extensionless_project_files_and_markdown_extensions_are_read(tmp_path: Path) -> None:
    from graphrag.ingest.load import discover

    for name in ("README", "LICENSE", "CHANGELOG", "notes.mkd", "Makefile"):
        (tmp_path / name).write_text("Some text.\n")
    found, skipped = discover([tmp_path])
    assert sorted((f.path.name, f.file_type) for f in found) == [
        ("CHANGELOG", "txt"), ("LICENSE", "txt"), ("README", "txt"), ("notes.mkd", "md")]
    assert [s["path"].rsplit("/", 1)[-1] for s in skipped] == ["Makefile"]


def test_text_titles_skip_rules_and_columns(tmp_path: Path) -> None:
    (tmp_path / "rst.txt").write_text("=========\nWidgetry\n=========\n\nText.\n")
    (tmp_path / "rfc.txt").write_text("Network Working Group            J. Postel\nRequest for Comments: 791\n")
    assert _load(tmp_path / "rst.txt", "txt").title == "Widgetry"
    assert _load(tmp_path / "rfc.txt", "txt").title == "Network Working Group"
    # An RFC or Internet-Draft centres its title below the two-column header.
    (tmp_path / "rfc2373.txt").write_text(
        "\n\n\nNetwork Working Group                                        R. Hinden\n"
        "Request for Comments: 2373                                       Nokia\n"
        "Obsoletes: 1884                                             S. Deering\n"
        "Category: Standards Track                                Cisco Systems\n"
        "\t\t\t\t\t\t\t     July 1998\n\n"
        "                  IP Version 6 Addressing Architecture\n\nStatus of this Memo\n\n   Text.\n")
    assert _load(tmp_path / "rfc2373.txt", "txt").title == "IP Version 6 Addressing Architecture"


async def test_markdown_with_broken_front_matter_is_ingested_and_found(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    (tmp_path / "notes.md").write_text("---\ntitle: Broken: colon\n---\n# Quasiflange `Setup` { #setup }\n\n"
                                       "The quasiflange needs calibrating.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    response = await rest_search(router, "calibrating", mode="keyword", limit=3, collections=[collection])
    [hit] = response["results"]
    assert hit["title"] == "Quasiflange Setup"
    rows = await runtime.postgres.pool.fetch(
        "SELECT heading_path FROM chunks WHERE collection = $1 AND content LIKE '%calibrating%'", collection)
    assert [list(r["heading_path"]) for r in rows] == [["Quasiflange Setup"]]


def test_a_chunk_opening_with_an_indented_fence_keeps_its_indentation(tmp_path: Path, models: Any) -> None:
    """A fence indented in the document (under a definition) opens a chunk: the chunk keeps the
    indentation, so the block's indented closing fence closes it and the prose after it is read."""
    from graphrag.ingest.textprep import prose_views

    doc = _md(tmp_path, "# Glossary\n\n" + "A definition of terms. " * 12 + "\n\n"
                        "    ~~~~~~{.javascript}\n    let total = 1;\n    ~~~~~~~~\n\nAfter the block.\n")
    chunks = Chunker(models.counter, ChunkOptions(budget=30, overlap_tokens=0)).chunk(doc)
    [code] = [c for c in chunks if "let total" in c.text]
    assert code.text.startswith("    ~~~~~~{.javascript}") and doc.text[code.char_start:code.char_end] == code.text
    prose = " ".join(v.text for v in prose_views([c.text for c in chunks]))
    assert "After the block." in prose and "let total" not in prose


def test_sentences_never_end_inside_inline_code() -> None:
    text = "Use `httpx.PoolLimits()` instead. Then call `client.close()`. Done."
    assert [text[a:b] for a, b in sentence_spans(text)] == [
        "Use `httpx.PoolLimits()` instead.", "Then call `client.close()`.", "Done."]


def test_a_heading_with_nothing_under_it_goes_with_the_next_section(tmp_path: Path, models: Any) -> None:
    doc = _md(tmp_path, "# Changelog\n\n## 0.27.2\n\n### Fixed\n\n- The pool no longer leaks.\n\n## 0.27.1\n\nA fix.\n")
    chunks = Chunker(models.counter, ChunkOptions(budget=40, overlap_tokens=0)).chunk(doc)
    assert [(c.text, c.heading_path) for c in chunks] == [
        ("# Changelog\n\n## 0.27.2\n\n### Fixed\n\n- The pool no longer leaks.", ("Changelog", "0.27.2", "Fixed")),
        ("## 0.27.1\n\nA fix.", ("Changelog", "0.27.1"))]


# -- found by review: odd and hostile inputs -------------------------------------------------------------
@pytest.mark.timeout(120)  # the walk was quadratic here: minutes; now well under a second
def test_list_item_with_many_nested_blocks_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "chain.html"
    path.write_text("<ul><li>" + "<pre>c</pre>t" * 20_000 + "</li></ul>")
    doc = _load(path, "html")
    assert doc.text.count("```") == 40_000 and doc.text.endswith("```\n\nt")


def test_inline_code_comment_marker_is_no_comment(tmp_path: Path, models: Any) -> None:
    from graphrag.ingest.textprep import prose_view

    text = "# Guide\n\nUse `<!--` to open a comment.\n\n## Installation\n\nKubernetes needs Docker.\n"
    doc = _md(tmp_path, text)
    chunks = Chunker(models.counter, ChunkOptions(budget=12, overlap_tokens=0)).chunk(doc)
    assert ("Guide", "Installation") in {c.heading_path for c in chunks}
    assert "Kubernetes needs Docker." in prose_view(text).text


def test_front_matter_with_date_keys_deep_nesting_or_alias_bombs_is_handled(tmp_path: Path) -> None:
    doc = _md(tmp_path, "---\n2020-01-01: release\n---\n# T\n")
    assert doc.metadata == {"2020-01-01": "release"}
    doc = _md(tmp_path, "---\na: " + "[" * 3000 + "\n---\n# Deep\n")
    assert doc.title == "Deep" and doc.metadata == {}
    bomb = "---\na: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{n}: &{n} [{','.join(['*' + p] * 10)}]\n" for p, n in zip("abcdef", "bcdefg", strict=True)) + "---\n# Bomb\n"
    doc = _md(tmp_path, bomb)
    assert doc.title == "Bomb" and doc.metadata == {}


def test_docx_line_breaks_inside_a_paragraph_are_escaped_too(tmp_path: Path) -> None:
    path = tmp_path / "breaks.docx"
    _docx_from_body(path, '<w:p><w:r><w:t>Run these:</w:t><w:br/><w:t>```</w:t><w:br/><w:t># not a heading</w:t>'
                          '</w:r></w:p>' + _p("Kubernetes runs the cluster."))
    assert _load(path, "docx").text == "Run these:\n\\```\n\\# not a heading\n\nKubernetes runs the cluster."


def test_overlapping_windows_read_code_from_where_they_start(models: Any) -> None:
    from graphrag.ingest.textprep import prose_views

    text = ("Intro about Kubernetes.\n\nInstall the tool with pip first.\n\n```\nimport foo\n"
            "foo.configure(alpha=1, beta=2, gamma=3)\n\nfoo.run(delta=4, epsilon=5, zeta=6, eta=7)\n"
            "foo.stop(theta=8, iota=9)\n```\n\nThen Docker Compose starts Redis and PostgreSQL for the operator.")
    doc = Document(source="README", title="README", text=text, kind="text")
    chunks = Chunker(models.counter, ChunkOptions(budget=30, overlap_tokens=20)).chunk(doc)
    prose = " ".join(v.text for v in prose_views([c.text for c in chunks]))
    assert "foo." not in prose and "Then Docker Compose starts Redis" in prose


def test_display_names_keep_abbreviations_and_drop_full_stops() -> None:
    from graphrag.ingest.extract import display_name

    assert [display_name(n) for n in ("Turtle Graphics.", "Node.js.", "Acme Corp.", "U.S.", "Ms.", "Warner Bros.")] == [
        "Turtle Graphics", "Node.js", "Acme Corp.", "U.S.", "Ms.", "Warner Bros."]


@pytest.mark.timeout(120)  # these took 5-40 s each before the rules were bounded
@pytest.mark.parametrize("text", ["# " + "<a " * 20_000, "<a " * 20_000 + "\n\nBody.", "# " + "_a " * 20_000,
                                  "![" * 30_000, "Call `f` now. " * 10_000])
def test_crafted_markdown_lines_load_and_chunk(tmp_path: Path, models: Any, text: str) -> None:
    doc = _md(tmp_path, text)
    chunks = Chunker(models.counter, ChunkOptions()).chunk(doc)
    assert chunks and all(doc.text[c.char_start:c.char_end] == c.text for c in chunks)
    assert len(doc.title) <= 500


def test_the_sentencizer_is_built_once() -> None:
    """Building spaCy's blank pipeline per call made chunking 20 times slower (stop 34, before release)."""
    from graphrag.ingest.chunk import _sentencizer

    assert _sentencizer() is _sentencizer()


# -- tables without leading pipes, MDX ---------------------------------------------------------------------
def test_tables_without_leading_pipes_stay_whole(tmp_path: Path, models: Any) -> None:
    from graphrag.ingest.textprep import table_starts

    # Rows with sentences in them: read as prose, the table would be cut between its sentences.
    rows = "\n".join(f"sprocket-{i} | {i * 7} mm | Hardened steel. Grade {i}." for i in range(12))
    doc = _md(tmp_path, "# Parts\n\nThe parts list follows. It is long.\n\n"
                        f"Part | Size | Material\n:--- | ---: | ---\n{rows}\n\nAfter the table.\n")
    chunks = Chunker(models.counter, ChunkOptions(budget=40, overlap_tokens=0)).chunk(doc)
    [table] = [c for c in chunks if "sprocket-0" in c.text]
    assert table.text.startswith("Part | Size | Material") and table.text.endswith("Grade 11.")
    assert "After the table." not in table.text and any("After the table." in c.text for c in chunks)
    assert not table_starts("a | b", "--- | --- | ---")  # cell counts differ: no table
    assert not table_starts("Heading", "---")  # a setext underline


async def test_a_table_without_leading_pipes_is_found_whole_through_the_stores(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    rows = "\n".join(f"sprocket-{i} | {i * 7} mm | Hardened steel. Grade {i}." for i in range(12))
    (tmp_path / "parts.md").write_text("# Parts\n\nThe parts list follows. It is long.\n\n"
                                       f"Part | Size | Material\n:--- | ---: | ---\n{rows}\n\nAfter the table.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    response = await rest_search(router, "sprocket-9", mode="keyword", limit=3, collections=[collection])
    top = response["results"][0]["content"]
    assert top.startswith("Part | Size | Material") and "sprocket-0 | 0 mm" in top and top.endswith("Grade 11.")


MDX_PAGE = """---
title: Installing Widgetry
sidebar_position: 2
---
import Tabs from '@theme/Tabs';
import {
  TabItem,
} from '@theme/TabItem';
export const registry = 'https://registry.quuxnet.example';

The `<Tabs>` component below shows each package manager.

<Tabs groupId="package-manager">
  <TabItem value="pip" label="pip" default>

```bash
pip install widgetry  # <NotATag>
```

  </TabItem>
  <TabItem
    value="conda"
    onClick={() => track({manager: 'conda'})}>
Conda users install the frobnication toolkit from Zentrovia Labs.
  </TabItem>
</Tabs>

{/* Reviewers: the Quuxbrand note below is temporary. */}
<Admonition type="tip" title={<b>Quick</b>}>The Quuxbrand mirror is faster.</Admonition>
"""


def test_mdx_is_read_as_markdown_without_its_jsx(tmp_path: Path) -> None:
    from graphrag.ingest.load import discover

    doc = _md(tmp_path, MDX_PAGE, "install.mdx")
    assert doc.kind == "markdown" and doc.title == "Installing Widgetry"
    assert doc.metadata == {"sidebar_position": 2}
    assert len(doc.text) == len(MDX_PAGE) and doc.text.count("\n") == MDX_PAGE.count("\n")  # offsets index the file
    for gone in ("import", "@theme", "registry.quuxnet", "TabItem", "groupId", "onClick", "Reviewers", "Admonition"):
        assert gone not in doc.text, gone
    for kept in ("The `<Tabs>` component", "pip install widgetry  # <NotATag>", "Conda users install",
                 "The Quuxbrand mirror is faster."):
        assert kept in doc.text, kept
    found, _ = discover([tmp_path / "install.mdx"])
    assert [(f.path.name, f.file_type) for f in found] == [("install.mdx", "mdx")]


@pytest.mark.parametrize("source,expected", [
    # an ESM block runs past blank lines inside its braces
    ("export const C = () => {\n  const n = 1\n\n  return <b onClick={go}>{n}</b>\n}\n\n# Title\n", "# Title"),
    # "import" inside a paragraph is prose
    ("The parser expects an import or\nexport statement here.\n", "The parser expects an import or export statement here."),
    # expressions go, nested braces and template literals included; escaped characters stay
    ("In {year}, {`a ${b}`} it was {props.amount} cm.\n", "In , it was cm."),
    ('<Card icon={<svg style={{ fill: "#7" }} />}>\nBody\n</Card>\n', "Body"),
    ("Type: Promise\\<Response\\> or \\{x\\}.\n", "Type: Promise\\<Response\\> or \\{x\\}."),
    # a stray backtick does not pair with one in another paragraph
    ("A lone ` backtick.\n\n<Note>Hi</Note>\n\nThen `<Code>`.\n", "A lone ` backtick. Hi Then `<Code>`."),
    # text inside a tag that opens a line is no heading once the tag is blanked
    ("<A># Not a heading</A>\n", "# Not a heading"),
    # Windows line endings: the ESM block still ends at its blank line
    ("import X from 'y'\r\n\r\n# Install\r\n\r\nText\r\n", "# Install Text"),
    # a comment that never closes leaves the text as it is
    ("{/* open\nText <Tag>after</Tag>.\n", "{/* open Text after ."),
])
def test_mdx_syntax_is_blanked_where_mdx_reads_it(source: str, expected: str) -> None:
    from graphrag.ingest.mdx import mdx_to_markdown

    from graphrag.ingest.textprep import markdown_title

    out = mdx_to_markdown(source)
    assert len(out) == len(source) and out.count("\n") == source.count("\n")
    assert " ".join(out.split()) == expected
    assert markdown_title(out) in (None, "Title", "Install")  # headings only where the source has them


@pytest.mark.timeout(60)  # a hang guard: the first, quadratic scan took 20 s and more on each of these
@pytest.mark.parametrize("hostile", ["{/* a\n" * 20_000, "`` a\n" * 20_000, "<A b={x " * 20_000, "<A <A " * 20_000,
                                     "{`${" * 2_000, "import (\n\n" * 4_000,
                                     "".join("`" * k + " a " for k in range(1, 1_400))])
def test_mdx_scan_reads_hostile_input(hostile: str) -> None:
    from graphrag.ingest.mdx import mdx_to_markdown

    out = mdx_to_markdown(hostile)
    assert len(out) == len(hostile) and out.count("\n") == hostile.count("\n")


async def test_mdx_page_is_searchable_and_its_jsx_stays_out_of_the_stores(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    (tmp_path / "install.mdx").write_text(MDX_PAGE)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed, report.skipped) == (1, [], [])
    for term in ("frobnication", "Quuxbrand"):
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert [r["title"] for r in response["results"]] == ["Installing Widgetry"], term
    for term in ("quuxnet", "Reviewers", "groupId"):
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert response["results"] == [], term
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.name AS name", c=collection)
    names = {r["name"] for r in rows}
    assert "Zentrovia Labs" in names and not {"TabItem", "Admonition", "Tabs"} & names


# -- PDF forms -------------------------------------------------------------------------------------------
def make_filled_form_pdf(path: Path) -> None:
    """A one-page PDF form: a described text field, a checked box, a field whose value sits on its parent
    (a widget shown under a field), an empty field and a signature field; the values only in the fields."""
    import io

    from fpdf import FPDF
    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import ArrayObject, DictionaryObject, FloatObject, NameObject, TextStringObject

    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("Helvetica", size=12)
    pdf.cell(0, 10, "Mooring permit application. Applicant name: Vessel:")
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(bytes(pdf.output()))))

    def obj(**entries: Any) -> DictionaryObject:
        return DictionaryObject({NameObject(f"/{k}"): v for k, v in entries.items()})

    def widget(**entries: Any) -> DictionaryObject:
        return obj(Type=NameObject("/Annot"), Subtype=NameObject("/Widget"),
                   Rect=ArrayObject([FloatObject(v) for v in (100, 700, 300, 720)]), **entries)

    parent = writer._add_object(obj(FT=NameObject("/Tx"), T=TextStringObject("topmostSubform[0].vessel_name[0]"),
                                    V=TextStringObject("MV Kestrel Dawn")))
    kid = writer._add_object(widget(Parent=parent))
    parent.get_object()[NameObject("/Kids")] = ArrayObject([kid])
    annotations = [writer._add_object(w) for w in (
        widget(FT=NameObject("/Tx"), T=TextStringObject("f1"), TU=TextStringObject("Applicant name"),
               V=TextStringObject("Oriana Valcourt")),
        widget(FT=NameObject("/Btn"), T=TextStringObject("insured"), V=NameObject("/Yes")),
        widget(FT=NameObject("/Btn"), T=TextStringObject("pilot"), V=NameObject("/Off")),
        widget(FT=NameObject("/Tx"), T=TextStringObject("notes")),
        widget(FT=NameObject("/Sig"), T=TextStringObject("signature"), V=TextStringObject("signed blob")),
    )] + [kid]
    writer.pages[0][NameObject("/Annots")] = ArrayObject(annotations)
    writer._root_object[NameObject("/AcroForm")] = obj(Fields=ArrayObject(annotations[:-1] + [parent]))
    with path.open("wb") as out:
        writer.write(out)


async def test_a_filled_pdf_form_keeps_its_answers(tmp_path: Path, ingestor: Ingestor, router: SearchRouter,
                                                   collection: str) -> None:
    make_filled_form_pdf(tmp_path / "permit.pdf")
    doc = _load(tmp_path / "permit.pdf", "pdf")
    assert doc.text.endswith("\n\nApplicant name: Oriana Valcourt\ninsured: Yes\nvessel name: MV Kestrel Dawn")
    assert "pilot" not in doc.text and "notes" not in doc.text and "signed blob" not in doc.text
    assert doc.pages == ((0, len(doc.text)),)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    response = await rest_search(router, "Valcourt Kestrel", mode="keyword", limit=3, collections=[collection])
    [hit] = response["results"]
    assert hit["title"] == "permit" and "Oriana Valcourt" in hit["content"] and hit["metadata"]["page"] == 1


def _without_parts(source: Path, target: Path, *parts: str) -> None:
    import zipfile

    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            if item.filename not in parts:
                zout.writestr(item, zin.read(item.filename))


async def test_a_docx_missing_parts_its_relationships_name_is_read(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    import docx

    document = docx.Document()
    document.add_heading("Harbour dues", 1)
    document.add_paragraph("Dues are payable to the Quillmarsh port authority.", style="List Number")
    document.save(tmp_path / "whole.docx")
    (tmp_path / "in").mkdir()
    _without_parts(tmp_path / "whole.docx", tmp_path / "in" / "dues.docx", "word/styles.xml", "word/numbering.xml")
    doc = _load(tmp_path / "in" / "dues.docx", "docx")
    assert doc.title == "Harbour dues" and "Quillmarsh port authority" in doc.text
    _without_parts(tmp_path / "whole.docx", tmp_path / "nobody.docx", "word/document.xml")
    with pytest.raises(LoadError, match="unreadable DOCX"):  # the body itself missing is no document
        _load(tmp_path / "nobody.docx", "docx")
    report = await ingestor.ingest_paths([tmp_path / "in"], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    response = await rest_search(router, "Quillmarsh", mode="keyword", limit=3, collections=[collection])
    assert [r["title"] for r in response["results"]] == ["Harbour dues"]


# -- reStructuredText ----------------------------------------------------------------------------------
RST_PAGE = """:orphan:

.. _sessions:

Session Objects
===============

A :class:`~quill.sessions.Session` keeps cookies; see :ref:`the advanced guide <advanced>` and
:pep:`8`.

.. currentmodule:: quill

Sending requests
----------------

.. code-block:: python

   import quill
   s = quill.Session()

.. function:: fetch(url, retries=3)

   Fetches *url* from the Vantorel mirror.

   :param url: where to fetch from.

.. versionadded:: 2.1
   Retries.

.. note:: Sessions are not thread-safe.

+----------+-----------+
| Setting  | Default   |
+==========+===========+
| timeout  | 30 s      |
+----------+-----------+

.. toctree::

   user/install

.. autoclass:: quill.Session
   :members:

.. include:: /etc/hostname

.. raw:: html

   <script>alert("raw")</script>

.. tab:: Unix

   Run it under Grelmont shell.

Literal block::

    $ quill get https://example.com
"""


def test_rst_reads_sphinx_markup_as_text(tmp_path: Path) -> None:
    path = tmp_path / "sessions.rst"
    path.write_text(RST_PAGE)
    doc = _load(path, "rst")
    assert doc.title == "Session Objects" and doc.kind == "markdown"
    text = doc.text
    for kept in ("A `Session` keeps cookies; see the advanced guide and PEP 8.", "## Sending requests",
                 "```python\nimport quill\ns = quill.Session()\n```", "`fetch(url, retries=3)`",
                 "Fetches url from the Vantorel mirror.", "url: where to fetch from.",
                 "Version added: 2.1 Retries.", "Sessions are not thread-safe.", "| timeout | 30 s |",
                 "Run it under Grelmont shell.", "$ quill get https://example.com"):
        assert kept in text, kept
    for gone in ("param url", ":class:", ":ref:", "orphan", "..", "user/install", "members", "script", "alert", "hostname"):
        assert gone not in text, gone


RST_REFERENCE = """API
===

.. role:: func(code)

.. autoclass:: quill.Session
   :members:

   Holds cookies for the Brantwick pool.

.. autosummary::
   :toctree: generated

   quill.get
   ~quill.put

.. code-block:: python
   :caption: example.py
   :linenos:

   quill.get("x")

.. class:: Pool(size)

   A pool of connections.

.. rst:directive:option:: timeout
   :type: float

   Seconds to wait.

Cookies
-------

Cookie jars persist ``--no-cache`` settings; see :pep:`pattern matching <634>` and :rfc:`2616`.

.. sidebar:: Aside

   Sidebar text kept.

.. math::
   :label: area

   A = \\pi r^2

.. only:: html

   Only-html text.

======  ======
Op      Meaning
======  ======
``<>``  differs
+, -    sum
======  ======

Release |version|.
"""


def test_rst_reference_pages_keep_signatures_code_and_sections(tmp_path: Path) -> None:
    path = tmp_path / "api.rst"
    path.write_text(RST_REFERENCE)
    text = _load(path, "rst").text
    for kept in ("`quill.Session`", "Holds cookies for the Brantwick pool.", "- `quill.get`", "- `put`",
                 "example.py\n\n```python\nquill.get(\"x\")\n```", "`Pool(size)`", "A pool of connections.",
                 "`timeout`", "Seconds to wait.", "## Cookies", "`--no-cache`", "pattern matching and RFC 2616.",
                 "Sidebar text kept.", "```latex\nA = \\pi r^2\n```", "Only-html text.", "| `<>` | differs |",
                 "| +, - | sum |", "Release ."):
        assert kept in text, kept
    for gone in ("members", "toctree", "linenos", ":type:", "html\n", "|version|", "label"):
        assert gone not in text, gone
    # The document's ".. role:: func(code)" was for it alone: the next document's :func: is Sphinx's.
    (tmp_path / "next.rst").write_text("Next\n====\n\nCall :func:`~os.path.join` here.\n")
    assert "Call `join` here." in _load(tmp_path / "next.rst", "rst").text


def test_rst_signatures_over_several_lines_are_one_per_line(tmp_path: Path) -> None:
    (tmp_path / "api.rst").write_text(
        "API\n===\n\n.. function:: compile(source, mode)\n              compile(source, mode, flags=0)\n\n"
        "   Compile it.\n\n.. method:: Session.request(method, url, \\\n               params=None)\n\n   Send it.\n")
    text = _load(tmp_path / "api.rst", "rst").text
    assert "`compile(source, mode)`\n\n`compile(source, mode, flags=0)`\n\nCompile it." in text
    assert "`Session.request(method, url, params=None)`\n\nSend it." in text


def test_rst_never_reads_a_file_from_the_server(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("Zorblax-credential-42")
    path = tmp_path / "page.rst"
    path.write_text(f"Page\n====\n\n.. include:: {secret}\n\n.. image:: {secret}\n   :loading: embed\n\n"
                    f".. csv-table:: Data\n   :file: {secret}\n\n.. raw:: html\n   :file: {secret}\n\n"
                    f".. literalinclude:: {secret}\n\nBody text.\n")
    doc = _load(path, "rst")
    assert "Body text." in doc.text and "Zorblax" not in doc.text
    from graphrag.ingest.rst import rst_to_html

    assert "Zorblax" not in rst_to_html(path.read_text()) and "base64" not in rst_to_html(path.read_text())


def test_rst_without_one_top_heading_is_titled_by_its_file(tmp_path: Path) -> None:
    path = tmp_path / "CHANGES.rst"
    path.write_text("Version 2\n---------\n\nFixed.\n\nVersion 1\n---------\n\nFirst.\n")
    assert _load(path, "rst").title == "CHANGES"


def test_rst_that_docutils_cannot_read_is_a_load_error(tmp_path: Path) -> None:
    from graphrag.ingest.load import discover

    path = tmp_path / "deep.rst"
    path.write_text("".join(f"{'  ' * i}- item {i}\n\n" for i in range(400)))
    with pytest.raises(LoadError, match="deep.rst: unreadable reStructuredText \\(nested too deeply\\)"):
        _load(path, "rst")
    (tmp_path / "huge.rst").write_text("Text.\n\n" * 600_000)
    with pytest.raises(LoadError, match="huge.rst: 4200000 characters of reStructuredText is over the 4000000"):
        _load(tmp_path / "huge.rst", "rst")
    (tmp_path / "huge.rst").unlink()
    found, _ = discover([tmp_path])
    assert [(f.path.name, f.file_type) for f in found] == [("deep.rst", "rst")]


RST_BUILDS = """.. _plugin-list:

Plugins
=======

.. seealso:: :ref:`Writing plugins <writing-plugins>`

Call :meth:`.Registry.add_plugin`, :meth:`~.Registry.remove` or :file:`.quillrc` first.

The :ref:`plugin-list` lists them; :ref:`writing-plugins` says how to write one.

.. only:: latex

   Print-only table of Vantorel plugins.

.. only:: not latex and (html or epub)

   {table}
"""


def _padded_table(rows: int) -> str:
    """A simple table as pytest's generated plugin list writes it: columns padded wide with blanks."""
    rule = "   " + "=" * 40 + "  " + "=" * 400
    lines = [rule, f"   {'name':<40}  {'summary':<400}", rule]
    lines += [f"   {f'quill-plugin-{n}':<40}  {f'Adds Vantorel hook {n}.':<400}" for n in range(rows)]
    return "\n".join(lines + [rule]).lstrip()


def test_rst_reads_as_sphinx_html_build_shows_it(tmp_path: Path) -> None:
    """``.. only::`` blocks are shown as in Sphinx's HTML build, a "See also" aside keeps its title, a
    Python object's leading dot (where to look for it) is not shown, a bare ``:ref:`` to a section of
    the file shows the section's title, and a file over the size limit
    only by the blanks padding its table is read (pytest's plugin list: 1.38 MB, 0.58 MB unpadded)."""
    path = tmp_path / "plugins.rst"
    path.write_text(RST_BUILDS.replace("{table}", _padded_table(3000)))
    from graphrag.ingest.rst import MAX_RST_CHARS

    assert path.stat().st_size > MAX_RST_CHARS
    text = _load(path, "rst").text
    assert text.startswith("# Plugins\n\n**See also**\n\nWriting plugins\n\nCall `Registry.add_plugin`, `remove` "
                           "or `.quillrc` first."), text[:300]
    assert "| quill-plugin-2999 | Adds Vantorel hook 2999. |" in text and "Print-only" not in text
    # A bare reference to a section of the same file shows its title, as Sphinx shows it; one to another
    # file's section its label.
    assert "The Plugins lists them; writing-plugins says how to write one." in text
    (tmp_path / "over.rst").write_text("Over\n====\n\n" + "Vantorel hooks run. " * 60_000)
    with pytest.raises(LoadError, match="over.rst: 12000\\d\\d characters of reStructuredText \\(a run of blanks counted as one\\) is over the 1000000"):
        _load(tmp_path / "over.rst", "rst")


async def test_rst_built_as_html_reaches_the_stores(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    (tmp_path / "plugins.rst").write_text(RST_BUILDS.replace("{table}", _padded_table(3000)))
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report.failed
    hits = (await rest_search(router, "quill-plugin-2999", mode="keyword", limit=3,
                              collections=[collection]))["results"]
    assert hits and "| quill-plugin-2999 | Adds Vantorel hook 2999. |" in hits[0]["content"], hits
    assert not (await rest_search(router, "Print-only table", mode="keyword", limit=3,
                                  collections=[collection]))["results"]
    contents = " ".join(r["content"] for r in await runtime.postgres.pool.fetch(
        "SELECT content FROM chunks WHERE collection = $1", collection))
    assert "**See also**" in contents and "`Registry.add_plugin`" in contents


async def test_rst_page_is_searchable_with_its_api_signature(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    (tmp_path / "sessions.rst").write_text(RST_PAGE)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    response = await rest_search(router, "Vantorel mirror", mode="keyword", limit=3, collections=[collection])
    [hit] = response["results"]
    assert hit["title"] == "Session Objects" and "fetch(url, retries=3)" in hit["content"]
    assert hit["heading_path"] == ["Session Objects", "Sending requests"]
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.name AS name, e.label AS label", c=collection)
    found = {r["name"]: r["label"] for r in rows}
    assert found.get("Session") == "CODE" and not any(":" in name for name in found)


# -- Jupyter notebooks -----------------------------------------------------------------------------------
def _notebook(cells: list[dict[str, Any]], **metadata: Any) -> str:
    import json

    return json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": metadata, "cells": cells})


NOTEBOOK = _notebook([
    {"cell_type": "markdown", "metadata": {}, "source": ["# Tidal forecasts\n", "\n", "Fit the Marrowgate tide model.\n"]},
    {"cell_type": "code", "metadata": {}, "execution_count": 1,
     "source": 'import tides\nmodel = tides.fit("````")\nusage = """\n```\n"""',
     "outputs": [{"output_type": "stream", "name": "stdout", "text": ["Zyxquart residual 0.3\n"]},
                 {"output_type": "display_data", "data": {"image/png": "iVBORw0KGgo="}}]},
    {"cell_type": "raw", "metadata": {}, "source": ".. raw latex"},
    {"cell_type": "markdown", "metadata": {}, "source": "## Results\n\nThe fit holds for Quellport."},
], language_info={"name": "python"}, kernelspec={"language": "python", "name": "python3"})


def test_notebook_cells_are_read_in_order_without_outputs(tmp_path: Path) -> None:
    (tmp_path / "tides.ipynb").write_text(NOTEBOOK)
    doc = _load(tmp_path / "tides.ipynb", "ipynb")
    assert (doc.title, doc.kind, doc.metadata) == ("Tidal forecasts", "markdown", {"language": "python"})
    assert doc.text == ("# Tidal forecasts\n\nFit the Marrowgate tide model.\n\n"
                        # the fence outlasts the backticks opening a line; those inside one cannot close it
                        '````python\nimport tides\nmodel = tides.fit("````")\nusage = """\n```\n"""\n````\n\n'
                        "## Results\n\nThe fit holds for Quellport.\n")
    for bad, message in (("{", "invalid JSON at line 1"), ("[1]", "no cells"), ('{"cells": 3}', "no cells"),
                         ('{"cells": [], "x": ' + "1" * 5000 + "}", "Exceeds the limit")):
        (tmp_path / "bad.ipynb").write_text(bad)
        with pytest.raises(LoadError, match=f"bad.ipynb: not a Jupyter notebook \\({message}"):
            _load(tmp_path / "bad.ipynb", "ipynb")
    v3 = {"nbformat": 3, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "heading", "level": 1, "source": ["Old notebook"]},
        {"cell_type": "code", "language": "python", "input": ["x = 1"], "outputs": []}]}]}
    (tmp_path / "old.ipynb").write_text(__import__("json").dumps(v3))
    old = _load(tmp_path / "old.ipynb", "ipynb")
    assert (old.title, old.text) == ("Old notebook", "# Old notebook\n\n```python\nx = 1\n```\n")  # the cell's language
    from graphrag.ingest.textprep import fence_closes, fence_open

    fence = fence_open("````python")
    assert fence is not None and not fence_closes("```", fence) and not fence_closes("x = '`````'", fence)


def test_notebook_cells_stand_alone_as_jupyter_renders_them(tmp_path: Path) -> None:
    from graphrag.ingest.textprep import prose_view

    def md(text: str) -> dict[str, Any]:
        return {"cell_type": "markdown", "metadata": {}, "source": text}

    def code(text: str) -> dict[str, Any]:
        return {"cell_type": "code", "metadata": {}, "source": text, "outputs": []}

    cells = [md('<h1>Table of Contents<span class="tocSkip"></span></h1><div class="toc">x</div>'),
             md("# Dispatch[[dispatch]]\n\nIntro\n```\nfoo(y::String)"), code("x = 1"),
             md("Important prose here. <!-- TODO"), md("![plot](data:image/png;base64,iVBORw0KGgo" + "A" * 5000 + ")"),
             code("%%bash\nls -l"), code('html = """<div\n  style="x">hi</div>"""')]
    (tmp_path / "nb.ipynb").write_text(_notebook(cells, kernelspec={"name": "julia-1.6"}))
    doc = _load(tmp_path / "nb.ipynb", "ipynb")
    assert doc.title == "Dispatch" and doc.metadata == {"language": "julia"}
    assert "```\nfoo(y::String)\n```\n\n```julia\nx = 1\n```" in doc.text  # the open fence closed in its cell
    # the comment left open in its cell was closed there, so the page hides it and nothing after it
    assert "Important prose here." in doc.text and "TODO" not in doc.text and "![plot](data:)" in doc.text
    assert "```bash\n%%bash\nls -l\n```" in doc.text and "Table of Contents" not in doc.text
    view = prose_view(doc.text)
    assert "Important prose here." in view.text and "x = 1" not in view.text
    assert 'html = """<div\n  style="x">hi</div>"""' in view.code_blocks  # a tag in code is code
    v2 = {"nbformat": 2, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "markdown", "source": ["An introduction", "", "Second paragraph."]},
        {"cell_type": "code", "language": "python", "input": ["import os", "print(os.sep)"]}]}]}
    (tmp_path / "v2.ipynb").write_text(__import__("json").dumps(v2))
    assert _load(tmp_path / "v2.ipynb", "ipynb").text == (
        "An introduction\n\nSecond paragraph.\n\n```python\nimport os\nprint(os.sep)\n```\n")


async def test_notebook_is_searchable_and_its_outputs_are_not(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    (tmp_path / "tides.ipynb").write_text(NOTEBOOK)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    response = await rest_search(router, "Quellport", mode="keyword", limit=3, collections=[collection])
    [hit] = response["results"]
    assert hit["title"] == "Tidal forecasts" and hit["heading_path"] == ["Tidal forecasts", "Results"]
    for term in ("Zyxquart", "iVBORw0KGgo"):
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert response["results"] == [], term
    rows = await runtime.postgres.pool.fetch(
        "SELECT has_code FROM chunks WHERE collection = $1 AND content LIKE '%tides.fit%'", collection)
    assert [r["has_code"] for r in rows] == [True]


@pytest.mark.timeout(120)  # hang guards: each of these took from 12 s to minutes before
def test_crafted_lines_for_the_new_readers_load(tmp_path: Path, models: Any) -> None:
    from graphrag.ingest.textprep import prose_view

    heading = "# H" + " " * 40_000 + "x\n"
    assert prose_view(heading).text.startswith("H")
    doc = _md(tmp_path, "a|b\n|---" + " " * 20_000 + "x\n" + heading)
    assert Chunker(models.counter, ChunkOptions()).chunk(doc)
    for name, text in (("roles.rst", ":a." * 20_000), ("subst.rst", "Text |version| " * 60_000)):
        (tmp_path / name).write_text(text)
        try:
            _load(tmp_path / name, "rst")
        except LoadError as exc:  # no text left, or too large: a load error, never a traceback
            assert name in str(exc)
    (tmp_path / "sheets.ipynb").write_text('{"worksheets": [{"cells": 5}]}')
    with pytest.raises(LoadError, match="no text content"):
        _load(tmp_path / "sheets.ipynb", "ipynb")


def test_form_widgets_shared_by_pages_are_read_once(tmp_path: Path) -> None:
    import io

    from pypdf import PdfReader, PdfWriter
    from pypdf.generic import DictionaryObject, NameObject, NumberObject, TextStringObject

    make_filled_form_pdf(tmp_path / "permit.pdf")
    writer = PdfWriter(clone_from=PdfReader(tmp_path / "permit.pdf"))
    shared = writer.pages[0]["/Annots"]
    odd = writer._add_object(DictionaryObject({NameObject("/Subtype"): NameObject("/Widget"),
                                               NameObject("/T"): TextStringObject("blob"),
                                               NameObject("/V"): DictionaryObject({NameObject("/A"): NumberObject(1)})}))
    shared.append(odd)
    for _ in range(30):
        page = writer.add_blank_page(200, 200)
        page[NameObject("/Annots")] = shared
    writer.add_blank_page(200, 200)[NameObject("/Annots")] = NumberObject(5)  # not an array: no fields
    out = io.BytesIO()
    writer.write(out)
    (tmp_path / "many.pdf").write_bytes(out.getvalue())
    doc = _load(tmp_path / "many.pdf", "pdf")
    assert doc.text.count("Oriana Valcourt") == 1 and "blob" not in doc.text and len(doc.pages) == 32


def test_rst_literal_blocks_take_the_highlight_language(tmp_path: Path) -> None:
    (tmp_path / "h.rst").write_text("T\n=\n\nBefore::\n\n   plain = 1\n\n.. highlight:: python\n\nAfter::\n\n   x = 1\n\n"
                                    ">>> print(3)\n3\n")
    text = _load(tmp_path / "h.rst", "rst").text
    assert "Before:\n\n```\nplain = 1\n```" in text and "After:\n\n```python\nx = 1\n```" in text
    assert "```python\n>>> print(3)\n3\n```" in text and "highlight" not in text


# -- site generators' Markdown (MyST, Hugo) ---------------------------------------------------------------
MYST_PAGE = """# Deploying Vortigen

(deploy)=
:::{warning} Cold starts
Brannoch Systems measured the first request of a Vortigen node at forty seconds.
:::

```{code-block} yaml
replicas: 3
```

See {ref}`the scaling guide <scaling>` before changing the replicas.
"""

HUGO_PAGE = """---
title: Quillfeather nodes
---
A Quillfeather node runs in a {{< glossary_tooltip text="Pod" term_id="pod" >}}.

{{< note >}}
Olga Brandt wrote the Quillfeather drainage scheduler.
{{< /note >}}
"""


def test_text_handed_in_as_markdown_is_read_like_a_markdown_file() -> None:
    from graphrag.ingest.load import load_text_document

    doc = load_text_document(MYST_PAGE, source="deploy.md")
    assert doc.title == "Deploying Vortigen" and ":::" not in doc.text and "{ref}" not in doc.text
    assert "Brannoch Systems measured" in doc.text and "```yaml" in doc.text
    assert load_text_document(MYST_PAGE, source="deploy.txt", kind="text").text == MYST_PAGE  # plain text stays


async def test_myst_hugo_and_docusaurus_pages_keep_their_content_as_prose_and_lose_their_markup(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    (tmp_path / "deploy.md").write_text(MYST_PAGE)
    (tmp_path / "nodes.md").write_text(HUGO_PAGE)
    (tmp_path / "migration.md").write_text(DOCUSAURUS_MD)  # a Docusaurus page: MDX in a .md file
    (tmp_path / "changelog.md").write_text("```{include} ../CHANGELOG.md\n```\n")  # no text of its own
    # An mkdocstrings page: the site fills it in from the code; the file has a heading alone.
    (tmp_path / "api.md").write_text("# `quarrendale.api`\n\n::: quarrendale.api\n    options:\n      members: true\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (3, [])
    assert sorted((Path(s["path"]).name, s["reason"]) for s in report.skipped) == [
        (name, "no text of its own (only site-generator markup, such as an include)")
        for name in ("api.md", "changelog.md")]
    for term, title in [("forty seconds", "Deploying Vortigen"), ("drainage scheduler", "Quillfeather nodes"),
                        ("Aider history", "Migration Guides"), ("hundred exchanges", "Migration Guides")]:
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert [r["title"] for r in response["results"]][:1] == [title], term
    contents = [r["content"] for r in await runtime.postgres.pool.fetch(
        "SELECT content FROM chunks WHERE collection = $1", collection)]
    assert contents and not any(m in c for c in contents for m in (":::", "{warning}", "{ref}", "{{<", "(deploy)=",
                                                                   "<TabItem", "import TabItem"))
    assert any("```yaml" in c and "replicas: 3" in c for c in contents)  # the code directive is still code
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.name AS name", c=collection)
    names = {r["name"] for r in rows}
    # Names inside the admonition and the note are read as prose (a MyST fence was a code block).
    assert {"Brannoch Systems", "Olga Brandt"} <= names, names
    assert not any("{" in n or "glossary_tooltip" in n for n in names), names


DOCUSAURUS_MD = """---
title: Migration Guides
---

import Tabs from '@theme/Tabs';
import TabItem from '@theme/TabItem';

<Tabs groupId="tool">
  <TabItem value="aider" label="Aider">

Quarrendale reads the Aider history file.

  </TabItem>
</Tabs>

:::tip[Trimming the history]
Quarrendale keeps the last hundred exchanges.
:::

Write `import Tabs from '@theme/Tabs';` and `<Tabs>` in your own page.
"""


def test_a_docusaurus_md_file_is_read_as_the_mdx_it_is(tmp_path: Path) -> None:
    """Docusaurus reads .md files as MDX: their imports and components are blanked like an .mdx file's."""
    doc = _md(tmp_path, DOCUSAURUS_MD, "migration.md")
    assert len(doc.text) == len(DOCUSAURUS_MD) and "@theme" not in doc.text.split("Write")[0]
    assert "<TabItem" not in doc.text and "Quarrendale reads the Aider history file." in doc.text
    assert ":::" not in doc.text.split("Write")[0] and re.search(r"Trimming the history *\nQuarrendale keeps", doc.text)
    assert doc.text.rstrip().endswith("Write `import Tabs from '@theme/Tabs';` and `<Tabs>` in your own page.")


@pytest.mark.parametrize("text", [
    "# Notes\n\nimport the data first, then <Button> it.\n",  # no module import
    "# Setup\n\n```js\nimport Tabs from '@theme/Tabs';\n```\n\nUse <Tabs> here.\n",  # the import is code
    "# Python\n\nimport os from 'x' is not Python.\n",  # no component
])
def test_plain_markdown_that_mentions_imports_or_tags_is_not_mdx(tmp_path: Path, text: str) -> None:
    from graphrag.ingest.mdx import reads_as_mdx

    assert not reads_as_mdx(text) and _md(tmp_path, text).text == text


def test_quarto_and_r_markdown_files_are_read_as_markdown(tmp_path: Path, models: Any) -> None:
    from graphrag.ingest.load import discover

    (tmp_path / "fit.qmd").write_text("---\ntitle: Fitting Zorblax Curves\n---\n\n::: {.callout-note}\n"
                                      "Fits take a minute.\n:::\n\n```{python}\n#| echo: false\nfit()\n```\n")
    (tmp_path / "report.Rmd").write_text("# Quarterly Report\n\n```{r setup, include=FALSE}\nlibrary(knitr)\n```\n")
    found, skipped = discover([tmp_path])
    assert sorted((f.path.name, f.file_type) for f in found) == [("fit.qmd", "md"), ("report.Rmd", "md")] and not skipped
    fit = next(d for f in found for d in load_file(f, 1 << 20) if d.title == "Fitting Zorblax Curves")
    assert "Fits take a minute." in fit.text and "```{python}" in fit.text and "fit()" in fit.text
    chunks = Chunker(models.counter, ChunkOptions()).chunk(fit)
    assert any(c.has_code and "fit()" in c.text for c in chunks)


async def test_pdf_columns_quarto_cells_and_asciidoc_tab_names_reach_the_stores(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    """Three loader changes seen through the stores: a fake-bold page in columns, a Quarto page with a
    callout and a Python cell, and an AsciiDoc tabbed example whose tab names are roles."""
    _pdf_fake_bold_columns(tmp_path / "manual.pdf")
    (tmp_path / "fit.qmd").write_text(
        "---\ntitle: Fitting Zorblax Curves\n---\n\n::: {.callout-note}\nOlga Brandt of Brannoch Systems checks "
        "every zorblax fit by hand.\n:::\n\n```{python}\n#| echo: false\nfit_zorblax(curve)\n```\n")
    (tmp_path / "drivers.adoc").write_text(
        "= Driver Examples\n\n[.tabbed-example]\n=====\n[.include-with-cypher]\n======\nThe quillon query "
        "counts nodes.\n======\n\n[.include-with-python]\n======\nThe quillon driver runs it from Python.\n======\n=====\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed, report.skipped) == (3, [], [])

    # The PDF's columns: each heading once, read column by column, with the page in the citation.
    zephyr = (await rest_search(router, "pump setup zephyr column", mode="keyword", limit=3,
                                collections=[collection]))["results"][0]
    assert zephyr["metadata"]["page"] == 1 and zephyr["title"] != "Fitting Zorblax Curves", zephyr
    rows = await runtime.postgres.pool.fetch(
        "SELECT d.source, c.content, c.has_code FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE c.collection = $1 ORDER BY d.source, c.chunk_index", collection)
    by_file: dict[str, list[Any]] = {}
    for row in rows:
        by_file.setdefault(Path(row["source"]).name, []).append(row)
    pdf_text = "\n".join(r["content"] for r in by_file["manual.pdf"])
    assert "Pump SetupPump" not in pdf_text and "Valve CareValve" not in pdf_text, pdf_text
    assert pdf_text.index("Line 18 of the zephyr") < pdf_text.index("Valve Care"), pdf_text

    # Quarto: the callout is prose (its names are entities), the cell is code.
    hit = (await rest_search(router, "checks every zorblax fit", mode="keyword", limit=1,
                             collections=[collection]))["results"][0]
    assert hit["title"] == "Fitting Zorblax Curves" and ":::" not in hit["content"], hit
    assert any(r["has_code"] and "fit_zorblax(curve)" in r["content"] for r in by_file["fit.qmd"])
    names = await _entity_names(runtime, collection)
    assert {"Olga Brandt", "Brannoch Systems"} <= names, names

    # AsciiDoc: each tab's name shows above its text, so a search for the language finds its tab.
    tab = (await rest_search(router, "python quillon driver", mode="keyword", limit=1,
                             collections=[collection]))["results"][0]
    assert tab["title"] == "Driver Examples" and "python\n\nThe quillon driver runs it from Python." in tab["content"]
    adoc_text = "\n".join(r["content"] for r in by_file["drivers.adoc"])
    assert "cypher\n\nThe quillon query counts nodes." in adoc_text and "include-with" not in adoc_text


async def test_running_headers_and_page_footers_stay_out_of_chunks_and_graph(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    """A PDF manual with a running title and page numbers, and an RFC-style text with page footers and
    headers: neither reaches the chunks or the graph, and the text's hits cite their page."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt")
    topics = ["flushing the intake", "priming the impeller", "bleeding the manifold", "testing the seals"]
    for n, topic in enumerate(topics, start=1):
        pdf.add_page()
        pdf.set_font("helvetica", size=9)
        pdf.text(72, 40, "Quellmark Pump Handbook")
        pdf.text(300, 800, str(n))
        pdf.set_font("helvetica", size=11)
        pdf.text(72, 100, f"Operators start by {topic} before each shift.")
    pdf.output(str(tmp_path / "handbook.pdf"))
    pages = []
    for n, topic in enumerate(["Framing", "Handshakes", "Retries", "Shutdown"], start=1):
        header = "" if n == 1 else "RFC 9999             Zorblax Transfer Protocol             June 2026\n\n"
        pages.append(f"{header}{n}.  {topic}\n\n   The zorblax peer handles {topic.lower()} as the text says.\n\n\n"
                     f"Ondrak & Velasquez          Standards Track                    [Page {n}]\n")
    (tmp_path / "rfc9999.txt").write_text("\f\n".join(pages))
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (2, [])
    contents = [r["content"] for r in await runtime.postgres.pool.fetch(
        "SELECT content FROM chunks WHERE collection = $1", collection)]
    assert contents and not any(m in c for c in contents for m in ("Quellmark Pump Handbook", "Standards Track",
                                                                   "Zorblax Transfer Protocol", "Ondrak"))
    assert any(c.strip() == "Operators start by bleeding the manifold before each shift." for c in contents), contents
    hit = (await rest_search(router, "zorblax peer retries", mode="keyword", limit=1,
                             collections=[collection]))["results"][0]
    assert hit["metadata"]["page"] == 3 and "3.  Retries" in hit["content"], hit
    names = await _entity_names(runtime, collection)
    assert not {"Ondrak & Velasquez", "Quellmark Pump Handbook", "Ondrak", "Velasquez"} & names, names


async def test_a_word_hyphenated_across_pdf_lines_is_found_whole(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    """Before, the chunk held "quarrendal-" and "ization" on two lines: a keyword search for the word
    found nothing, and the extractor read two fragments."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt")
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    for n, line in enumerate(["The pump manual explains how quarrendal-", "ization protects the seals, and why",
                              "the well-", "known valve needs no priming."]):
        pdf.text(72, 100 + 14 * n, line)
    pdf.output(str(tmp_path / "manual.pdf"))
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    hit = (await rest_search(router, "quarrendalization", mode="keyword", limit=1, collections=[collection]))["results"]
    assert hit and hit[0]["content"] == ("The pump manual explains how quarrendalization\nprotects the seals, and why\n"
                                         "the well-known\nvalve needs no priming."), hit


async def test_chunks_in_another_language_than_the_model_give_no_model_entities(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> None:
    """The English model read French as names ("un", "dans": hubs in 70 chunks each of two French PDFs).
    A French page now gives only what is not the model's reading: its inline code (and, as every
    document, its title)."""
    (tmp_path / "proces-verbal.md").write_text(
        "# Procès-verbal\n\nLe comité de démolition a tenu une séance publique dans la salle du conseil de "
        "Chelsea. Les membres, dont M. Gaëtan Gagné et Mme Louise Tremblay, ont examiné la demande avec "
        "`quarren_export()` et ils ont accepté le projet avec des conditions pour le patrimoine de la ville.\n")
    (tmp_path / "minutes.md").write_text(
        "# Minutes\n\nThe demolition committee of Chelsea met in the council room. Olga Brandt of Brannoch "
        "Systems presented the request, and the members accepted it with conditions for the town's heritage.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (2, [])
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (d:Document {collection: $c})-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(e:Entity) "
        "RETURN d.title AS title, collect(DISTINCT e.name) AS names", c=collection)
    names = {r["title"]: set(r["names"]) for r in rows}
    assert names["Procès-verbal"] == {"quarren_export", "Procès-verbal"}, names  # its code and its title
    assert {"Olga Brandt", "Brannoch Systems", "Chelsea"} <= names["Minutes"], names


MKDOCS_PAGE = """# Pump Priming { #pump-priming }

<!-- md:version 4.2.0 -->

Quellmark pumps are primed before the first shift.

/// warning | Dry running

A Quellmark pump run dry scores its seals within a minute.

///

{* ../../docs_src/priming/tutorial001.py hl[3] *}

--8<-- "includes/abbreviations.md"

:material-check:{ style="color: #4DB6AC" } Certified by Brannoch Systems.

[Try the priming calculator](https://play.quellmark.example/#PLAYGROUND)
"""


async def test_mkdocs_markup_comments_and_long_links_stay_out_of_chunks_and_graph(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    """A FastAPI/Material-style page: its block fences, includes, icons, heading anchor, HTML comment and a
    playground link carrying 3 KB of base64 reach neither the chunks nor the graph; its prose does."""
    payload = "eNqFkc9uwjAMxl/F6wXQKIVNk1AX0HbZC4zDDr2E4EK0NIkStxtDvPviFQ0OSFzyx+TEZvl1uM" * 40
    (tmp_path / "priming.md").write_text(MKDOCS_PAGE.replace("PLAYGROUND", payload))
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    contents = [r["content"] for r in await runtime.postgres.pool.fetch(
        "SELECT content FROM chunks WHERE collection = $1", collection)]
    assert len(contents) == 1, contents  # before: the link alone made chunks of base64
    assert not any(m in contents[0] for m in ("///", "{*", "--8<--", ":material-", "{ #", "<!--", "md:version",
                                              payload[:16]))
    assert "Dry running" in contents[0] and "(https://play.quellmark.example/)" in contents[0]
    hit = (await rest_search(router, "pump run dry seals", mode="keyword", limit=1,
                             collections=[collection]))["results"][0]
    assert hit["title"] == "Pump Priming" and "scores its seals" in hit["content"], hit
    names = await _entity_names(runtime, collection)
    assert "Brannoch Systems" in names, names
    assert not any(re.search(r"[{}/:]|eNq|docs_src|md:", n) for n in names), names


ADMONITION_PAGE = """# Seal Care

Quellmark pumps carry two seals.

!!! warning "Dry running"
    A Quellmark pump run dry scores its seals within a minute. Olga Brandt of Brannoch Systems
    measured the wear.

        seal_wear = 0.4

=== "pip"

    ```bash
    pip install quellmark-tools
    ```

=== "uv"
    ```bash
    uv add quellmark-tools
    ```

/// tip | Checked *twice* by **Olga**
Keep a spare seal.
///
"""


async def test_admonitions_and_tabs_reach_the_stores_as_the_page_shows_them(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    """Material for MkDocs' admonitions and content tabs: the chunk shows each title in bold, without the
    "!!!" and "===" markers, and the bodies as written on the page (prose as prose, code as code), so the
    admonition's prose is read for names and found by keyword search."""
    (tmp_path / "seals.md").write_text(ADMONITION_PAGE)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, [])
    contents = [r["content"] for r in await runtime.postgres.pool.fetch(
        "SELECT content FROM chunks WHERE collection = $1", collection)]
    assert len(contents) == 1, contents
    lines = [line.rstrip() for line in contents[0].split("\n") if line.strip()]
    assert not any(line.lstrip().startswith(("!!!", "===")) for line in lines), lines
    assert "**Dry running**" in lines and "**pip**" in lines and "**uv**" in lines, lines
    assert "**Checked twice by Olga**" in lines, lines  # a title's own emphasis goes: all of it is bold
    assert "A Quellmark pump run dry scores its seals within a minute. Olga Brandt of Brannoch Systems" in lines
    assert lines[lines.index("**pip**") + 1:lines.index("**pip**") + 4] == [
        "```bash", "pip install quellmark-tools", "```"], lines
    assert "    seal_wear = 0.4" not in lines and "seal_wear = 0.4" in lines  # indented code inside, now fenced
    hit = (await rest_search(router, "pump run dry scores seals", mode="keyword", limit=1,
                             collections=[collection]))["results"][0]
    assert hit["title"] == "Seal Care" and "**Dry running**" in hit["content"], hit
    names = await _entity_names(runtime, collection)
    assert {"Olga Brandt", "Brannoch Systems"} <= names, names
    assert not any(re.search(r"[!=*]", n) for n in names), names


async def test_admonition_titles_of_html_and_rst_pages_are_block_titles(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> None:
    """Sphinx's and MkDocs' HTML (``<p class="admonition-title">``) and reStructuredText admonitions (read
    through docutils' HTML) show their title in bold, as the Markdown loaders do, so the extractor
    knows it for a block's title: "Technical Details" over an aside is no name; the body's names are."""
    (tmp_path / "seals.html").write_text(
        "<html><body><main><h1>Seal Care</h1><p>Quellmark pumps carry two seals, run by `seal.check()`, "
        "<code>seal.swap()</code> and <code>seal.log()</code>.</p><div class=\"admonition note\">"
        "<p class=\"admonition-title\">Technical Details</p><p>Olga Brandt of Brannoch Systems measured the "
        "wear.</p></div></main></body></html>")
    (tmp_path / "pumps.rst").write_text(
        "Pump Care\n=========\n\nRun ``pump.prime()``, ``pump.drain()`` and ``pump.stop()`` in order.\n\n"
        ".. admonition:: Technical Details\n\n   Olga Brandt of Brannoch Systems primed the pump.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (2, []), report.failed
    contents = [r["content"] for r in await runtime.postgres.pool.fetch(
        "SELECT content FROM chunks WHERE collection = $1", collection)]
    assert len(contents) == 2 and all("**Technical Details**" in c for c in contents), contents
    names = await _entity_names(runtime, collection)
    assert {"Olga Brandt", "Brannoch Systems"} <= names and "Technical Details" not in names, names


# An mdBook page of the Rust Reference (mdbook-spec): rule ids that link to themselves, a "Tests" control
# with its hidden popup, a grammar under a bold "Syntax" line, an example's hidden lines ("boring": `fn
# main() {` around it), a note as a quote.
MDBOOK_SPEC_PAGE = """<html><head><title>Functions - The Rust Reference</title></head><body><nav class="sidebar">Introduction</nav><main>
<div class="rule" id="r-items.fn"><a class="rule-link" href="#r-items.fn" title="items.fn"><span>[items<wbr>.fn]</span></a></div>
<h1 id="functions"><a class="header" href="#functions">Functions</a></h1>
<div class="rule" id="r-items.fn.intro"><a class="rule-link" href="#r-items.fn.intro" title="items.fn.intro"><span>[items<wbr>.fn<wbr>.intro]</span></a>
<br>
<div class="test-link"><a href="javascript:void(0)" onclick="spec_toggle_tests('items.fn.intro');"><span>Tests</span></a></div>
</div>
<div id="tests-items.fn.intro" class="tests-popup popup-hidden">
Tests with this rule:
<ul><li><a href="https://github.com/rust-lang/rust/blob/1.95.0/tests/ui/fn.rs">tests/ui/fn.rs</a></li></ul>
</div>
<p>A Quellmark function consists of a block, run by <code>answer()</code>.</p>
<div class="grammar-container"><p><strong><sup>Syntax</sup></strong>
<br>
<span class="grammar-text"><a href="#grammar-Function">Function</a></span> → <span class="grammar-literal">fn</span> IDENTIFIER</p></div>
<p><strong>Tier: 3</strong></p>
<p><strong>Thanks to Olga Brandt and Piet Vantorel, who wrote the first Quellmark lints with us in Brannoch.</strong></p>
<pre class="playground"><code class="language-rust edition2024"><span class="boring">#![allow(unused)]
</span><span class="boring">fn main() {
</span>fn answer() -&gt; i32 {
    return 42;
}
<span class="boring">}</span></code></pre>
<div class="alert alert-note">
<blockquote>
<p class="alert-title"><svg viewbox="0 0 16 16" width="18" height="18"><path d="M0 8a8 8 0 1 1 16 0"></path></svg>Note</p>
<p>Olga Brandt of Brannoch Systems wrote the <code>answer</code> lint.</p>
</blockquote>
</div>
<section id="calls"><a href="#calls">Calls</a> link to their section and keep their words.</section>
</main></body></html>
"""


def test_an_mdbook_page_reads_as_its_reader_sees_it(tmp_path: Path) -> None:
    (tmp_path / "functions.html").write_text(MDBOOK_SPEC_PAGE)
    doc = _load(tmp_path / "functions.html", "html")
    assert doc.text == ("# Functions\n\nA Quellmark function consists of a block, run by `answer()`.\n\n"
                        # a bold first line over a line break, and a short paragraph wholly in bold, are titles;
                        # a long one is a sentence set in bold
                        "**Syntax**\n\nFunction → fn IDENTIFIER\n\n**Tier: 3**\n\n"
                        "Thanks to Olga Brandt and Piet Vantorel, who wrote the first Quellmark lints with us in "
                        "Brannoch.\n\n```rust\nfn answer() -> i32 {\n    return 42;\n}\n```\n\n**Note**\n\n"
                        "> Olga Brandt of Brannoch Systems wrote the `answer` lint.\n\n"
                        "Calls link to their section and keep their words."), doc.text


async def test_an_mdbook_page_reaches_the_stores_without_its_controls(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    (tmp_path / "functions.html").write_text(MDBOOK_SPEC_PAGE)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report.failed
    [content] = [r["content"] for r in await runtime.postgres.pool.fetch(
        "SELECT content FROM chunks WHERE collection = $1", collection)]
    for gone in ("items.fn", "Tests", "tests/ui", "fn main", "allow(unused)"):
        assert gone not in content, (gone, content)
    assert "**Syntax**\n\nFunction" in content and "**Tier: 3**" in content
    hits = (await rest_search(router, "Quellmark function block", mode="keyword", limit=1,
                              collections=[collection]))["results"]
    assert hits and "**Note**" in hits[0]["content"], hits
    names = await _entity_names(runtime, collection)
    assert {"Olga Brandt", "Brannoch Systems", "Piet Vantorel"} <= names, names
    assert not any("items." in n or "Syntax" in n or "Tier" in n for n in names), names


async def test_text_in_legacy_encodings_reaches_the_stores_as_written(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    """Windows-1252 notes, a Windows-1251 Markdown page and a UTF-16 HTML page were refused before ("not
    valid UTF-8", "NUL bytes"): their text was lost. They are read in their encoding now."""
    (tmp_path / "notes.txt").write_bytes("The Quellmark “priming” guide: flush the intake, then the façade valve.\n"
                                         "Contratação de sucesso: não contabilize.\n".encode("cp1252"))
    (tmp_path / "guide.md").write_bytes("# Насос Квелмарк\n\nОператор прокачивает насос перед каждой сменой, "
                                        "а затем проверяет уплотнения.\n".encode("cp1251"))
    (tmp_path / "page.html").write_bytes("<html><head><title>Brannoch Systems</title></head><body><main>"
                                         "<h1>Brannoch Systems</h1><p>Brannoch Systems builds pump seals in "
                                         "Zürich.</p></main></body></html>".encode("utf-16"))
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (3, []), report.failed
    for query, title in [("façade valve", "notes"), ("прокачивает насос", "Насос Квелмарк"),
                         ("pump seals Zürich", "Brannoch Systems")]:
        hits = (await rest_search(router, query, mode="keyword", limit=1, collections=[collection]))["results"]
        assert hits and hits[0]["title"] == title, (query, hits)
    contents = " ".join(r["content"] for r in await runtime.postgres.pool.fetch(
        "SELECT content FROM chunks WHERE collection = $1", collection))
    assert "“priming”" in contents and "não contabilize" in contents and "\ufffd" not in contents


async def test_a_pdf_page_pypdf_cannot_parse_leaves_the_other_pages_readable(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    """One damaged content stream (a page of Apache Tika's testPDF_bad_page_303226.pdf fails the same way)
    made the whole PDF a load error; the other pages are read now, and the metadata names the lost one."""
    from fpdf import FPDF

    pdf = FPDF(unit="pt")
    pdf.set_compression(False)
    for text in ["Quellmark pumps are primed before the first shift.", "XSECONDPAGEX damaged content here",
                 "Brannoch seals are checked after each shift."]:
        pdf.add_page()
        pdf.set_font("helvetica", size=11)
        pdf.text(72, 100, text)
    segment = b"(XSECONDPAGEX damaged content here) Tj"
    data = bytes(pdf.output())
    assert segment in data
    # "FR" is no PDF object: pypdf fails on the page. Same length, so the file's offsets hold.
    (tmp_path / "manual.pdf").write_bytes(data.replace(segment, b"[628 FR 13674 , Mar. 24 , 197] TJ".ljust(len(segment))))
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report.failed
    hit = (await rest_search(router, "Brannoch seals checked", mode="keyword", limit=1,
                             collections=[collection]))["results"][0]
    assert hit["metadata"]["page"] == 3 and hit["metadata"]["unreadable_pages"] == [2], hit["metadata"]


def test_pages_are_read_from_their_characters_only_where_ruling_or_overprinting_calls_for_it(tmp_path: Path) -> None:
    """pdfplumber's character-level read costs several times pypdf's text; it is kept for pages that
    paint edges both ways (a table's ruling, lines or boxes) or whose pypdf text shows fake bold."""
    from fpdf import FPDF
    from pypdf import PdfReader

    from graphrag.ingest.pdf_reader import _draws_paths, _looks_overprinted

    pdf = FPDF(unit="pt")
    pdf.add_page()  # 1: a header rule and a fraction bar: horizontal only
    pdf.set_font("helvetica", size=11)
    pdf.text(72, 60, "Quellmark Pump Handbook")
    pdf.line(72, 66, 520, 66)
    pdf.rect(200, 200, 60, 0.5, style="F")
    pdf.add_page()  # 2: a grid of lines
    for i in range(3):
        pdf.line(72, 100 + 20 * i, 372, 100 + 20 * i)
        pdf.line(72 + 150 * i, 100, 72 + 150 * i, 140)
    pdf.add_page()  # 3: cells as boxes
    pdf.rect(72, 100, 150, 20)
    pdf.rect(222, 100, 150, 20)
    pdf.add_page()  # 4: a clipping path only (ends in "n"), never painted
    with pdf.rect_clip(72, 100, 300, 40):
        pdf.text(80, 120, "clipped text")
    path = tmp_path / "ruling.pdf"
    pdf.output(str(path))
    assert [_draws_paths(page) for page in PdfReader(str(path)).pages] == [False, True, True, False]
    assert _looks_overprinted("Pump SetupPump SetupPump Setup\nLine 1") and _looks_overprinted("2011201120112011")
    assert _looks_overprinted("年年年年 报告") and _looks_overprinted("PPuummpp SSeettuupp iiss hheerree")
    assert not any(_looks_overprinted(t) for t in ("What's New ............ 3", "$0 $0 $0 $0",
                                                  "through through through through", "a husband and and a wife"))


@pytest.mark.timeout(60)  # a hang guard: the repeat pattern tries 118 lengths at each place
def test_the_overprint_check_costs_bounded_work_on_a_long_page() -> None:
    from graphrag.ingest.pdf_reader import _looks_overprinted

    assert not _looks_overprinted("ab" + "abcdefgh" * 250_000)  # 2 MB on one line, no repeat where a word starts
    assert not _looks_overprinted(" ".join(f"word{i}" for i in range(300_000)))


# -- include directives ----------------------------------------------------------------------------------
async def test_included_files_reach_the_stores_and_a_change_to_one_is_picked_up(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    project = tmp_path / "book"
    (project / ".git").mkdir(parents=True)
    (project / "listings").mkdir()
    listing = project / "listings" / "main.rs"
    listing.write_text('// ANCHOR: all\nfn main() {\n    let harbour = "zyxquartharbour";\n}\n// ANCHOR_END: all\n')
    (project / "snippets").mkdir()
    (project / "snippets" / "history.md").write_text("Olga Brennick founded the Marrowgate observatory in 1921.\n")
    (tmp_path / "secret.txt").write_text("vantorel_password = hunter2\n")
    (project / "src").mkdir()
    (project / "src" / "ch01.md").write_text(
        "# Tides\n\nThe program reads the harbour:\n\n```rust\n{{#rustdoc_include ../listings/main.rs:all}}\n```\n\n"
        "{{#include ../snippets/history.md}}\n\n```text\n{{#include ../../secret.txt}}\n```\n")
    # AsciiDoc, through an attribute the page defines
    (project / "listings" / "Tide.java").write_text(
        "class Tide {\n  // tag::sound[]\n  int zyxquartSounding() { return 3; }\n  // end::sound[]\n}\n")
    (project / "src" / "guide.adoc").write_text(
        "= Sounding guide\n:sourcedir: ../listings\n\nThe gauge calls one method.\n\n"
        "[source,java]\n----\ninclude::{sourcedir}/Tide.java[tag=sound]\n----\n")
    report = await ingestor.ingest_paths([project / "src"], collection=collection)
    assert (report.ingested, report.failed, report.included) == (2, [], 3), report
    [hit] = (await rest_search(router, "zyxquartharbour", mode="keyword", limit=3, collections=[collection]))["results"]
    assert 'let harbour = "zyxquartharbour";' in hit["content"] and "ANCHOR" not in hit["content"]
    [hit] = (await rest_search(router, "zyxquartSounding", mode="keyword", limit=3, collections=[collection]))["results"]
    assert hit["title"] == "Sounding guide" and "int zyxquartSounding() { return 3; }" in hit["content"], hit
    assert not (await rest_search(router, "vantorel_password", mode="keyword", limit=3,
                                  collections=[collection]))["results"]
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.name AS name, e.label AS label", c=collection)
    assert {r["name"]: r["label"] for r in rows}.get("Olga Brennick") == "PERSON", rows
    # the page is the same file, but what it shows changed: the next ingest updates it
    listing.write_text('// ANCHOR: all\nfn main() {\n    let harbour = "quellportharbour";\n}\n// ANCHOR_END: all\n')
    again = await ingestor.ingest_paths([project / "src"], collection=collection)
    assert again.updated == 1, again
    assert (await rest_search(router, "quellportharbour", mode="keyword", limit=3, collections=[collection]))["results"]
    assert not (await rest_search(router, "zyxquartharbour", mode="keyword", limit=3,
                                  collections=[collection]))["results"]


async def test_api_reference_pages_are_filled_in_from_the_projects_python_sources(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "src" / "tides").mkdir(parents=True)
    (tmp_path / "src" / "tides" / "__init__.py").write_text("from .gauge import Gauge as Gauge\n")
    (tmp_path / "src" / "tides" / "gauge.py").write_text(
        'class Gauge:\n    """A Quellport tide gauge."""\n\n    def sound(self, hour: int) -> float:\n'
        '        """Sound the zyxquart channel at the given hour.\n\n        Parameters\n        ----------\n'
        '        hour : int\n            Hours after midnight.\n        """\n')
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "api.rst").write_text("API\n===\n\n.. module:: tides\n\n.. autoclass:: Gauge\n   :members:\n")
    (tmp_path / "docs" / "reference.md").write_text("# Reference\n\n::: tides.Gauge\n")  # mkdocstrings
    report = await ingestor.ingest_paths([tmp_path / "docs"], collection=collection)
    # the reference page had no text of its own before: it was skipped
    assert (report.ingested, report.failed, report.skipped) == (2, [], []), report
    hits = (await rest_search(router, "zyxquart channel", mode="keyword", limit=5, collections=[collection]))["results"]
    assert sorted(h["title"] for h in hits) == ["API", "Reference"], hits
    api = next(h for h in hits if h["title"] == "API")
    # the signature as code, NumPy's sections as rubrics, "hour : int" with its classifier
    assert "`sound(hour: int) -> float`" in api["content"] and "hour: int: Hours after midnight." in api["content"]


async def test_autosummary_tables_reach_the_stores_with_their_summaries_and_toctree_pages(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "tides").mkdir()
    (tmp_path / "tides" / "__init__.py").write_text("from .gauge import Gauge, sound\n")
    (tmp_path / "tides" / "gauge.py").write_text(
        'class Gauge:\n    """A Quellport tide gauge."""\n\n\ndef sound(hour: int) -> float:\n'
        '    """Sound the channel at the given hour.\n\n    The zyxquart lead is dropped twice.\n    """\n')
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "api.rst").write_text(
        "API\n===\n\n.. currentmodule:: tides\n\n.. autosummary::\n\n   Gauge\n\n"
        "Functions\n---------\n\n.. autosummary::\n   :toctree: generated/\n\n   sound\n")
    report = await ingestor.ingest_paths([tmp_path / "docs"], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    [summary] = (await rest_search(router, "Quellport gauge", mode="keyword", limit=3, collections=[collection]))["results"]
    assert "`Gauge`: A Quellport tide gauge." in summary["content"], summary
    # the generated page's text (the docstring past its first sentence) is in the page
    [page] = (await rest_search(router, "zyxquart lead", mode="keyword", limit=3, collections=[collection]))["results"]
    assert "`sound(hour: int) -> float`" in page["content"] and page["title"] == "API", page


async def test_myst_eval_rst_blocks_reach_the_stores_as_they_render(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "tides").mkdir()
    (tmp_path / "tides" / "__init__.py").write_text(
        'def sound(hour: int) -> float:\n    """Sound the zyxquart channel at the given hour."""\n')
    (tmp_path / "docs" / "snippets").mkdir(parents=True)
    (tmp_path / "docs" / "snippets" / "tides.rst").write_text("The Marrowgate tables are :emphasis:`hourly`.\n")
    (tmp_path / "docs" / "api.md").write_text(
        "# API\n\n````{note}\nA MyST note.\n````\n\n```{eval-rst}\n.. autofunction:: tides.sound\n\n"
        ".. include:: snippets/tides.rst\n```\n\nThe Vantorel page ends here.\n")
    report = await ingestor.ingest_paths([tmp_path / "docs"], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    [hit] = (await rest_search(router, "zyxquart channel", mode="keyword", limit=3, collections=[collection]))["results"]
    assert "`tides.sound(hour: int) -> float`" in hit["content"], hit  # the function's reference, from its source
    [table] = (await rest_search(router, "Marrowgate tables", mode="keyword", limit=3, collections=[collection]))["results"]
    assert "The Marrowgate tables are hourly." in table["content"] and ".. " not in table["content"], table


async def test_an_api_page_of_a_monorepos_compiled_package_reaches_the_stores(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    (tmp_path / ".git").mkdir()
    package = tmp_path / "tides-core" / "python" / "tides_core"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("from ._core import Validator\n")
    (package / "_core.pyi").write_text('class Validator:\n    """Checks zyxquart tide tables in compiled code."""\n')
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "core.md").write_text("::: tides_core\n    options:\n        members:\n        - Validator\n")
    report = await ingestor.ingest_paths([tmp_path / "docs"], collection=collection)
    assert (report.ingested, report.skipped) == (1, []), report  # skipped as "no text of its own" before
    [hit] = (await rest_search(router, "zyxquart tide tables", mode="keyword", limit=3, collections=[collection]))["results"]
    assert "tides_core.Validator" in hit["content"], hit


async def test_a_target_directive_over_its_section_is_not_text(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, collection: str) -> None:
    """Django's and Scrapy's ``.. setting:: NAME`` over the section titled NAME marks a target: it showed the
    name again above the title, where it ended the section before."""
    (tmp_path / "settings.rst").write_text(
        "Settings\n========\n\n.. setting:: QUELLPORT_HOST\n\nQUELLPORT_HOST\n--------------\n\n"
        "The host of the Quellport harbour server, read at start.\n\n.. setting:: QUELLPORT_PORT\n\n"
        "``QUELLPORT_PORT``\n------------------\n\nThe port it listens on.\n\n"
        ".. setting:: QUELLPORT_TIMEOUT\n\nA described setting keeps its name: no section is titled so.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    [text] = [r["text"] for r in await runtime.postgres.pool.fetch(
        "SELECT string_agg(content, E'\\n' ORDER BY chunk_index) AS text FROM chunks WHERE collection = $1", collection)]
    assert text.count("QUELLPORT_HOST") == 1 and text.count("QUELLPORT_PORT") == 1, text
    assert "`QUELLPORT_TIMEOUT`" in text  # not over a section of its name: a description, shown


async def test_pdf_chunks_carry_the_bookmarks_heading_path_and_page(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    _pdf_with_bookmarks(tmp_path / "manual.pdf")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    [hit] = (await rest_search(router, "zyxquart lines", mode="keyword", limit=3, collections=[collection]))["results"]
    assert hit["title"] == "Quellport Harbour Manual" and hit["metadata"]["page"] == 1, hit
    assert hit["heading_path"] == ["1. Berths", "1.1. Mooring"] and "Vantorel" not in hit["content"], hit
    # a section's chunk does not run into the next section, and "#" in the text is no heading
    [tides] = (await rest_search(router, "Marrowgate tide tables", mode="keyword", limit=3, collections=[collection]))["results"]
    assert tides["heading_path"] == ["2. Tides"] and tides["metadata"]["page"] == 2, tides


async def test_pdf_headings_from_the_type_are_the_chunks_heading_path(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    _pdf_with_bookmarks(tmp_path / "manual.pdf", bookmarks=False)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    [hit] = (await rest_search(router, "zyxquart lines", mode="keyword", limit=3, collections=[collection]))["results"]
    assert hit["heading_path"] == ["1. Berths", "1.1. Mooring"] and hit["metadata"]["page"] == 1, hit
    [tides] = (await rest_search(router, "Marrowgate tide tables", mode="keyword", limit=3, collections=[collection]))["results"]
    assert tides["heading_path"] == ["2. Tides"] and tides["metadata"]["page"] == 2, tides


async def test_link_roles_show_their_sphinx_captions_in_the_stores(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "conf.py").write_text('extlinks = {"issue": ("https://example.org/issues/%s", "GH%s")}\n')
    (tmp_path / "docs" / "changes.rst").write_text(
        "Changes\n=======\n\n- The zyxquart gauge reads hourly. :issue:`4321`\n"
        "- Vantorel moorings follow :pep:`484#abstract` and :issue:`the tide fix <99>`.\n")
    report = await ingestor.ingest_paths([tmp_path / "docs"], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    [hit] = (await rest_search(router, "zyxquart gauge", mode="keyword", limit=3, collections=[collection]))["results"]
    assert "reads hourly. GH4321" in hit["content"], hit
    assert "follow PEP 484 and the tide fix." in " ".join(hit["content"].split()), hit


async def test_a_bare_ref_across_files_reaches_the_stores_as_the_sections_title(  # rst and MyST
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "reference.rst").write_text(
        ".. _`tide-tables`:\n\nMarrowgate tide tables\n======================\n\nThe tables list each harbour.\n")
    (tmp_path / "howto.rst").write_text(
        "Reading the tides\n=================\n\nBefore sailing, see :ref:`tide-tables` for the Quellport times.\n")
    (tmp_path / "faq.md").write_text("# Tide questions\n\nThe Vantorel ferry follows {ref}`tide-tables`.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (3, []), report.failed
    hits = (await rest_search(router, "Quellport", mode="keyword", limit=3, collections=[collection]))["results"]
    assert [h["title"] for h in hits] == ["Reading the tides"], hits
    assert "see Marrowgate tide tables for the Quellport times" in " ".join(hits[0]["content"].split())
    [faq] = (await rest_search(router, "Vantorel ferry", mode="keyword", limit=3, collections=[collection]))["results"]
    assert "follows Marrowgate tide tables" in " ".join(faq["content"].split()), faq


async def test_a_partial_is_read_in_the_pages_that_include_it_not_as_a_page(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "_quellport-warning.mdx").write_text(":::warning\nThe Quellport gauge is experimental.\n:::\n")
    (tmp_path / "docs" / "gauge.mdx").write_text(
        "import Warning from './_quellport-warning.mdx';\n\n# Tide gauge\n\n<Warning />\n\nRead the Vantorel scale.\n")
    (tmp_path / "docs" / "_index.md").write_text("# Section\n\nThe Quellport section page, included by no one.\n")
    # A folder named for included pieces (MyST-Parser's faq/snippets/, Antora's partials/) holds partials too.
    (tmp_path / "docs" / "snippets").mkdir()
    (tmp_path / "docs" / "snippets" / "tides.md").write_text("The Marrowgate tide board reads hourly.\n")
    (tmp_path / "docs" / "snippets" / "alone.md").write_text("# Alone\n\nA Brannoch page nobody includes.\n")
    (tmp_path / "docs" / "faq.md").write_text("# Tide FAQ\n\n```{include} snippets/tides.md\n```\n\nAsk the harbour.\n")
    # Quarto's include shortcode, of a "_" file
    (tmp_path / "docs" / "_ferries.qmd").write_text("The Brannoch ferry leaves at noon.\n")
    (tmp_path / "docs" / "ferries.qmd").write_text("# Ferries\n\n{{< include _ferries.qmd >}}\n")
    report = await ingestor.ingest_paths([tmp_path / "docs"], collection=collection)
    assert (report.ingested, report.failed) == (5, []), report
    [ferry] = (await rest_search(router, "noon", mode="keyword", limit=5, collections=[collection]))["results"]
    assert ferry["title"] == "Ferries" and "The Brannoch ferry leaves at noon." in ferry["content"], ferry
    partials = [str((tmp_path / "docs" / name).resolve())
                for name in ("_ferries.qmd", "_quellport-warning.mdx", "snippets/tides.md")]
    for partial in partials:
        assert {"path": partial, "reason": "a partial, read in the pages that include it"} in report.skipped
    hits = (await rest_search(router, "hourly", mode="keyword", limit=5,
                              collections=[collection]))["results"]
    assert [h["title"] for h in hits] == ["Tide FAQ"], hits
    assert (await rest_search(router, "Brannoch", mode="keyword", limit=5, collections=[collection]))["results"]
    hits = (await rest_search(router, "Quellport gauge experimental", mode="keyword", limit=5,
                              collections=[collection]))["results"]
    shown = [h for h in hits if "The Quellport gauge is experimental." in h["content"]]
    assert [h["title"] for h in shown] == ["Tide gauge"], hits  # once, in the page; not again as a page


async def test_code_in_list_items_and_block_quotes_is_code_and_the_text_after_it_is_prose(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    # A MyST list-table whose cells open code fences on the items' lines (a row of text between them), then
    # a block-quoted listing: the text between is prose (its role rewritten, its names found) and the
    # code stays code (the name in its comment is no entity).
    (tmp_path / "tides.md").write_text(
        "(tide-tables)=\n# Marrowgate tide tables\n\nThe tables list each harbour.\n\n"
        "`````{list-table}\n:header-rows: 1\n\n* - Setting\n  - Example\n* - Offset\n"
        "  - ```yaml\n    quellport_offset: 3\n    ```\n"
        "* - Keeper\n  - Olga Brandt keeps the Quellport gauges; see {ref}`tide-tables` for the times.\n"
        "* - Depth\n  - ```yaml\n    quellport_depth: 2\n    ```\n`````\n\n"
        "> ```rust\n> // Ferris Quentin wrote this sounding routine.\n> let vantorel_depth = sound(harbour);\n> ```\n\n"
        "The gauges were built by Brannoch Systems in 1998.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    contents = " ".join(r["content"] for r in await runtime.postgres.pool.fetch(
        "SELECT content FROM chunks WHERE collection = $1", collection))
    assert "see Marrowgate tide tables for the times" in " ".join(contents.split()) and "{ref}" not in contents
    assert "quellport_offset: 3" in contents and "let vantorel_depth" in contents  # the code is kept
    [hit] = (await rest_search(router, "Quellport gauges", mode="keyword", limit=3, collections=[collection]))["results"]
    assert "Olga Brandt" in hit["content"]
    rows, _, _ = await runtime.neo4j.driver.execute_query(
        "MATCH (e:Entity {collection: $c}) RETURN e.name AS name", c=collection)
    names = {r["name"] for r in rows}
    assert "Brannoch Systems" in names, names  # read as prose after the quoted listing
    assert "Ferris Quentin" not in names, names  # a comment in the quoted listing: code


async def test_templates_are_not_pages_and_html_front_matter_is_metadata(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "base.html").write_text(
        '<html><body>{% extends "layout.html" %}\n{% block nav %}{% for page in pages %}<a href="{{ page.url }}">'
        "{{ page.title }}</a>{% endfor %}{% endblock %}\n<footer>Quellport {{ year }}</footer></body></html>\n")
    (tmp_path / "harbour.html").write_text(
        "---\nlayout: page\ntitle: Vantorel harbour\npermalink: /harbour/\n---\n\n"
        "<p>The Vantorel harbour opens at dawn for the Marrowgate ferries.</p>\n"
        "<ul>{% for berth in site.data.berths %}<li>{{ berth.name }}</li>{% endfor %}</ul>\n")
    (tmp_path / "inheritance.md").write_text(
        "# Template inheritance\n\nA child template names its Quellport parent with `{% extends \"base.html\" %}`.\n\n"
        "```jinja\n{% extends \"base.html\" %}\n{% block body %}{{ super() }}{% endblock %}\n```\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (2, []), report
    assert [(Path(s["path"]).name, s["reason"]) for s in report.skipped] == [
        ("base.html", "a template (its text is mostly template tags such as {% %} and {{ }}), not a page")]
    [harbour] = (await rest_search(router, "Marrowgate ferries", mode="keyword", limit=3, collections=[collection]))["results"]
    assert harbour["title"] == "Vantorel harbour", harbour
    assert "layout:" not in harbour["content"] and "{%" not in harbour["content"] and "berth.name" not in harbour["content"]
    permalink = await runtime.postgres.pool.fetchval(
        "SELECT metadata->>'permalink' FROM documents WHERE collection = $1 AND title = $2", collection, "Vantorel harbour")
    assert permalink == "/harbour/"
    hits = (await rest_search(router, "Quellport", mode="keyword", limit=5, collections=[collection]))["results"]
    assert [h["title"] for h in hits] == ["Template inheritance"], hits  # the layout's footer is not indexed
    with pytest.raises(NoText):  # an upload of a template is refused like any file without text
        load_bytes("base.html", (tmp_path / "templates" / "base.html").read_bytes(), 1 << 20)


async def test_a_page_that_only_includes_another_page_is_not_ingested_twice(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "CHANGES.rst").write_text("Changes\n=======\n\nVersion 2.1\n-----------\n\nThe zyxquart gauge reads hourly.\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "changes.rst").write_text(".. include:: ../CHANGES.rst\n")  # Sphinx's changelog page
    (tmp_path / "docs" / "history.rst").write_text("History\n=======\n\nBefore the list:\n\n.. include:: ../CHANGES.rst\n")
    (tmp_path / "docs" / "a.md").write_text("{{#include b.md}}\n")  # two pages that only include each other
    (tmp_path / "docs" / "b.md").write_text("{{#include a.md}}\n\nThe Brannoch note.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.failed == [], report
    changes = str(tmp_path / "docs" / "changes.rst")
    assert [s for s in report.skipped if s["path"] == changes] == [
        {"path": changes, "reason": f"shows only {tmp_path / 'CHANGES.rst'}, ingested as itself"}]
    hits = (await rest_search(router, "zyxquart", mode="keyword", limit=5, collections=[collection]))["results"]
    # the file itself, and the page with text of its own around it; not the page that only shows it
    assert sorted(Path(h["source"]).name for h in hits) == ["CHANGES.rst", "history.rst"], hits
    assert (await rest_search(router, "Brannoch", mode="keyword", limit=5, collections=[collection]))["results"]


async def test_document_headers_are_metadata_and_name_the_document(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    """A PEP's RFC 2822 header, Python-Markdown's "Title:" lines and a reStructuredText file's opening
    field list are the document's metadata and title, not a run-on first paragraph."""
    (tmp_path / "pep-9999.rst").write_text(
        "PEP: 9999\nTitle: Frobnicated Imports\nAuthor: Jane Doe <jane@example.org>,\n        Ada Roe <ada@example.org>\n"
        "Status: Draft\nType: Standards Track\nPython-Version: 3.15\n\n\nAbstract\n========\n\n"
        "This PEP proposes that the Quorvath importer frobnicates modules.\n\nRationale\n=========\n\n"
        "Frobnication keeps the Quorvath cache warm.\n")
    (tmp_path / "notes.md").write_text(
        "Title: Quorvath release notes\nAuthor: Bo Lee\nDate: 2024-05-01\n\n## 1.0\n\nThe Quorvath importer shipped.\n")
    (tmp_path / "guide.rst").write_text(":Author: Cy Park\n:Version: 2.1\n\nQuorvath guide\n==============\n\n"
                                        "Install the Quorvath importer first.\n")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (3, []), report
    rows = {r["title"]: dict(r) for r in await runtime.postgres.pool.fetch(
        "SELECT title, metadata->>'status' AS status, metadata->>'author' AS author, metadata->'author' AS authors, "
        "metadata->>'version' AS version FROM documents WHERE collection = $1", collection)}
    assert set(rows) == {"PEP 9999 – Frobnicated Imports", "Quorvath release notes", "Quorvath guide"}
    pep = rows["PEP 9999 – Frobnicated Imports"]
    assert pep["status"] == "Draft" and pep["author"] == "Jane Doe <jane@example.org>, Ada Roe <ada@example.org>"
    assert rows["Quorvath guide"]["version"] == "2.1" and rows["Quorvath release notes"]["author"] == "Bo Lee"
    leftovers = await runtime.postgres.pool.fetchval(
        "SELECT count(*) FROM chunks WHERE collection = $1 AND (content LIKE '%example.org%' OR content LIKE '%Title:%'"
        " OR content LIKE '%Author%' OR content LIKE '%Python-Version%')", collection)
    assert leftovers == 0
    paths = await runtime.postgres.pool.fetch(
        "SELECT c.heading_path FROM chunks c JOIN documents d ON d.id = c.document_id WHERE d.collection = $1"
        " AND d.title LIKE 'PEP%' ORDER BY c.chunk_index", collection)
    assert paths and all(r["heading_path"][0] == "PEP 9999 – Frobnicated Imports" for r in paths)  # sections nest under it
    hits = (await rest_search(router, "Quorvath importer", mode="keyword", limit=5, collections=[collection],
                              filters={"status": "Draft"}))["results"]
    assert [h["title"] for h in hits] == ["PEP 9999 – Frobnicated Imports"] * len(hits) and hits
