"""MyST's ``{eval-rst}`` blocks read as the reStructuredText they hold.

A MyST page (Sphinx, Jupyter Book) writes what Markdown has no syntax for in reStructuredText, inside
an ``eval-rst`` directive: an ``.. autofunction::``, an ``.. autosummary::`` table, an ``.. include::``
of an ``.rst`` file, a figure, a note. Read as Markdown, its content stayed as written (".. note::",
":code:`x`", "`link <https://...>`_") and the reference it names was not there. Here each block is
rendered as the page shows it: the includes and autodoc directives filled in (for a file ingested
from a folder), docutils' HTML read by the HTML loader, and the Markdown of that in the block's place.
A block shown inside a code block (MyST's own docs show the syntax) is left as written.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from pathlib import Path

from graphrag.ingest.autodoc import expand_autodoc_rst
from graphrag.ingest.includes import Includes, directive_block, expand_rst
from graphrag.ingest.textprep import DirectiveFences

log = logging.getLogger(__name__)

_EVAL_RST = re.compile(r"^([ \t]*)(`{3,}|:{3,})\{eval-rst\}[ \t]*\r?$")
_NO_OPTION = re.compile(r"(?!)")  # eval-rst takes no options: every line after the opening is content


def render_eval_rst(text: str, path: Path, includes: Includes | None = None,
                    labels: Mapping[str, str] | None = None) -> str:
    """``text`` (MyST Markdown) with each ``{eval-rst}`` block outside code replaced by the Markdown its
    reStructuredText renders to; a block that does not render is left as written (with a log line)."""
    if "{eval-rst}" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    fences = DirectiveFences()  # a block inside a code block is an example
    i = 0
    while i < len(lines):
        match = _EVAL_RST.match(lines[i]) if fences.fence is None and "{eval-rst}" in lines[i] else None
        if match is None:
            fences.in_code(lines[i])
            out.append(lines[i])
            i += 1
            continue
        indent, marker = match.group(1), match.group(2)
        _, end = directive_block(lines, i, _NO_OPTION, indent, closing=marker)
        body = [line[len(indent):] if line.startswith(indent) else line.lstrip() for line in lines[i + 1:end - 1]]
        rendered = _render("\n".join(body), path, includes, labels)
        if rendered is None:
            out += lines[i:end]
        else:
            out += ["", *(indent + line if line.strip() else "" for line in rendered.split("\n")), ""]
        i = end
    return "\n".join(out)


def _render(rst: str, path: Path, includes: Includes | None, labels: Mapping[str, str] | None) -> str | None:
    from graphrag.ingest.html_reader import load_html
    from graphrag.ingest.rst import rst_to_html

    if includes is not None:
        rst = expand_autodoc_rst(expand_rst(rst, path.parent, includes), includes)
    try:
        page = rst_to_html(rst, labels)
        docs = load_html(path, page.encode())
    except Exception as exc:  # noqa: BLE001 - a block docutils cannot take stays as written
        log.info("%s: an eval-rst block not rendered (%s: %s)", path.name, type(exc).__name__, str(exc)[:200])
        return None
    return "\n\n".join(d.text.strip() for d in docs if d.text.strip())
