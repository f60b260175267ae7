"""Jupyter notebooks (``.ipynb``) as Markdown: Markdown cells as they are, code cells as fenced code
blocks in the kernel's language, in notebook order.

Outputs are left out: they are what the code printed or drew (tables of numbers, images as base64,
tracebacks), not what the author wrote, and they can outweigh the notebook's prose many times over.
Raw cells (nbconvert's LaTeX or reStructuredText) are left out too.
"""

from __future__ import annotations

import json
import re
from typing import Any

from graphrag.errors import InvalidInput


def _text(source: Any) -> str:
    """A cell's source: a string, or a list of lines (nbformat 4 writes lists)."""
    if isinstance(source, list):
        return "".join(s for s in source if isinstance(s, str))
    return source if isinstance(source, str) else ""


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _fenced(code: str, language: str) -> str:
    """``code`` in a backtick fence longer than any backtick run inside it."""
    longest = max((len(m) for m in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
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
    except RecursionError:
        raise InvalidInput("not a Jupyter notebook (JSON nested too deeply)") from None
    if not isinstance(notebook, dict):
        raise InvalidInput("not a Jupyter notebook (no cells)")
    cells = notebook.get("cells")
    if cells is None and isinstance(notebook.get("worksheets"), list):  # nbformat 3
        cells = [c for sheet in notebook["worksheets"] if isinstance(sheet, dict) for c in sheet.get("cells") or []]
    if not isinstance(cells, list):
        raise InvalidInput("not a Jupyter notebook (no cells)")
    meta = _mapping(notebook.get("metadata"))
    info, kernel = _mapping(meta.get("language_info")), _mapping(meta.get("kernelspec"))
    language = str(info.get("name") or kernel.get("language") or "").strip().lower()
    language = language if re.fullmatch(r"[\w+#.-]{1,30}", language) else ""
    parts: list[str] = []
    for cell in cells:
        if not isinstance(cell, dict):
            continue
        kind = cell.get("cell_type")
        if kind in ("markdown", "heading"):  # nbformat 3 kept headings as cells of their own
            text = _text(cell.get("source"))
            if kind == "heading":
                level = cell.get("level")
                depth = min(max(level, 1), 6) if isinstance(level, int) else 1
                text = "#" * depth + " " + " ".join(text.split())
            if text.strip():
                parts.append(text.strip("\n"))
        elif kind == "code":
            code = _text(cell.get("source", cell.get("input")))
            if code.strip():
                parts.append(_fenced(code, language))
    return "\n\n".join(parts) + "\n", ({"language": language} if language else {})
