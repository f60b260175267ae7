"""What the readers share: the load errors, titles from file names, and the rendering of blocks
(headings, list items, code, quotes) as Markdown with text that reads as Markdown structure escaped."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from graphrag.errors import InvalidInput
from graphrag.ingest.textprep import bold_title, fence_for


class LoadError(InvalidInput):
    """A file that cannot be read: reported in ``failed`` with this message (HTTP 422)."""

    status_code = 422
    title = "Unprocessable content"


class NoText(LoadError):
    """A page with no text of its own: only a site generator's markup, such as an include of another
    file or a table of contents. Reported in ``skipped`` when a folder is ingested; an upload of one is
    refused like any file without text (HTTP 422)."""


class Unsupported(InvalidInput):
    """A file type we do not read: reported in ``skipped``."""


def file_title(path: Path) -> str:
    """A title from the file name: its stem, or the folder's name for a README or an index page."""
    if path.stem.lower() in ("readme", "index") and path.parent.name not in ("", ".", "/"):
        return path.parent.name
    return path.stem


# Nested lists are indented in the text up to this many levels; deeper ones stay at that indentation.
LIST_INDENT_LEVELS = 6


def small_count(value: Any, default: int, limit: int) -> int:
    """An attribute's small count (``start``, ``rowspan``, ``w:val``): ASCII digits only, at most ``limit``."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,7}", value.strip()):
        return min(int(value), limit)
    return default


def join_blocks(blocks: list[str]) -> str:
    """Blocks separated by blank lines, except consecutive list items (one list, one line each)."""
    out: list[str] = []
    for block in blocks:
        if out:
            out.append("\n" if _LIST_ITEM.match(block) and _LIST_ITEM.match(out[-1]) else "\n\n")
        out.append(block)
    return "".join(out)


_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]")


def render_block(kind: str, text: str) -> str:
    if kind[0] == "h" and kind[1:].isdigit():
        return "#" * int(kind[1]) + " " + text
    if kind.startswith("pre"):
        fence = fence_for(text.split("\n"))
        return f"{fence}{kind[4:]}\n{text}\n{fence}"
    if kind == "table":
        return text
    text = escape_markdown(text)
    if kind.startswith("li "):
        return kind[3:] + text
    if kind == "blockquote":
        return "> " + text
    if kind == "title":  # an admonition's title, in bold as the Markdown loaders show one
        return bold_title(text, markdown=False)
    return text


_MARKDOWN_START = re.compile(r"(?:#{1,6}(?:\s|$)|[-*+]\s|>|```|~~~|\|)")


_ORDERED_START = re.compile(r"(\d{1,9})([.)]\s)")


def escape_markdown(text: str) -> str:
    """Text whose lines would read as Markdown structure ("# not a heading", "- not a list",
    "1. not a list") escaped with a backslash, as Markdown escapes punctuation."""
    lines = []
    for line in text.split("\n"):
        if _MARKDOWN_START.match(line):
            line = "\\" + line
        elif (ordered := _ORDERED_START.match(line)) is not None:
            line = ordered.group(1) + "\\" + line[len(ordered.group(1)):]
        lines.append(line)
    return "\n".join(lines)


# Alt text that describes nothing: Office's own guess ("A picture containing text. Description
# automatically generated"), a default name ("Picture 3", "Grafik 1", "image"), a file name or an address
# (a CMS writes the image's URL as its alt: "[https://m.wsj.net/.../clip_167x94.jpg]").
_EMPTY_ALT = re.compile(r"(?i)automatically generated|^(?:picture|image|img|graphic|chart|diagram|figure|photo|"
                        r"screenshot|logo|icon|grafik|bild|imagen|imagem|immagine|afbeelding|obraz|圖片|图片)"
                        r"[\s_-]*\d*$|\.\w{3,4}$")


# Titles that authoring tools write for a document nobody titled.
_PLACEHOLDER_TITLES = frozenset({"untitled", "untitled document", "title", "document", "model", "slide 1",
                                 "powerpoint presentation", "microsoft word document", "word document", "no title",
                                 "none"})


_TITLE_TOOL_PREFIX = re.compile(r"^(?:Microsoft (?:Word|PowerPoint|Excel) - |Word - )", re.I)


_TITLE_FILE_NAME = re.compile(r"^[\w .,()+-]*\.(?:docx?|rtf|odt|pptx?|xlsx?|pdf|txt|html?|exe|indd|ps|eps|tex|qxd|pub)$",
                              re.I)


def metadata_title(raw: str) -> str:
    """A document's metadata title (a PDF's, a DOCX's core properties), or "" where it is a placeholder
    ("Untitled", "Word Document") or a file name ("Microsoft Word - report.doc"): the text or the file's
    name titles it then."""
    title = " ".join(_TITLE_TOOL_PREFIX.sub("", raw.replace("\x00", "")).split())
    if _TITLE_FILE_NAME.match(title) or title.lower() in _PLACEHOLDER_TITLES:
        return ""
    if len(title) < 3 and not any(ord(c) > 0x2E80 for c in title):  # "x", "1"; one CJK character is a word
        return ""
    if not any(c.isalpha() for c in title):  # "88300 162..177"
        return ""
    return title


# Typographic ligatures (U+FB00-FB06) that PDFs, and text copied from them, carry: "ﬁrst" is not "first" to
# keyword search, the tokenizer or the entity recogniser, and "ef-" + "ﬁcient" is no word to join.
_LIGATURES = {0xFB00: "ff", 0xFB01: "fi", 0xFB02: "fl", 0xFB03: "ffi", 0xFB04: "ffl", 0xFB05: "st", 0xFB06: "st"}


def unligature(text: str) -> str:
    """``text`` with its typographic ligatures spelled out ("ﬁrst" -> "first")."""
    return text.translate(_LIGATURES)


def image_text(alt: str, target: str = "") -> str:
    """An image of a source document (DOCX, reStructuredText, AsciiDoc) as its alt text in a Markdown
    image, as Markdown pages keep theirs (``![Data access layers](layers.svg)``); "" when the alt
    text describes nothing (:data:`_EMPTY_ALT`)."""
    alt = " ".join(alt.split())
    bare = alt.strip("[](){}<>\"'")
    if not alt or _EMPTY_ALT.search(bare) or not any(c.isalpha() for c in alt) or (" " not in bare and "://" in bare):
        return ""
    alt = alt.replace("[", "(").replace("]", ")")
    return f"![{alt}]({' '.join(target.split())})"
