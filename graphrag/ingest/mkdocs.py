"""MkDocs pages (Python-Markdown and pymdownx extensions, Material for MkDocs) read as the page the
site renders, in place (:mod:`graphrag.ingest.inplace`); :func:`graphrag.ingest.sitegen.site_markup_to_markdown`
runs this pass first on a file that uses such markup (:func:`mkdocs_line`)."""

from __future__ import annotations

import re

from graphrag.ingest.inplace import blank, cut_outside_code, fill, shift_left
from graphrag.ingest.textprep import bold_title, lines_outside_fences, strip_heading_attrs

__all__ = ["mkdocs_line", "mkdocs_markup"]

# pymdownx's generic blocks: "/// note | Title" ... "///" (an outer block has more slashes: "//// tab |
# Python 3.10+"), options as indented YAML right below the opening.
_BLOCK_OPEN = re.compile(r"^([ \t]*)(/{3,})[ \t]*([\w-]{1,60})[ \t]*(?:\|[ \t]*(.{0,300}?))?[ \t]*\r?$")
_BLOCK_CLOSE = re.compile(r"^[ \t]*(/{3,})[ \t]*\r?$")
_BLOCK_OPTION = re.compile(r"^[ \t]+[\w-]{1,60}:")
# Containers whose body is indented four spaces below them: admonitions ('!!! note "Title"'), collapsible
# ones (pymdownx.details: '??? info', '???+ info "Title"') and content tabs (pymdownx.tabbed: '=== "pip"').
_CONTAINER = re.compile(r'^([ \t]*)(?:(?:!!!|\?\?\?\+?)[ \t]?[\w-]{1,60}(?:[ \t]+[\w-]{1,60}){0,5}(?:[ \t]+"(.{0,300})")?'
                        r'|===[+!]?[ \t]+"(.{0,300})")[ \t]*\r?$')
# Files pulled in when the site is built: pymdownx snippets ('--8<-- "file.md"', or file names between two
# "--8<--" lines) and FastAPI's code includes ("{* ../../docs_src/app.py hl[3] *}").
_SNIPPET = re.compile(r"""^[ \t]*;?--8<--(?:[ \t]+(?:"[^"\r]*"|'[^'\r]*'|\S+))?[ \t]*\r?$""")
_CODE_INCLUDE = re.compile(r"^[ \t]*\{\*[ \t].{0,500}\*\}[ \t]*\r?$")
# Material for MkDocs' icons (":material-check:", ":octicons-repo-16:"), with the attribute list that
# styles one: a picture, no text.
_ICON = re.compile(r":(?:material|octicons|fontawesome|simple)-[\w-]{1,80}:(?:\{[^{}\r]{0,200}\})?")
_ATX = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]")
# attr_list: a block's ("{ .annotate }" on a line of its own) or a link's ("[Subscribe](x){ .md-button }").
_ATTR_LIST_LINE = re.compile(r"^[ \t]*\{:?[ \t]*[.#][\w-][^{}\r]{0,200}\}[ \t]*\r?$")
_ATTR_LIST_AFTER = re.compile(r"(?<=[)\]])\{:?[ \t]*[.#][\w-][^{}\r]{0,200}\}")  # after "]": a reference link's
_REFERENCE_END = re.compile(r"\]\[[^\[\]\r]{0,100}\]$")  # "[Subscribe][demo]" (a bare "[x]{.y}" is Pandoc's span)


def mkdocs_line(line: str) -> bool:
    """Whether ``line`` holds MkDocs extension markup (see :func:`mkdocs_markup`)."""
    return bool(_container(line) or ("///" in line and (_BLOCK_OPEN.match(line) or _BLOCK_CLOSE.match(line)))
                or ("--8<--" in line and _SNIPPET.match(line)) or ("{*" in line and _CODE_INCLUDE.match(line))
                or ("-" in line and ":" in line and _ICON.search(line))
                or ("{" in line and (_ATTR_LIST_LINE.match(line) or bool(_link_attr_lists(line))))
                or (line.rstrip().endswith("}") and _ATX.match(line) and strip_heading_attrs(line) != line))


def _container(line: str) -> bool:
    """Whether ``line`` opens an admonition, a collapsible block or a content tab."""
    return ("!!!" in line or "???" in line or "===" in line) and _CONTAINER.match(line) is not None


def _link_attr_lists(line: str) -> list[re.Match[str]]:
    """The attribute lists after a link in ``line`` (``[Go](x){ .md-button }``, ``[Go][x]{ .md-button }``)."""
    return [m for m in _ATTR_LIST_AFTER.finditer(line)
            if line[m.start() - 1] == ")" or _REFERENCE_END.search(line, max(0, m.start() - 110), m.start())]


def mkdocs_markup(lines: list[str]) -> list[str]:
    """``lines`` (outside code) with MkDocs' extension markup rewritten: a pymdownx block's opening shows
    its title in bold (``/// tip | Careful`` -> "**Careful**"), its options and closing are blanked; an
    admonition, a collapsible block or a content tab shows its title in bold (``!!! note "Careful"``,
    ``=== "pip"``) and its body loses the four spaces of indentation that put it inside (so it reads as
    the page shows it, not as indented code; an untitled one shows nothing); snippet and
    code includes are blanked (the page shows another file); icons go; a heading's attribute list
    (``## Props {#props}``, also VitePress's, Pandoc's and kramdown's) goes, and so does a block's or a
    link's attribute list (``{ .annotate }``). Blocks pair by their count of
    slashes; an opening that nothing closes is text."""
    out = list(lines)
    open_at: dict[int, list[int]] = {}  # slashes -> openings not yet closed (line numbers)
    pairs: dict[int, int] = {}  # opening -> closing
    in_snippets = False
    containers: list[int] = []
    for number in lines_outside_fences(lines):
        line = lines[number]
        if _container(line):
            containers.append(number)
            continue
        if "--8<--" in line and _SNIPPET.match(line):
            in_snippets = line.strip().lstrip(";") == "--8<--" and not in_snippets
            out[number] = blank(line)
            continue
        if in_snippets:  # a file name of a snippet block
            out[number] = blank(line) if line.strip() else line
            continue
        if "{*" in line and _CODE_INCLUDE.match(line):
            out[number] = blank(line)
        elif "///" in line and (closing := _BLOCK_CLOSE.match(line)) is not None:
            if open_at.get(len(closing.group(1))):
                pairs[open_at[len(closing.group(1))].pop()] = number
        elif "///" in line and (opening := _BLOCK_OPEN.match(line)) is not None:
            open_at.setdefault(len(opening.group(2)), []).append(number)
        else:
            if "-" in line and ":" in line and _ICON.search(line):
                line = out[number] = cut_outside_code(line, list(_ICON.finditer(line)))
            if "{" in line and _ATTR_LIST_LINE.match(line):
                out[number] = blank(line)
            elif "{" in line and (attrs := _link_attr_lists(line)):
                line = out[number] = cut_outside_code(line, attrs)
            if line.rstrip().endswith("}") and _ATX.match(line) and (bare := strip_heading_attrs(line)) != line:
                out[number] = fill(line, bare)
    for opening_at, closing_at in pairs.items():
        opening = _BLOCK_OPEN.match(lines[opening_at])
        assert opening is not None
        out[opening_at] = fill(lines[opening_at], opening.group(1) + bold_title(opening.group(4) or "", markdown=True))
        out[closing_at] = blank(lines[closing_at])
        below = opening_at + 1
        while below < closing_at and _BLOCK_OPTION.match(lines[below]):
            out[below] = blank(lines[below])
            below += 1
    return _open_containers(out, containers) if containers else out


def _open_containers(lines: list[str], openings: list[int]) -> list[str]:
    """``lines`` with each container opening (``openings``: line numbers) shown as its title, and the
    lines of its body (blank, or indented four columns deeper than the opening, as Python-Markdown reads
    them) moved four columns left, nested containers once per level."""
    out = list(lines)
    ahead = iter(openings)
    next_opening = next(ahead, None)
    bodies: list[int] = []  # the columns the bodies of the containers open here start at
    for number, line in enumerate(lines):
        if line.strip():
            column = len(line[:len(line) - len(line.lstrip(" \t"))].expandtabs(4))
            while bodies and column < bodies[-1]:
                bodies.pop()
            out[number] = shifted = shift_left(line, 4 * len(bodies))
            if number == next_opening:
                m = _CONTAINER.match(shifted)
                assert m is not None
                # An untitled one shows its type ("Note"), which says nothing: left out, as for "/// note".
                title = (m.group(3) if m.group(3) is not None else m.group(2) or "").strip()
                out[number] = fill(line, m.group(1) + bold_title(title, markdown=True))
                bodies.append(column + 4)
                next_opening = next(ahead, None)
    return out
