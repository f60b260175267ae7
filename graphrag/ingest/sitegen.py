"""Markdown as static-site generators extend it, read as the page the site renders.

Documentation sites keep their pages as Markdown with a generator's own markup, which a plain
Markdown reader takes for text or code:

- **MyST** (Sphinx, Jupyter Book): directives are fences whose info string is ``{name}`` (```` ```{note}
  ````, ``:::{tip}``); an admonition, a tab, a card or a dropdown holds Markdown, not code, and would be
  chunked as a code block, out of the graph. Roles (``{ref}`Install <install>```, ``{py:func}`run```),
  targets (``(install)=``), comments (``% ...``) and block breaks (``+++``) are markup too.
- **Hugo** shortcodes: ``{{< note >}}``, ``{{% tab name="Linux" %}}``, ``{{< glossary_tooltip
  text="Pod" term_id="pod" >}}``; ``highlight`` and ``code-toggle`` hold code.
- **Jekyll** (Liquid and kramdown): ``{% include note.html %}``, ``{{ site.baseurl }}``, ``{%
  highlight ruby %}`` ... ``{% endhighlight %}`` (code), ``{% comment %}`` (not shown), and attribute
  lists such as ``{: .note}``. **GitBook** writes its blocks as Liquid tags too: ``{% hint
  style="info" %}``, ``{% tab title="Python" %}`` (the title shows).
- **Fenced divs** of Pandoc and Quarto (``::: {.callout-tip title="Tip"}``, ``:::: {.columns}``) and
  Docusaurus admonitions (``:::note``, ``:::tip[Title]``, ``:::warning Careful``) hold prose between
  ``:::`` lines: the fences go, a title shows. An mkdocstrings line (``::: package.module`` with no
  closing fence, its indented options below it) is filled in from the code when the site is built,
  and is blanked.
- **MkDocs** (pymdownx blocks ``/// tip | Title``, snippets, icons, attribute lists, heading anchors):
  :mod:`graphrag.ingest.mkdocs`, run first on a file that uses them.

:func:`site_markup_to_markdown` rewrites them in place. Directives and shortcodes that hold prose lose
their markup and keep their content (a title or a tab name becomes a line of its own); code becomes a
fenced code block; what a page would not show (targets, comments, table-of-contents and include
directives, template expressions) is blanked. Every line keeps its length or gets shorter with
spaces filling the rest, and line breaks stay, so a chunk's offsets still index the file. Code blocks
and inline code are never touched, and each dialect's rules apply only to a file that uses it (a
``{{<`` shortcode, a ``{%`` tag, a MyST directive, role or target): a ``% of users`` line in a plain
Markdown file is text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from graphrag.ingest.inplace import blank, fill, in_code_span, inline_code_spans, replace_outside_code
from graphrag.ingest.mkdocs import mkdocs_line, mkdocs_markup
from graphrag.ingest.textprep import fence_closes, fence_open, heading_text

# Markup between delimiters is found by pairing each opening with the next closing in one pass
# (_pairs), and the patterns that scan a line on their own are bounded: a line of many openings that
# never close (an upload made to be slow) costs linear time, not quadratic.

# --- MyST -------------------------------------------------------------------------------------

_DIRECTIVE = re.compile(r"^([ \t]*)(`{3,}|:{3,})\{([\w:.-]+)\}[ \t]*(.*?)\r?$")
_DIRECTIVE_NAMES = re.compile(r"^[ \t]*(?:`{3,}|:{3,})\{([\w:.-]+)\}", re.M)
_OPTION = re.compile(r"^[ \t]*:[\w-]+:(?:[ \t].*)?\r?$")
_TARGET = re.compile(r"^[ \t]*\([^()\s]+\)=[ \t]*\r?$", re.M)  # "(install)=": a label for references
_ROLE = re.compile(r"(?<![`{$\\])\{([a-z][\w:.+-]{0,60})\}(`{1,3})([^`].{0,300}?)\2(?!`)")  # not after "`"
_EXPLICIT_TITLE = re.compile(r"^(.*?)\s*<([^<>]+)>$", re.S)
# Directives whose body is source code (the first argument, if any, is its language).
_CODE_DIRECTIVES = frozenset({"code", "code-block", "code-cell", "sourcecode", "math", "mermaid", "graphviz",
                              "jupyter-execute", "ipython", "doctest", "testcode", "testoutput"})
# Executable cells of Quarto and R Markdown (```{python}, ```{r setup, echo=FALSE}): code in the
# language they name.
_CELL_LANGUAGES = frozenset({"python", "r", "julia", "bash", "sh", "sql", "ojs", "js", "javascript", "dot",
                             "rust", "c", "cpp", "stan", "observable"})
# Directives a reader does not see as text: navigation, files pulled in, generated lists.
_HIDDEN_DIRECTIVES = frozenset({"toctree", "include", "literalinclude", "tableofcontents", "contents",
                                "bibliography", "autosummary", "automodule", "autoclass", "autofunction",
                                "image", "raw", "only", "glue", "glue:figure", "myst-config", "rubric-hidden"})
_VERSION_DIRECTIVES = {"versionadded": "Added in version", "versionchanged": "Changed in version",
                       "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}
# Roles whose content is shown as written text ("Install <install>" shows "Install"); others are code.
_TEXT_ROLES = frozenset({"ref", "doc", "numref", "term", "download", "any", "abbr", "sub", "sup", "eq",
                         "external", "kbd", "guilabel", "menuselection", "file", "command"})
_HIDDEN_ROLES = frozenset({"octicon", "fa", "icon", "index"})  # icons and index entries show no text

# --- Hugo -------------------------------------------------------------------------------------

_SHORTCODE = re.compile(r"\{\{([<%])[ \t]*(/?)[ \t]*([\w.-]+)(.*?)[ \t]*[>%]\}\}")  # {{< x >}}, {{% x %}}
_SHORTCODE_LINE = re.compile(r"^[ \t]*(\{\{([<%])[ \t]*(/?)[ \t]*([\w.-]{1,60})(.{0,1000}?)[>%]\}\})[ \t]*\r?$")
_SHORTCODE_END = re.compile(r"[>%]\}\}")
_CODE_SHORTCODES = frozenset({"highlight", "code-toggle", "code"})
_TEXT_ARG = re.compile(r"""\b(text|title|summary|header|name)=(?:"([^"]*)"|'([^']*)'|([^\s"'>%]+))""")

# --- Jekyll: Liquid and kramdown --------------------------------------------------------------

_LIQUID_TAG = re.compile(r"\{%-?[ \t]*(\w+)(.*?)-?%\}")
_LIQUID_OUTPUT = re.compile(r"\{\{(?![<%]).*\}\}")
_LIQUID_TAG_LINES = re.compile(r"(?<!\{)\{%-?\s{0,20}\w{1,60}[^%{}]{0,300}?%\}")  # a tag over several lines
_IAL_LINE = re.compile(r"^[ \t]*\{:[^{}\n]*\}[ \t]*\r?$")
_IAL = re.compile(r"\{:[^{}]*\}")  # kramdown's attribute lists: "{: .note}", "{:toc}"


# --- Fenced divs: Pandoc, Quarto, Docusaurus admonitions, mkdocstrings ------------------------

# An opening: attributes ("{.callout-note title="x"}"), or a class name with a title in brackets, in
# braces or after it ("note", "tip[Title]", "warning Careful"); closing colons may trail.
_DIV_OPEN = re.compile(r"^[ \t]*(:{3,})[ \t]*(?:\{([^{}\r]{0,500})\}|([A-Za-z_][\w.-]{0,100})"
                       r"(?:\[([^\]\r]{0,300})\]|\{([^{}\r]{0,300})\})?(?:[ \t]+([^:{}\r]{0,300}?))?)[ \t]*(:*)[ \t]*\r?$")
_DIV_CLOSE = re.compile(r"^[ \t]*(:{3,})[ \t]*\r?$")
_TITLE_ATTR = re.compile(r"""\btitle=(?:"([^"]*)"|'([^']*)')""")
_AUTODOC = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")  # "pydantic_ai.Agent"
# Pandoc's attributes after a span, a link or an image: "[red]{.red}" shows "red", "![a](a.png){width=50%}"
# the image; the attributes are markup.
_ATTRS = r"\{(?:[.#][^{}\r]{0,200}|[^{}\r=]{0,200}=[^{}\r]{0,200})\}"
_SPAN = re.compile(r"(?<![!\]\\])\[([^\[\]\r]{1,300})\]" + _ATTRS)
_LINK_ATTRS = re.compile(r"(?<=\))" + _ATTRS)


@dataclass(frozen=True)
class Dialects:
    """Which generators' markup a file uses."""

    myst: bool
    hugo: bool
    liquid: bool
    divs: bool = False
    mkdocs: bool = False  # pymdownx blocks and snippets, admonitions and tabs, code includes, icons, heading attributes

    def __bool__(self) -> bool:
        return self.myst or self.hugo or self.liquid or self.divs or self.mkdocs


def dialects(text: str) -> Dialects:
    """The dialects ``text`` shows (cheap checks first: most files use none)."""
    # A Quarto or R Markdown cell (```{python}) alone is not MyST: its "%" lines are text.
    directives = _DIRECTIVE_NAMES.findall(text) if "{" in text else []
    myst = (any(name.lower() not in _CELL_LANGUAGES for name in directives)
            or ("}`" in text and _ROLE.search(text) is not None) or _TARGET.search(text) is not None)
    hugo = "{{<" in text or "{{%" in text
    liquid = "{%" in text and (any(_liquid_tags(line) for line in text.split("\n") if "{%" in line)
                               or _LIQUID_TAG_LINES.search(text) is not None)
    divs = ":::" in text and any(_DIV_OPEN.match(line) for line in text.split("\n") if ":::" in line)
    mkdocs = ("///" in text or "--8<--" in text or "{*" in text or "}" in text or ":" in text or "!!!" in text
              or "???" in text or "===" in text) and any(
        mkdocs_line(line) for line in text.split("\n"))
    return Dialects(myst, hugo, liquid, divs, mkdocs)


def _div_openings(lines: list[str]) -> tuple[set[int], set[int]]:
    """The fenced-div openings among ``lines`` outside code (by index) that a ``:::`` line closes, and
    the unclosed ones written as mkdocstrings writes them (``::: package.module``, nothing after it)."""
    closed: set[int] = set()
    open_at: list[int] = []
    fence = None
    for i, line in enumerate(lines):
        if fence is not None:
            fence = None if fence_closes(line, fence) else fence
            continue
        if (opened := fence_open(line)) is not None and not line.lstrip().startswith(":"):
            fence = opened
        elif _DIV_CLOSE.match(line):
            if open_at:
                closed.add(open_at.pop())
        elif _DIV_OPEN.match(line) or _DIRECTIVE.match(line):
            open_at.append(i)
    autodoc = set()
    for i in open_at:
        m = _DIV_OPEN.match(lines[i])
        if m is not None and m.group(3) and _AUTODOC.fullmatch(m.group(3)) and not any(m.group(k) for k in (4, 5, 6, 7)):
            autodoc.add(i)
    return closed, autodoc


def _div_title(m: re.Match[str]) -> str:
    """What a fenced div's opening shows: its title (``title="x"``, ``[x]`` or the words after its class)."""
    for attrs in (m.group(2), m.group(5)):
        if attrs and (title := _TITLE_ATTR.search(attrs)) is not None:
            return next(g for g in title.groups() if g is not None)
    return (m.group(4) or m.group(6) or "").strip()


def _role(m: re.Match[str], labels: Mapping[str, str] | None = None) -> str:
    role, content = m.group(1).split(":")[-1], m.group(3).strip()
    if role in _HIDDEN_ROLES:
        return ""
    titled = _EXPLICIT_TITLE.match(content)
    if role in _TEXT_ROLES:  # "{external+sphinx:ref}" is a ref; "{external:class}" names code
        text = titled.group(1) if titled and titled.group(1) else content
        if role == "ref" and labels and text == content:  # a bare "{ref}`install`": the section's title
            text = labels.get(" ".join(content.split()).lower(), text)
        return text.lstrip("~!")
    if titled and titled.group(1):
        return f"`{titled.group(1)}`"  # "{py:func}`the runner <pkg.run>`"
    return f"`{content.lstrip('~!')}`"  # a code role: the name stays code


def _shortcode_text(name: str, args: str) -> str:
    """What an opening Hugo shortcode or a GitBook tag shows: a tab's ``title`` or ``name``, a tooltip's
    ``text``, a figure's ``title``, a dropdown's ``summary``; nothing for the rest (a tab set's ``name`` is
    an id, a Liquid ``include`` shows a file)."""
    if name.startswith("end") or name in ("include", "include_relative", "assign", "capture", "if", "for", "unless"):
        return ""
    for m in _TEXT_ARG.finditer(args):
        if m.group(1) != "name" or name in ("tab", "tab-item"):
            return next((g for g in m.groups()[1:] if g is not None), "")
    return ""


# The longest markup a pair of delimiters may hold: a longer stretch is text.
_MAX_MARKUP = 1000


def _pairs(line: str, opening: str, closing: str) -> list[tuple[int, int]]:
    """(start, end) of each ``opening ... closing`` in ``line``: a closing ends the last opening before
    it. One pass, so a line of openings that never close costs linear time (an upload made to be slow)."""
    spans: list[tuple[int, int]] = []
    i = line.find(opening)
    while i != -1:
        j = line.find(closing, i + len(opening))
        if j == -1:
            break
        while (k := line.find(opening, i + len(opening))) != -1 and k < j:
            i = k
        end = j + len(closing)
        if end - i <= _MAX_MARKUP:
            spans.append((i, end))
        i = k if k != -1 and k >= end else line.find(opening, end)
    return spans


def _markup(line: str, pattern: re.Pattern[str], opening: str, closing: str) -> list[re.Match[str]]:
    """The matches of ``pattern`` over the ``opening ... closing`` stretches of ``line`` (Liquid's ``{%``
    not where it is Hugo's ``{{%``, Liquid's ``{{`` not where it opens a shortcode)."""
    found = []
    for a, b in _pairs(line, opening, closing):
        if opening == "{%" and a and line[a - 1] == "{" or opening == "{{" and line[a + 2:a + 3] in ("<", "%"):
            continue
        if (m := pattern.fullmatch(line, a, b)) is not None:
            found.append(m)
    return found


def _shortcodes(line: str) -> list[re.Match[str]]:
    return sorted(_markup(line, _SHORTCODE, "{{<", ">}}") + _markup(line, _SHORTCODE, "{{%", "%}}"),
                  key=lambda m: m.start())


def _liquid_tags(line: str) -> list[re.Match[str]]:
    return _markup(line, _LIQUID_TAG, "{%", "%}")


@dataclass
class _Open:
    """A block open at this point of the file: a MyST directive (``prose`` or ``hidden``, closed by a
    fence of its ``marker``) or a Hugo/Liquid code block (``code``, closed by the tag ``marker``)."""

    kind: str
    marker: str
    options: bool = True  # MyST: option lines (":class: tip", or a "---" YAML block) may still follow
    yaml: bool = False  # MyST: inside that YAML block


_TARGET_OVER_HEADING = re.compile(r"^[ \t]*\(([^()\s]{1,200})\)=[ \t]*\n(?:[ \t]*\n)*[ \t]{0,3}#{1,6}[ \t]+([^\n]{1,300})$",
                                  re.M)


def myst_section_labels(text: str) -> dict[str, str]:
    """The titles of the sections MyST targets label (``(install)=`` over ``## Installing``), by label in
    lower case: what a bare ``{ref}`install``` shows."""
    titles: dict[str, str] = {}
    for m in _TARGET_OVER_HEADING.finditer(text):
        titles.setdefault(m.group(1).lower(), heading_text(m.group(2).rstrip("# \t")))
    return titles


def site_markup_to_markdown(text: str, labels: Mapping[str, str] | None = None) -> str:
    """``text`` (a Markdown file's body) with the MyST, Hugo and Jekyll markup it uses rewritten as the
    Markdown a site would render (see the module's notes); a file without any is returned as it is. A
    bare MyST ``{ref}`label``` shows the title of the section the label is over: in this text (a
    ``(label)=`` target over a heading) or else in ``labels`` (its project's, by label in lower case)."""
    found = dialects(text)
    if not found:
        return text
    if "{ref}`" in text:
        labels = {**(labels or {}), **myst_section_labels(text)}
    out: list[str] = []
    stack: list[_Open] = []
    fence = None  # an ordinary code fence open: its content is never touched
    liquid_skip = ""  # "endcomment" (blanked) or "endraw" (kept as written) inside such a Liquid block
    shortcode_open = False  # inside a Hugo shortcode whose arguments run over several lines
    liquid_open = False  # inside a Liquid tag written over several lines ("{% link\n  _posts/x.md %}")
    directive_options = False  # right after a MyST code directive's opening: ":caption: x" is markup
    lines = mkdocs_markup(text.split("\n")) if found.mkdocs else text.split("\n")
    divs, autodoc = _div_openings(lines) if found.divs else (set(), set())
    autodoc_indent = -1  # inside an mkdocstrings line's options: lines indented deeper than this
    for number, line in enumerate(lines):
        if fence is not None:
            if fence_closes(line, fence):
                fence = None
            elif directive_options and _OPTION.match(line):
                out.append(blank(line))
                continue
            directive_options = False
            out.append(line)
            continue
        if stack and stack[-1].kind == "code":
            out.append(_code_block_line(line, stack, found))
            continue
        if liquid_open:
            tag_end = line.find("%}")
            liquid_open = tag_end == -1
            out.append(blank(line) if tag_end == -1 else " " * (tag_end + 2) + line[tag_end + 2:])
            continue
        if liquid_skip:
            end = next((m for m in _liquid_tags(line) if m.group(1) == liquid_skip), None)
            kept = blank(line) if liquid_skip == "endcomment" else line
            if end is not None:
                kept = (blank(line[:end.end()]) + line[end.end():] if liquid_skip == "endcomment"
                        else replace_outside_code(line, _liquid_tags(line), lambda m: ""))
                liquid_skip = ""
            out.append(kept)
            continue
        if autodoc_indent >= 0:
            if line.strip() and len(line) - len(line.lstrip()) > autodoc_indent:
                out.append(blank(line))
                continue
            autodoc_indent = -1
        if number in divs or number in autodoc:
            opening = _DIV_OPEN.match(line)
            if opening is not None and not _DIRECTIVE.match(line):
                if number in autodoc:
                    autodoc_indent = len(line) - len(line.lstrip())
                    out.append(blank(line))
                    continue
                stack.append(_Open("div", opening.group(1), options=False))
                indent = line[:len(line) - len(line.lstrip())]
                out.append(fill(line, indent + _div_title(opening)))
                continue
        if stack and stack[-1].kind == "div" and _DIV_CLOSE.match(line):
            stack.pop()
            out.append(blank(line))
            continue
        rewritten = line
        if found.myst:
            done, rewritten = _myst_line(line, stack, labels)
            if done:
                out.append(rewritten)
                continue
        opened = fence_open(rewritten)
        if opened is not None:
            fence = opened
            directive_options = rewritten != line  # a code directive, now an ordinary fence
            out.append(rewritten)
            continue
        line = rewritten
        if found.hugo:
            if shortcode_open:  # the lines of a shortcode written over several ("{{< figure\n  src=...\n>}}")
                closes = _SHORTCODE_END.search(line)
                shortcode_open = closes is None
                out.append(blank(line) if closes is None else " " * closes.end() + line[closes.end():])
                continue
            whole = _SHORTCODE_LINE.match(line)
            language = _code_shortcode(whole) if whole is not None else None
            if language is not None and whole is not None:
                stack.append(_Open("code", whole.group(4)))
                out.append(fill(line, "```" + language))
                continue
            line = replace_outside_code(line, _shortcodes(line),
                                 lambda m: "" if m.group(2) else _shortcode_text(m.group(3), m.group(4)))
            starts = [i for i in (line.find("{{<"), line.find("{{%")) if i != -1]
            if starts and not in_code_span(inline_code_spans(line), min(starts)):
                closes = _SHORTCODE_END.search(line, min(starts))
                if closes is not None:  # longer than markup goes: blanked all the same
                    line = line[:min(starts)] + " " * (closes.end() - min(starts)) + line[closes.end():]
                else:  # one that does not close on its line
                    shortcode_open = True
                    out.append(line[:min(starts)] + " " * (len(line) - min(starts)))
                    continue
        if found.liquid:
            tags = _liquid_tags(line)
            tag = tags[0] if tags else None
            if tag is not None and tag.group(1) == "highlight" and not line.replace(tag.group(0), "").strip():
                words = tag.group(2).split()
                stack.append(_Open("code", "highlight"))
                out.append(fill(line, "```" + (words[0] if words else "")))
                continue
            code = inline_code_spans(line) if "`" in line else []
            tags = [m for m in tags if not in_code_span(code, m.start())]
            opening = next((m for m in tags if m.group(1) in ("comment", "raw")), None)
            closing = next((m for m in tags if opening and m.start() > opening.start()
                            and m.group(1) == "end" + opening.group(1)), None)
            if opening is not None and opening.group(1) == "comment" and closing is not None:
                # a comment within the line: not shown
                line = line[:opening.start()] + " " * (closing.end() - opening.start()) + line[closing.end():]
                tags = _liquid_tags(line)
                opening = None
            if opening is not None and closing is None:
                liquid_skip = "end" + opening.group(1)
                head = replace_outside_code(line[:opening.start()], _liquid_tags(line[:opening.start()]), lambda m: "")
                line = head + (" " * (len(line) - len(head)) if liquid_skip == "endcomment" else
                               " " * len(opening.group(0)) + line[opening.end():])
                out.append(line)
                continue
            line = replace_outside_code(line, _liquid_tags(line), lambda m: _shortcode_text(m.group(1), m.group(2)))
            line = replace_outside_code(line, _markup(line, _LIQUID_OUTPUT, "{{", "}}"), lambda m: "")
            if _IAL_LINE.match(line):
                line = blank(line)
            elif "{:" in line:
                line = replace_outside_code(line, _markup(line, _IAL, "{:", "}"), lambda m: "")
            start = line.rfind("{%")
            if start != -1 and "%}" not in line[start:] and not (start and line[start - 1] == "{") \
                    and not in_code_span(inline_code_spans(line), start) and any("%}" in later for later in lines[number + 1:number + 4]):
                liquid_open = True  # a tag that closes on one of the next lines; a stray "{%" is text
                line = line[:start] + " " * (len(line) - start)
        if found.divs and ("]{" in line or "){" in line):
            line = replace_outside_code(line, list(_SPAN.finditer(line)), lambda m: m.group(1))
            line = replace_outside_code(line, list(_LINK_ATTRS.finditer(line)), lambda m: "")
        out.append(line)
    return "\n".join(out)


_LANG_ARG = re.compile(r"""\blang=(?:"([^"]*)"|'([^']*)'|([\w+#.-]+))""")


def _code_shortcode(whole: re.Match[str]) -> str | None:
    """The language of the code block a shortcode line opens, or None where it opens none:
    ``highlight`` and ``code-toggle`` (TOML), and a Docsy tab that names its ``lang`` ("{{< tab
    header="Python" lang="python" >}}" holds a listing). A self-closing one holds nothing."""
    name, closing, args = whole.group(4), whole.group(3), whole.group(5)
    if closing or args.rstrip().endswith("/"):  # "{{< code-toggle config=x />}}"
        return None
    if name == "tab":
        lang = _LANG_ARG.search(args)
        return next((g for g in lang.groups() if g is not None), "") if lang else None
    if name not in _CODE_SHORTCODES:
        return None
    words = args.split()
    language = "toml" if name == "code-toggle" else words[0].strip("\"'") if words else ""
    return "" if "=" in language else language


def _code_block_line(line: str, stack: list[_Open], found: Dialects) -> str:
    """A line inside a Hugo or Liquid code block: code, or the tag that closes it (a fence now)."""
    marker = stack[-1].marker
    shortcode = _SHORTCODE_LINE.match(line) if found.hugo else None
    if shortcode is not None and shortcode.group(3) and shortcode.group(4) == marker:
        stack.pop()
        return fill(line, "```")
    tags = _liquid_tags(line) if found.liquid else []
    tag = tags[0] if tags else None
    if tag is not None and tag.group(1) == "end" + marker and not line.replace(tag.group(0), "").strip():
        stack.pop()
        return fill(line, "```")
    return line


def _myst_line(line: str, stack: list[_Open], labels: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """One line read for MyST: (True, what to write) where the line is MyST's markup (a directive's
    fence or options, a target, a comment), else (False, the line with its roles rewritten; a code
    directive's opening is now an ordinary fence, which the caller opens)."""
    top = stack[-1] if stack else None
    if top is not None:
        closing = re.match(r"^[ \t]*(`{3,}|:{3,})[ \t]*\r?$", line)
        if closing is not None and closing.group(1)[0] == top.marker[0] and len(closing.group(1)) >= len(top.marker):
            stack.pop()
            return True, blank(line)
        if top.kind == "hidden":
            return True, blank(line)
        if top.yaml:
            top.yaml = line.strip() != "---"
            top.options = top.yaml
            return True, blank(line)
        if top.options and (line.strip() == "---" or _OPTION.match(line)):
            top.yaml = line.strip() == "---"
            return True, blank(line)
        top.options = False
    directive = _DIRECTIVE.match(line)
    if directive is not None:
        indent, marker, name, argument = directive.groups()
        argument = argument.strip()
        name = name.lower()
        if marker[0] == "`" and (name in _CODE_DIRECTIVES or name.rstrip(",") in _CELL_LANGUAGES):
            words = argument.split()
            language = (name.rstrip(",") if name.rstrip(",") in _CELL_LANGUAGES else name
                        if name in ("math", "mermaid", "graphviz") else words[0] if words else "")
            return False, fill(line, indent + marker + language)
        kind = "hidden" if name in _HIDDEN_DIRECTIVES else "prose"
        stack.append(_Open(kind, marker))
        # An admonition's title, a tab's or a dropdown's name is a line of text of its own.
        shown = argument if kind == "prose" and name not in ("figure", "tab-set", "grid", "div", "table") else ""
        if name in _VERSION_DIRECTIVES and shown:
            phrase = f"{_VERSION_DIRECTIVES[name]} {shown}:"  # as Sphinx shows it, where the line has room
            shown = phrase if len(indent + phrase) <= len(line.rstrip("\r")) else f"{shown}:"
        return True, fill(line, indent + (_outside_code_roles(shown, labels).strip() if "}`" in shown else shown))
    if _TARGET.match(line) or re.match(r"^[ \t]*(?:%|\+\+\+)", line):
        return True, blank(line)
    return False, _outside_code_roles(line, labels) if "}`" in line else line


def _outside_code_roles(line: str, labels: Mapping[str, str] | None = None) -> str:
    """``line`` with its MyST roles rewritten; a role inside another code span stays (the role's own
    content is a code span that starts after the role's name)."""
    code = inline_code_spans(line)
    out: list[str] = []
    last = 0
    for m in _ROLE.finditer(line):
        if in_code_span(code, m.start()):
            continue
        new = _role(m, labels)
        out += [line[last:m.start()], new + " " * max(0, len(m.group(0)) - len(new))]
        last = m.end()
    return "".join(out) + line[last:] if out else line

