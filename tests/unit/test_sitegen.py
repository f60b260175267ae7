"""Site generators' Markdown (MyST, Hugo, Jekyll) read as the page the site renders (pure logic)."""

from __future__ import annotations

import pytest

from graphrag.ingest.html_comments import blank_html_comments
from graphrag.ingest.sitegen import dialects, site_markup_to_markdown
from graphrag.ingest.load_base import render_block
from graphrag.ingest.textprep import bold_title, fence_indented_code, prose_view

MYST = """# Install

(install-target)=
% a comment the page does not show

:::{note} Before you start
:class: tip
Quarrendale needs Python 3.11 or later.
:::

```{code-block} python
:caption: Importing it
:linenos:
import quarrendale
```

````{tip}
---
class: dropdown
---
Run the checks with `quarrendale check`:

```bash
quarrendale check --all
```
````

```{toctree}
:maxdepth: 2
intro
reference/api
```

```{versionadded} 2.1
The `check` command.
```

See {ref}`the usage guide <usage>`, {py:func}`quarrendale.run` and H{sub}`2`O. Not a role: `{ref}`x``.
"""


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.rstrip("\n").split("\n")]


def _rewritten(text: str) -> str:
    """``text`` rewritten; the rewrite keeps every line's place and length."""
    out = site_markup_to_markdown(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    return out


def _shown(text: str) -> list[str]:
    """The lines with text of ``text`` rewritten, stripped."""
    return [line.strip() for line in _rewritten(text).split("\n") if line.strip()]


def test_myst_directives_become_the_prose_code_or_nothing_a_page_shows() -> None:
    out = site_markup_to_markdown(MYST)
    assert len(out) == len(MYST) and out.count("\n") == MYST.count("\n")  # offsets still index the file
    lines = _lines(out)
    assert "Before you start" in lines and "Quarrendale needs Python 3.11 or later." in lines
    assert not any(line.startswith((":::", ":class:", "(install", "%", "---", "class:", "````")) for line in lines)
    assert "```python" in lines and "import quarrendale" in lines  # a code directive is a code fence
    assert lines[lines.index("```python") + 1:lines.index("import quarrendale")] == ["", ""]  # its options go
    assert "```bash" in lines and "quarrendale check --all" in lines  # code inside an admonition stays code
    assert "Run the checks with `quarrendale check`:" in lines  # the admonition's body is prose
    assert "intro" not in lines and "reference/api" not in lines  # a toctree shows no text
    assert "Added in version 2.1:" in lines and "The `check` command." in lines
    last = lines[-1]
    assert last.startswith("See the usage guide") and "`quarrendale.run`" in last and "{" not in last.split("Not")[0]
    assert last.endswith("Not a role: `{ref}`x``.")  # inline code is never touched


HUGO = """Containers run in a {{< glossary_tooltip text="Pod" term_id="pod" >}} on a node.

{{< note >}}
Init containers do not support `lifecycle`.
{{< /note >}}

{{< tabs name="tab_with_code" >}}
{{% tab name="Linux" %}}
Run the tool on Linux.
{{% /tab %}}
{{< /tabs >}}

{{< highlight yaml >}}
kind: Pod
{{< /highlight >}}

{{< code-toggle file=hugo >}}
[security]
enableInlineShortcodes = true
{{< /code-toggle >}}

Write `{{< note >}}` to add a note; see the [API](/docs/{{< param "version" >}}/api).

```go-html-template
{{< note >}} stays in a code block
```
"""


def test_hugo_shortcodes_show_their_text_and_code_blocks_become_fences() -> None:
    out = site_markup_to_markdown(HUGO)
    assert len(out) == len(HUGO) and out.count("\n") == HUGO.count("\n")
    lines = _lines(out)
    assert " ".join(lines[0].split()) == "Containers run in a Pod on a node."
    assert "Init containers do not support `lifecycle`." in lines and "{{< note >}}" not in lines
    assert "Linux" in lines and "tab_with_code" not in out  # a tab's name shows, a tab set's id does not
    assert lines[lines.index("kind: Pod") - 1] == "```yaml" and lines[lines.index("kind: Pod") + 1] == "```"
    assert lines[lines.index("[security]") - 1] == "```toml"
    assert "Write `{{< note >}}` to add a note; see the [API](/docs/" in out and "param" not in out
    assert "{{< note >}} stays in a code block" in lines


JEKYLL = """---
layout: page
---
{% include toc.html %}
Welcome to {{ site.title }}, the Zentrovia handbook.
{: .lead}

{% highlight ruby %}
puts "hello"
{% endhighlight %}

{% comment %}
Internal: do not publish.
{% endcomment %}
{% raw %}
Templates write {{ page.title }} literally.
{% endraw %}
Read the guide{: .note} and `{% include x %}` in code.
"""


def test_jekyll_liquid_and_kramdown_markup_is_what_the_page_shows() -> None:
    out = site_markup_to_markdown(JEKYLL)
    assert len(out) == len(JEKYLL) and out.count("\n") == JEKYLL.count("\n")
    lines = _lines(out)
    assert " ".join(lines[4].split()) == "Welcome to , the Zentrovia handbook."
    assert lines[5] == "" and "```ruby" in lines and 'puts "hello"' in lines
    assert "Internal: do not publish." not in out  # a Liquid comment is not shown
    assert "Templates write {{ page.title }} literally." in lines  # raw text is shown as written
    assert "{%" not in "".join(lines[:-1]) and lines[-1].startswith("Read the guide ")
    assert lines[-1].endswith("and `{% include x %}` in code.")


@pytest.mark.parametrize("text", [
    "# Plain\n\n% of users grew by 40% this year.\n+++ is a separator here.\n",
    "Templates in code: `{% if %}` and\n\n```jinja\n{% for x in y %}{{ x }}{% endfor %}\n```\n",
    "A set {a} and a dict {'k': 1}; LaTeX \\frac{1}{2}.\n",
])
def test_plain_markdown_is_left_as_it_is(text: str) -> None:
    assert not dialects(text).myst and not dialects(text).hugo and site_markup_to_markdown(text) == text


def test_hugo_shortcodes_over_several_lines_and_self_closing_ones_are_blanked() -> None:
    text = ("Before.\n{{< figure\n  src=\"a.png\"\n  alt=\"A\"\n>}} After the figure.\n"
            "{{< code-toggle config=services.x />}}\nStill prose, with {{< param \"v\" >}} gone.\n")
    out = site_markup_to_markdown(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    assert [" ".join(line.split()) for line in _lines(out)] == ["Before.", "", "", "", "After the figure.", "",
                                                                "Still prose, with gone."]


@pytest.mark.timeout(60)  # a hang guard: with a scan from every opening, the first case took 35 s
@pytest.mark.parametrize("text", ["{% a " * 20000, "{{< a " * 20000, "x {ref}`a` " * 20000, "{% x %} {{ y " * 20000,
                                  "`a ``b " * 20000, "{% x %} {% comment %} " * 20000, ":::note\n" * 20000,
                                  "::: {.a}\n" * 20000 + ":::\n" * 20000, "[a b]{.c" * 20000, "[" + "a" * 100000 + "]{.x}"])
def test_markup_that_never_closes_costs_linear_work(text: str) -> None:
    # Each opening is paired with the next closing in one pass: no pattern scans to the line's end from
    # every opening. The output keeps the length, and unclosed openings are text.
    out = site_markup_to_markdown(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")


def test_a_shortcode_too_long_to_be_markup_is_blanked_on_its_line_only() -> None:
    text = "A {{< x " + "y" * 2000 + " >}} B\nThe next line stays.\n"
    out = site_markup_to_markdown(text)
    assert " ".join(out.split("\n")[0].split()) == "A B" and out.split("\n")[1] == "The next line stays."


def test_gitbook_blocks_keep_their_content_and_tab_titles() -> None:
    text = ('{% hint style="warning" %}\nBack up the Zentrovia vault first.\n{% endhint %}\n\n{% tabs %}\n'
            '{% tab title="Python" %}\n```python\nvault.backup()\n```\n{% endtab %}\n{% endtabs %}\n')
    assert _shown(text) == ["Back up the Zentrovia vault first.", "Python", "```python", "vault.backup()", "```"]


def test_quarto_cells_are_code_and_alone_do_not_make_a_file_myst() -> None:
    text = "# Fit\n\n```{python}\nimport pandas as pd\n```\n\n% of runs converged.\n"
    assert not dialects(text).myst and site_markup_to_markdown(text) == text  # a cell fence is code as it is
    myst = "(fit)=\n```{python}\nprint(1)\n```\n"  # in a MyST file, a cell is code in its language
    assert site_markup_to_markdown(myst).split("\n")[1].rstrip() == "```python"


def test_a_docsy_tab_that_names_its_language_holds_code() -> None:
    text = ('{{< tabpane >}}\n{{< tab header="Python" lang="python" >}}\nclient = Zentrovia()\n{{< /tab >}}\n'
            '{{< tab header="Notes" >}}\nThe Zentrovia client retries twice.\n{{< /tab >}}\n{{< /tabpane >}}\n')
    assert _shown(text) == ["```python", "client = Zentrovia()", "```", "Notes", "The Zentrovia client retries twice."]


def test_fenced_divs_and_docusaurus_admonitions_keep_their_prose_and_titles() -> None:
    text = ('::: {.callout-tip title="Fit tips"}\nZorblax fits take a minute.\n:::\n\n:::: {.columns}\n'
            '::: {.column width="50%"}\nLeft column.\n:::\n::::\n\n:::note\nA note.\n:::\n\n:::tip[Your Title]\n'
            'Tip body.\n:::\n\n:::warning Deprecated\nOld API.\n:::\n\n::: warning\nPandoc class.\n:::\n\n'
            '```text\n:::\nfenced code keeps its colons\n:::\n```\n\nSee [the red word]{.red} and '
            '![a chart](chart.png){width=50%}, and `[code]{.x}`.\n')
    assert dialects(text).divs
    assert [" ".join(line.split()) for line in _shown(text)] == [
        "Fit tips", "Zorblax fits take a minute.", "Left column.", "A note.", "Your Title", "Tip body.", "Deprecated",
        "Old API.", "Pandoc class.", "```text", ":::", "fenced code keeps its colons", ":::", "```",
        "See the red word and ![a chart](chart.png) , and `[code]{.x}`."]


def test_an_mkdocstrings_line_and_its_options_are_blanked() -> None:
    text = ("# Agent\n\n::: pydantic_ai.Agent\n    options:\n      members: [run]\n\nThe agent runs tools.\n\n"
            "::: pydantic_ai.tools\n")
    assert _shown(text) == ["# Agent", "The agent runs tools."]


@pytest.mark.parametrize("text", [
    "::: Results :::\nA decorated line that closes nothing.\n",  # not an mkdocstrings line: trailing colons
    "Ratio 1:::2 in a sentence.\n",
])
def test_colons_that_open_no_div_are_text(text: str) -> None:
    assert site_markup_to_markdown(text) == text


def test_a_liquid_tag_written_over_several_lines_is_blanked() -> None:
    alone = "See the [post]({% link\n_posts/x.md %}) first.\n"  # the file's only tag
    assert [" ".join(line.split()) for line in _shown(alone)] == ["See the [post](", ") first."]
    text = ("Thanks for your [contribution]({% link\n  _docs/contributing.md %}) to the docs.\n"
            "{% include note.html %}\nA `{% raw` in code stays.\nA stray {% opens\nnothing\nhere\nor\nhere.\n"
            "{% if x %}\n")
    assert [" ".join(line.split()) for line in _shown(text)] == [
        "Thanks for your [contribution](", ") to the docs.", "A `{% raw` in code stays.", "A stray {% opens",
        "nothing", "here", "or", "here."]


def test_pymdownx_blocks_show_their_titles_and_lose_their_fences_and_options() -> None:
    # FastAPI's docs: "/// tip | Title" blocks, an outer block with more slashes, options as indented YAML.
    text = ("/// tip | Use the Zentrovia client\n\nIt retries twice.\n\n///\n\n//// tab | Python 3.10+\n\n"
            "/// note\n    type: warning\n\nInside a tab.\n///\n\n////\n\n```text\n/// in code\n```\n\n"
            "/// details | Never closed\nstays text\n")
    assert dialects(text).mkdocs
    assert [" ".join(line.split()) for line in _shown(text)] == [
        "**Use the Zentrovia client**", "It retries twice.", "**Python 3.10+**", "Inside a tab.", "```text",
        "/// in code", "```", "/// details | Never closed", "stays text"]


def test_admonitions_and_content_tabs_show_their_titles_and_their_bodies_leave_the_indentation() -> None:
    # Material for MkDocs' and pydantic-ai's docs: the body indented four spaces below "!!!", "???" or
    # "===" is the container's content, not indented code; nested containers, code and lists inside.
    text = ('Intro.\n\n!!! note "Runs on a worker thread"\n    The hook blocks.\n\n    ```python\n'
            '    def hook():\n        return 1\n    ```\n\n    ??? tip\n        Nested tip.\n\n'
            '        - a list item\n          continued\n\n    Back in the note.\n\nOutside.\n\n'
            '=== "pip"\n\n    pip install zentrovia\n\n===+ "uv"\n    uv add zentrovia\n\n'
            '- an item\n    !!! warning ""\n        Inside the item.\n\n!!!note\n\tTab indented.\n'
            '```text\n!!! note "in code"\n    stays\n```\n')
    assert dialects(text).mkdocs
    out = _rewritten(text)
    assert [line.rstrip() for line in out.split("\n") if line.strip()] == [
        "Intro.", "**Runs on a worker thread**", "The hook blocks.", "```python", "def hook():", "    return 1",
        "```", "Nested tip.", "- a list item", "  continued", "Back in the note.", "Outside.",
        "**pip**", "pip install zentrovia", "**uv**", "uv add zentrovia", "- an item", "    Inside the item.",
        "Tab indented.", "```text", '!!! note "in code"', "    stays", "```"]
    # Read as the page shows it: the prose is not fenced as indented code, and each title ends a sentence.
    rendered = fence_indented_code(out)
    assert "```\nThe hook blocks." not in rendered and "```\npip install" not in rendered
    view = prose_view(rendered)
    prose = " ".join(view.text.split())
    # The extractor knows the titles (a name found only in them is read as one found only in headings).
    assert {view.text[a:b].strip() for a, b in view.titles} == {"Runs on a worker thread", "pip", "uv"}
    assert not view.headings
    assert "Runs on a worker thread. The hook blocks." in prose and "pip. pip install zentrovia" in prose


def test_a_title_with_emphasis_is_one_bold_title_in_markdown_and_html() -> None:
    # FastAPI's alternatives page: "/// tip | Inspired **FastAPI** to"; bold inside bold read as plain
    # text before, so the line ran into the next as one sentence.
    text = ('/// tip | Inspired **FastAPI** to\n\nDeclare it once.\n\n///\n\n!!! note "Returns *one* row"\n'
            '    Rows.\n\n!!! note "Takes *args"\n    Args.\n')
    out = _rewritten(text)
    assert [line.rstrip() for line in out.split("\n") if line.strip()] == [
        "**Inspired FastAPI to**", "Declare it once.", "**Returns one row**", "Rows.", "Takes *args", "Args."]
    view = prose_view(fence_indented_code(out))
    assert {view.text[a:b].strip() for a, b in view.titles} == {"Inspired FastAPI to", "Returns one row"}
    # HTML titles are text: a "*" there is the title's own, and the line stays plain.
    assert render_block("title", "Inspired FastAPI to") == "**Inspired FastAPI to**"
    assert render_block("title", "Returns *one* row") == "Returns *one* row"
    assert bold_title("  ", markdown=True) == "" == render_block("title", "")


def test_includes_icons_and_attribute_lists_of_mkdocs_pages_are_blanked() -> None:
    text = ('# Request Body { #request-body }\n\n{* ../../docs_src/body/tutorial001.py hl[4,23] *}\n\n'
            '--8<-- "includes/abbreviations.md"\n\n--8<--\nfooter.md\nlinks.md\n--8<--\n\n'
            ':material-check:{ style="color: #4DB6AC" } __Clear__ request\n\n'
            '[Subscribe][demo]{ .md-button }\n\nAn annotated block.\n{ .annotate }\n\n'
            '## Props {#props}\n\nKeep `:material-check:` and `{ .x }` in code.\n')
    assert dialects(text).mkdocs
    out = _rewritten(text)
    shown = [" ".join(line.split()) for line in _shown(text)]
    assert shown == ["# Request Body", "__Clear__ request", "[Subscribe][demo]", "An annotated block.", "## Props",
                     "Keep `:material-check:` and `{ .x }` in code."]
    # An icon that opened the line leaves no indentation behind (four spaces would read as code).
    assert [line for line in out.split("\n") if "__Clear__" in line][0].startswith(" __Clear__")


@pytest.mark.parametrize("text", ["A ratio 3/4 and a path /usr/lib///x.\n", "Set {a} = {b}.\n", "# C# {notes}\n",
                                  "Time: 10:30:00, :smile: stays.\n"])
def test_text_that_only_resembles_mkdocs_markup_is_left_alone(text: str) -> None:
    assert site_markup_to_markdown(text) == text


def test_html_comments_are_blanked_outside_code_and_an_unclosed_one_is_text() -> None:
    text = ("Before <!-- md:version 5.0.0 --> after.\n<!--\nA paragraph commented out.\n-->\n"
            "```html\n<!-- kept in code -->\n```\nSee `<!-- x -->` inline.\n<!-- never closed\nstill text\n")
    out = blank_html_comments(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    assert [" ".join(line.split()) for line in out.split("\n") if line.strip()] == [
        "Before after.", "```html", "<!-- kept in code -->", "```", "See `<!-- x -->` inline.", "<!-- never closed",
        "still text"]
    assert blank_html_comments("No comment here.\n") == "No comment here.\n"


@pytest.mark.timeout(60)  # a hang guard
@pytest.mark.parametrize("text", ["<!-- " * 20000, "<!-- a --> " * 20000 + "\n" + "<!--\n" * 20000,
                                  "/// a\n" * 20000, ":material-x-" * 20000, "## a {#" * 20000 + "}",
                                  "[a]{ ." * 20000, "{* " * 20000,
                                  "".join(f"{'    ' * i}!!! a\n" for i in range(2000)), '=== "' * 20000])
def test_mkdocs_markup_and_comments_cost_linear_work(text: str) -> None:
    for out in (site_markup_to_markdown(text), blank_html_comments(text)):
        assert len(out) == len(text) and out.count("\n") == text.count("\n")


@pytest.mark.timeout(60)  # a hang guard
@pytest.mark.parametrize("text", ["**" + "a " * 50000 + "**", "**a**" * 20000, "** " * 30000,
                                  "\n".join(["**Title**"] * 20000)])
def test_bold_lines_cost_linear_work(text: str) -> None:
    view = prose_view(text)
    assert len(view.titles) == (20000 if text.startswith("**Title**\n") else 0)
