"""Include directives filled in from the files they name (pure logic: files in a temporary folder)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from graphrag.ingest.includes import (
    Includes,
    between_markers,
    expand_asciidoc,
    expand_markdown,
    expand_rst,
    project_root,
    python_object,
    select_lines,
)
from graphrag.ingest.load import Found, discover, load_file

LISTING = """\
use std::io;

// ANCHOR: main
fn main() {
    // ANCHOR: print
    println!("Guess the Quorvane number!");
    // ANCHOR_END: print
}
// ANCHOR_END: main
"""

MODULE = '''\
"""Tide tables."""
import math


class Tides:
    @staticmethod
    def height(hour):
        return math.sin(hour)

    def low(self):
        return 0


def spring():
    return "Marrowgate"
'''


def _project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir(parents=True)
    (tmp_path / "listings").mkdir()
    (tmp_path / "listings" / "main.rs").write_text(LISTING)
    (tmp_path / "src").mkdir()
    (tmp_path / "examples").mkdir()
    (tmp_path / "examples" / "tides.py").write_text(MODULE)
    return tmp_path


def test_select_lines_reads_sphinx_specs() -> None:
    text = "a\nb\nc\nd\ne\n"
    assert select_lines(text, "2") == "b\n"
    assert select_lines(text, "2-3,5") == "b\nc\ne\n"
    assert select_lines(text, "4-") == "d\ne\n"
    assert select_lines(text, "-2") == "a\nb\n"
    assert select_lines(text, "x") is None and select_lines(text, "3-2") is None
    assert select_lines(text, ",".join(["1-"] * 1000)) is None  # the file over and over: refused


def test_markers_and_python_objects() -> None:
    assert between_markers("a\n# start\nb\nc\n# end\nd", "# start", "# end") == "b\nc\n"
    assert between_markers("a\n# start\nb\n# end\nd", "# start", "# end", inclusive=True) == "# start\nb\n# end\n"
    method = python_object(MODULE, "Tides.height")
    assert method is not None and method.startswith("@staticmethod\ndef height(hour):") and "low" not in method
    assert python_object(MODULE, "spring") == 'def spring():\n    return "Marrowgate"\n'
    assert python_object(MODULE, "Nothing") is None and python_object("def (:", "x") is None


def test_mdbook_includes_anchors_lines_and_escapes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    page = ("```rust\n{{#rustdoc_include ../listings/main.rs:print}}\n```\n\n"
            "```rust\n{{#include ../listings/main.rs:1:1}}\n```\n\n"
            "{{#playground ../listings/main.rs:main}}\n\n"
            "Write \\{{#include file.rs}} to include a file.\n")
    text = expand_markdown(page, root / "src", Includes(root, 1 << 20))
    assert '```rust\nprintln!("Guess the Quorvane number!");\n```' in text
    assert "```rust\nuse std::io;\n```" in text
    assert '```rust\nfn main() {\n    println!("Guess the Quorvane number!");\n}\n```' in text  # anchor lines gone
    assert "Write {{#include file.rs}} to include a file." in text and "ANCHOR" not in text


def test_snippets_and_code_includes_read_from_the_site_folder(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "mkdocs.yml").write_text("site_name: Tides\n")
    (root / "docs").mkdir()
    (root / "docs" / "abbr.md").write_text("Shared text.\n--8<-- [start:warn]\nWarn about Quellport.\n"
                                           "--8<-- [end:warn]\n")
    page = ('--8<-- "docs/abbr.md"\n\n--8<-- "docs/abbr.md:warn"\n\n;--8<-- "docs/abbr.md"\n\n'
            "{* examples/tides.py ln[14:15] hl[15] *}\n\n--8<--\ndocs/abbr.md\n; commented.md\n--8<--\n")
    text = expand_markdown(page, root / "docs", Includes(root, 1 << 20))
    parts = text.split("\n\n")
    assert parts[0] == "Shared text.\nWarn about Quellport."  # section marks left out
    assert parts[1] == "Warn about Quellport."
    assert parts[2] == '--8<-- "docs/abbr.md"'  # escaped
    assert parts[3] == '```python\ndef spring():\n    return "Marrowgate"\n```'
    assert parts[4].startswith("Shared text.\nWarn about Quellport.")


def test_rst_literalinclude_and_include(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "docs").mkdir()
    (root / "docs" / "conf.py").write_text("project = 'Tides'\n")
    (root / "CHANGES.rst").write_text("Version 2\n---------\n\n- Quellport tables.\n")
    page = (".. literalinclude:: ../examples/tides.py\n   :pyobject: Tides.height\n   :caption: The height\n\n"
            "   .. literalinclude:: /../examples/tides.py\n      :lines: 2\n\n"
            ".. include:: ../CHANGES.rst\n\n"
            "An example::\n\n    .. literalinclude:: ../examples/tides.py\n\nText after.\n\n"
            ".. note::\n\n   .. literalinclude:: ../examples/tides.py\n      :lines: 2\n")
    text = expand_rst(page, root / "docs", Includes(root, 1 << 20))
    assert (".. code-block:: python\n   :caption: The height\n\n   @staticmethod\n   def height(hour):\n"
            "       return math.sin(hour)\n") in text
    assert "   .. code-block:: python\n\n      import math\n" in text  # "/" is the folder of conf.py
    assert "Version 2\n---------\n\n- Quellport tables." in text
    assert "    .. literalinclude:: ../examples/tides.py\n\nText after." in text  # an example, shown as written
    assert text.endswith(".. note::\n\n   .. code-block:: python\n\n      import math\n\n")  # a note's content is read


def test_myst_and_asciidoc_includes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "examples" / "App.java").write_text(
        "package tides;\n// tag::main[]\nclass App {}\n// end::main[]\n// tag::other[]\nint x;\n// end::other[]\n")
    myst = ("```{literalinclude} ../examples/tides.py\n:language: python\n:lines: 14-15\n```\n\n"
            "````markdown\n```{literalinclude} ../examples/tides.py\n```\n````\n")
    text = expand_markdown(myst, root / "src", Includes(root, 1 << 20))
    assert text.startswith('```python\ndef spring():\n    return "Marrowgate"\n```')
    assert "````markdown\n```{literalinclude} ../examples/tides.py\n```\n````" in text  # inside code: an example
    two = ("```{literalinclude} ../examples/tides.py\n:lines: 2\n```\n\nThen:\n\n"
           "```{literalinclude} ../examples/tides.py\n:pyobject: spring\n```\n")
    assert expand_markdown(two, root / "src", Includes(root, 1 << 20)) == (
        '```python\nimport math\n```\n\nThen:\n\n```python\ndef spring():\n    return "Marrowgate"\n```\n')
    adoc = ("[source,java]\n----\ninclude::../examples/App.java[tag=main]\n----\n\n"
            "include::../examples/App.java[lines=1;3..3]\n\ninclude::../examples/App.java[tags=**]\n\n"
            "\\include::x.adoc[]\n")
    text = expand_asciidoc(adoc, root / "src", Includes(root, 1 << 20))
    assert "----\nclass App {}\n----" in text
    assert "\n\npackage tides;\nclass App {}\n\npackage tides;\nclass App {}\nint x;\n\n" in text
    assert "\\include::x.adoc[]" in text


def test_asciidoc_include_targets_read_the_documents_attributes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "examples" / "App.java").write_text("// tag::main[]\nclass App {}\n// end::main[]\n")
    (root / "src" / "_attributes.adoc").write_text(":examples: {docdir}/../examples\n")
    adoc = ("include::_attributes.adoc[]\n:Listing: {examples}/App.java\n\n[source,java]\n----\n"
            "include::{listing}[tag=main]\n----\n\ninclude::{snippets}/curl.adoc[]\n\n:examples!:\n"
            "include::{examples}/App.java[tag=other]\n")
    text = expand_asciidoc(adoc, root / "src", Includes(root, 1 << 20))
    assert "----\nclass App {}\n----" in text  # through an attribute an included file defines, any case
    # one the build defines (Spring REST Docs' snippets) and one unset before its use stay as written
    assert "include::{snippets}/curl.adoc[]" in text and "include::{examples}/App.java[tag=other]" in text
    (root / "src" / "outside.adoc").write_text(f":up: {tmp_path.parent}\ninclude::{{up}}/secret.txt[]\n")
    assert "include::{up}/secret.txt[]" in expand_asciidoc(
        (root / "src" / "outside.adoc").read_text(), root / "src", Includes(root, 1 << 20))  # the root still holds


def test_quarto_includes_read_relative_and_from_the_project(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "book").mkdir()
    (root / "book" / "_quarto.yml").write_text("project:\n  type: book\n")
    (root / "book" / "chapters").mkdir()
    (root / "book" / "_common.qmd").write_text("The Vantorel tables apply.\n")
    (root / "book" / "chapters" / "_intro.qmd").write_text("Marrowgate opens at dawn.\n\n{{< include /_common.qmd >}}\n")
    page = ("# Tides\n\n{{< include _intro.qmd >}}\n\n```markdown\n{{< include _intro.qmd >}}\n```\n\n"
            "{{< include _missing.qmd >}}\n")
    text = expand_markdown(page, root / "book" / "chapters", Includes(root, 1 << 20))
    assert text.startswith("# Tides\n\nMarrowgate opens at dawn.\n\nThe Vantorel tables apply.\n\n```markdown\n"
                           "{{< include _intro.qmd >}}\n```")  # in code: an example, shown as written
    assert text.endswith("{{< include _missing.qmd >}}\n")


def test_only_files_under_the_root_are_read(tmp_path: Path) -> None:
    root = _project(tmp_path / "project")
    (tmp_path / "secret.txt").write_text("Zyxquart password\n")
    includes = Includes(root, 1 << 20)
    page = "```text\n{{#include ../../secret.txt}}\n```\n"
    assert expand_markdown(page, root / "src", includes) == page
    assert includes.refused == ["../../secret.txt"] and includes.read_files == []
    (root / "big.txt").write_text("x" * 100)
    assert Includes(root, 10).read(root, "big.txt") is None
    budget = Includes(root, 150)
    assert budget.read(root, "big.txt") is not None and budget.read(root, "big.txt") is None  # 200 bytes in all
    (root / "blob.bin").write_bytes(b"\x00\x01")
    assert Includes(root, 1 << 20).read(root, "blob.bin") is None
    (root / "src" / "loop.md").write_text("again {{#include loop.md}}")
    looped = expand_markdown("{{#include loop.md}}", root / "src", Includes(root, 1 << 20))
    assert looped.startswith("again again") and len(looped) < 200  # nesting stops


def test_project_root_is_the_repository_then_the_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "docs" / "en").mkdir(parents=True)
    (tmp_path / "repo" / "docs" / "en" / "mkdocs.yml").write_text("site_name: x\n")
    assert project_root(tmp_path / "repo" / "docs" / "en") == tmp_path / "repo"
    (tmp_path / "book" / "src").mkdir(parents=True)
    (tmp_path / "book" / "book.toml").write_text("[book]\n")
    assert project_root(tmp_path / "book" / "src") == tmp_path / "book"
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "a.md").write_text("x")
    assert project_root(tmp_path / "plain" / "a.md") == tmp_path / "plain"
    # a relative path (a script's "docs") is a resolved root, and reads as well as an absolute one
    (tmp_path / "plain" / "b.md").write_text("{{#include a.md}}")
    monkeypatch.chdir(tmp_path)
    assert project_root(Path("plain")) == tmp_path / "plain"
    assert expand_markdown("{{#include a.md}}", Path("plain"), Includes(Path("plain"), 1 << 20)) == "x"


@pytest.mark.parametrize("read_includes", [True, False])
def test_files_found_in_a_folder_read_their_includes_unless_turned_off(tmp_path: Path, read_includes: bool) -> None:
    root = _project(tmp_path)
    (root / "src" / "ch02.md").write_text("# Guessing\n\n```rust\n{{#include ../listings/main.rs:print}}\n```\n")
    [found], _ = discover([root / "src"])
    assert found.root == root
    [doc] = load_file(found, 1 << 20, read_includes)
    assert ('println!("Guess the Quorvane number!");' in doc.text) == read_includes
    # a file without a root (an upload) reads nothing
    [bare] = load_file(Found(found.path, "md"), 1 << 20)
    assert "Quorvane" not in bare.text


def test_a_bare_ref_to_another_file_shows_that_sections_title(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "reference.rst").write_text(
        ".. _fixtures:\n.. _`@tide.fixture`:\n\nFixtures in Quellport\n=====================\n\nText.\n")
    (tmp_path / "docs" / "howto.rst").write_text(
        "How to\n======\n\nRead :ref:`fixtures`, :ref:`@tide.fixture` and :ref:`missing-label`; "
        ":ref:`own`.\n\n.. _own:\n\nOwn section\n-----------\n\nMore.\n")
    found, _ = discover([tmp_path / "docs"])
    howto = next(f for f in found if f.path.name == "howto.rst")
    [doc] = load_file(howto, 1 << 20)
    assert ("Read Fixtures in Quellport, Fixtures in Quellport and missing-label; Own section." in
            " ".join(doc.text.split()))
    assert howto.project is not None and howto.project.section_labels()["@tide.fixture"] == "Fixtures in Quellport"
    [alone] = load_file(Found(howto.path, "rst"), 1 << 20)  # a file on its own (an upload) knows its own labels only
    assert "Read fixtures, @tide.fixture and missing-label; Own section." in " ".join(alone.text.split())


def test_mdx_partials_are_their_text_outside_code(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "src" / "_warning.mdx").write_text("---\nid: x\n---\n:::warning\nQuellport is experimental.\n:::\n")
    page = ("import Warning from './\\_warning.mdx';\nimport Tabs from '@theme/Tabs';\n\n# API\n\n<Warning />\n\n"
            "  <Warning/>\n\n```jsx\n<Warning />\n```\n\n<Tabs />\n")
    text = expand_markdown(page, root / "src", Includes(root, 1 << 20))
    assert "# API\n\n:::warning\nQuellport is experimental.\n:::\n\n  :::warning\n  Quellport is experimental." in text
    assert "```jsx\n<Warning />\n```" in text and "<Tabs />" in text and "id: x" not in text


def test_jekyll_include_relative(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "src" / "_shared.md").write_text("Quellport sails at dawn.\n")
    page = ("Before {% include_relative _shared.md %}\n\n{%- include_relative ../examples/tides.py -%}\n\n"
            "{% include_relative missing.md %}\n\n{% include note.html %}\n\n"
            "{% raw %}{% include_relative _shared.md %}{% endraw %}\n")
    text = expand_markdown(page, root / "src", Includes(root, 1 << 20))
    assert text.startswith("Before Quellport sails at dawn.\n\n\"\"\"Tide tables.\"\"\"\nimport math")
    assert "{% include_relative missing.md %}" in text and "{% include note.html %}" in text
    assert text.endswith("{% raw %}{% include_relative _shared.md %}{% endraw %}\n")  # an example


def test_a_bare_myst_ref_shows_the_sections_title_from_any_file(tmp_path: Path) -> None:
    from graphrag.ingest.sitegen import myst_section_labels

    assert myst_section_labels("(install)=\n\n## Installing *Quellport* {#inst}\n") == {"install": "Installing Quellport"}
    (tmp_path / ".git").mkdir()
    (tmp_path / "install.md").write_text("# Setup\n\n(tide-setup)=\n## Setting up the tide gauge\n\nText.\n")
    (tmp_path / "api.rst").write_text(".. _api-ref:\n\nThe Quellport API\n=================\n\nText.\n")
    (tmp_path / "guide.md").write_text("# Guide\n\nFirst {ref}`tide-setup`, then {ref}`api-ref`, then "
                                       "{ref}`the gauge <tide-setup>`, then {ref}`own`.\n\n(own)=\n## Own part\n")
    found, _ = discover([tmp_path])
    guide = next(f for f in found if f.path.name == "guide.md")
    def words(text: str) -> str:  # the rewrite pads a shorter role with spaces, in place
        return re.sub(r" ([,.])", r"\1", " ".join(text.split()))

    [doc] = load_file(guide, 1 << 20)
    assert "First Setting up the tide gauge, then The Quellport API, then the gauge, then Own part." in words(doc.text)
    [alone] = load_file(Found(guide.path, "md"), 1 << 20)
    assert "First tide-setup, then api-ref, then the gauge, then Own part." in words(alone.text)


def test_antora_resource_ids_resolve_in_the_module(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    modules = tmp_path / "docs" / "modules"
    for folder in ("ROOT/pages/guide", "ROOT/examples", "ROOT/partials", "cli/examples"):
        (modules / folder).mkdir(parents=True)
    (modules / "ROOT" / "examples" / "app.rb").write_text("# tag::main[]\nputs 'Quellport'\n# end::main[]\n")
    (modules / "ROOT" / "partials" / "attrs.adoc").write_text("The Vantorel gauge.\n\ninclude::example$app.rb[]\n")
    (modules / "cli" / "examples" / "run.sh").write_text("asciidoctor tides.adoc\n")
    page = ("[source,ruby]\n----\ninclude::example$app.rb[tag=main]\n----\n\ninclude::partial$attrs.adoc[]\n\n"
            "----\ninclude::cli:example$run.sh[]\n----\n\ninclude::other:cli:example$run.sh[]\n")
    text = expand_asciidoc(page, modules / "ROOT" / "pages" / "guide", Includes(tmp_path, 1 << 20))
    assert text.startswith("[source,ruby]\n----\nputs 'Quellport'\n----\n\nThe Vantorel gauge.\n\n# tag::main[]")
    assert "----\nasciidoctor tides.adoc\n----" in text
    assert text.endswith("include::other:cli:example$run.sh[]\n")  # another component's: not looked up


@pytest.mark.timeout(30)
@pytest.mark.parametrize("text", [
    "{{#include a " * 80_000,  # unbounded, each opening scanned to the end of the line: about 70 s
    "{% include_relative a " * 80_000, '--8<-- "' * 80_000, "{* a " * 80_000, "```{include} a\n" * 20_000,
    "import A from './a.md'\n" + "<A " * 80_000 + "/>\n",
])
def test_openings_that_never_close_read_in_linear_time(tmp_path: Path, text: str) -> None:
    # An upload made to be slow cannot reach this code (uploads read no includes), but a cloned project can.
    assert expand_markdown(text, tmp_path, Includes(tmp_path, 1 << 20)) == text


def test_files_with_windows_line_endings_read_their_includes(tmp_path: Path) -> None:
    root = _project(tmp_path)
    rst = ".. literalinclude:: ../examples/tides.py\r\n   :lines: 2\r\n\r\nText.\r\n"
    assert ".. code-block:: python\n\n   import math\n" in expand_rst(rst, root / "src", Includes(root, 1 << 20))
    md = ("{* ../examples/tides.py ln[2:2] *}\r\n\r\n--8<-- \"listings/main.rs\"\r\n\r\n"
          "```{literalinclude} ../examples/tides.py\r\n:lines: 2\r\n```\r\n")
    text = expand_markdown(md, root / "src", Includes(root, 1 << 20))
    assert text.count("import math") == 2 and "use std::io;" in text and "{*" not in text
    adoc = "include::../examples/tides.py[lines=2]\r\n"
    assert expand_asciidoc(adoc, root / "src", Includes(root, 1 << 20)).startswith("import math")


def test_a_sphinx_projects_link_roles_are_read_from_its_conf_py(tmp_path: Path) -> None:
    from graphrag.ingest.project import Project, read_link_roles

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "conf.py").write_text(
        'import os\nextensions = ["sphinx.ext.extlinks", "sphinx_issues"]\n'
        'extlinks = {"issue": ("https://example.org/issues/%s", "GH%s"), "wiki": ("https://w.example/%s", None)}\n'
        'html_theme = os.environ.get("THEME", "alabaster")\n')
    roles = read_link_roles(tmp_path / "docs" / "conf.py")
    assert roles == {"issue": "GH%s", "wiki": None, "pr": "#%s", "user": "@%s"}  # extlinks first
    project = Project(tmp_path)
    # a page of the docs, and a file they include from the root (its CHANGES.rst), read the docs' conf.py
    assert project.link_roles(tmp_path / "docs" / "api" / "index.rst") == roles
    assert project.link_roles(tmp_path / "CHANGES.rst") == roles
    (tmp_path / "docs" / "conf.py").write_text("def (:\n")
    assert read_link_roles(tmp_path / "docs" / "conf.py") == {}  # a conf.py that does not parse
