"""Jupyter notebooks (``.ipynb``) as Markdown: Markdown cells as they are, code cells as fenced code
blocks in the kernel's language (or a cell magic's: ``%%bash``), in notebook order. Each Markdown cell
is closed where it leaves a code fence or a comment open (Jupyter renders cells one by one), its
indented code blocks are fenced (:func:`graphrag.ingest.textprep.fence_indented_code`), images
pasted in as data URIs are cut to ``data:``, and the toc2 extension's "Table of Contents" cell is left out.

Outputs are left out: they are what the code printed or drew (tables of numbers, images as base64,
tracebacks), not what the author wrote, and they can outweigh the notebook's prose many times over.
Raw cells (nbconvert's LaTeX or reStructuredText) are left out too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from graphrag.errors import InvalidInput
from graphrag.ingest.textprep import BlockState, fence_for, fence_indented_code

# Images pasted into Markdown cells as data URIs: most of a document's characters, none of its words.
_DATA_URI = re.compile(r"data:[\w/+.-]*;base64,[A-Za-z0-9+/=]+(?:\s+[A-Za-z0-9+/=]{40,})*")  # wrapped lines too
# The "Table of Contents" cell the toc2 extension writes (its heading carries "tocSkip").
_TOC_CELL = re.compile(r'class="toc"|tocSkip')
# Cell magics that run the cell in another language (%%time and the like keep the kernel's).
_MAGICS: dict[str, str] = {
    "bash": "bash", "sh": "bash", "script bash": "bash", "script sh": "bash", "javascript": "javascript",
    "js": "javascript", "html": "html", "latex": "latex", "sql": "sql", "ruby": "ruby", "perl": "perl",
    "markdown": "markdown", "svg": "svg", "writefile": ""}
# Kernel names that say the language (Colab writes {"name": "python3"} alone).
_KERNELS = ((re.compile(r"python\d*|ipython\d*|conda-.*py.*"), "python"), (re.compile(r"ir|r"), "r"),
            (re.compile(r"julia.*"), "julia"), (re.compile(r"bash"), "bash"), (re.compile(r"javascript|deno"), "javascript"))


def _text(source: Any, lines_end: bool = True) -> str:
    """A cell's source: a string, or a list of lines (nbformat 3 and 4 end each with its line break,
    nbformat 2 does not: ``lines_end`` False)."""
    if isinstance(source, list):
        return ("" if lines_end else "\n").join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def _closed(markdown: str) -> str:
    """A Markdown cell with a code fence or an HTML comment it leaves open closed at its end: Jupyter
    renders each cell alone, but here the cells run on, and the next cell would be read as inside it."""
    state = BlockState()
    for line in markdown.split("\n"):
        state.step(line)
    if state.fence is not None:
        markdown += "\n" + "> " * state.fence.quotes + " " * state.fence.indent + state.fence.marker
    if state.in_comment:
        markdown += "\n-->"
    return markdown


def _language(meta: dict[str, Any]) -> str:
    """The notebook's language: its language_info, its kernel's language, or its kernel's name."""
    info, kernel = _mapping(meta.get("language_info")), _mapping(meta.get("kernelspec"))
    language = str(info.get("name") or kernel.get("language") or "").strip().lower()
    if not language:
        name = str(kernel.get("name") or "").strip().lower()
        language = next((lang for pattern, lang in _KERNELS if pattern.fullmatch(name)), "")
    return language if re.fullmatch(r"[\w+#.-]{1,30}", language) else ""


def _code_language(code: str, cell: dict[str, Any], default: str) -> str:
    """A code cell's language: a cell magic's (``%%bash``), the cell's own (nbformat 3), else the notebook's."""
    magic = re.match(r"%%(script \w+|\w+)", code.lstrip())
    if magic and magic.group(1) in _MAGICS:
        return _MAGICS[magic.group(1)]
    own = cell.get("language")
    if isinstance(own, str) and re.fullmatch(r"[\w+#.-]{1,30}", own.strip()):
        return own.strip().lower()
    return default


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _fenced(code: str, language: str) -> str:
    """``code`` in a backtick fence no line of it can close."""
    fence = fence_for(code.split("\n"))
    return f"{fence}{language}\n{code.rstrip()}\n{fence}"


def notebook_markdown(data: bytes) -> tuple[str, dict[str, Any]]:
    """The notebook's text as Markdown and its metadata (``language``); :class:`InvalidInput` when the
    bytes are not a notebook."""
    try:
        notebook = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"not valid UTF-8 (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"not a Jupyter notebook (invalid JSON at line {exc.lineno})") from None
    except ValueError as exc:  # a number past Python's digit limit
        raise InvalidInput(f"not a Jupyter notebook ({' '.join(str(exc).split())[:100]})") from None
    except RecursionError:
        raise InvalidInput("not a Jupyter notebook (JSON nested too deeply)") from None
    if not isinstance(notebook, dict):
        raise InvalidInput("not a Jupyter notebook (no cells)")
    cells = notebook.get("cells")
    if cells is None and isinstance(notebook.get("worksheets"), list):  # nbformat 3
        sheets = [sheet.get("cells") for sheet in notebook["worksheets"] if isinstance(sheet, dict)]
        cells = [c for sheet_cells in sheets if isinstance(sheet_cells, list) for c in sheet_cells]
    if not isinstance(cells, list):
        raise InvalidInput("not a Jupyter notebook (no cells)")
    language = _language(_mapping(notebook.get("metadata")))
    version = notebook.get("nbformat")
    lines_end = not (isinstance(version, int) and version < 3)
    parts: list[str] = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        kind = cell.get("cell_type")
        if kind in ("markdown", "heading"):  # nbformat 3 kept headings as cells of their own
            text = _text(cell.get("source"), lines_end)
            if _TOC_CELL.search(text):
                continue
            text = _closed(_DATA_URI.sub("data:", text))
            if kind == "heading":
                level = cell.get("level")
                depth = min(max(level, 1), 6) if isinstance(level, int) else 1
                text = "#" * depth + " " + " ".join(text.split())
            else:
                text = fence_indented_code(text)
            if text.strip():
                parts.append(text.strip("\n"))
        elif kind == "code":
            code = _text(cell.get("source", cell.get("input")), lines_end)
            if code.strip():
                parts.append(_fenced(code, _code_language(code, cell, language)))
    return "\n\n".join(parts) + "\n", ({"language": language} if language else {})
