"""Document headers that are metadata, not prose: the ``Key: value`` lines that open a PEP (an RFC 2822
header, docutils' PEP reader) or a Markdown file written for Python-Markdown's ``meta`` extension or
MultiMarkdown, Pandoc's ``% title`` block, and the field list that opens a reStructuredText file
(docutils' bibliographic fields, Sphinx's file-wide metadata).

Read as text, such a header is one run-on paragraph ("PEP: 622 Title: Structural Pattern Matching
Author: Brandt Bucher <brandt@python.org>, ...") at the top of the first chunk, and the document is
named after its file. Each function here returns the header's fields (keys in lower case) and the text
with the header blanked in place, so offsets into the text still hold.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from typing import Any

# Keys that mark a run of "Key: value" lines as a document header rather than prose that happens to
# open with a label ("Note: ..."): the PEP header's (PEP 12), Python-Markdown's and MultiMarkdown's usual ones.
HEADER_KEYS = frozenset({
    "title", "subtitle", "author", "authors", "date", "created", "updated", "modified", "summary",
    "description", "keywords", "tags", "category", "categories", "slug", "status", "type", "version",
    "lang", "language", "copyright", "email", "affiliation", "pep", "sponsor", "pep-delegate",
    "bdfl-delegate", "discussions-to", "python-version", "post-history", "resolution", "replaces",
    "superseded-by", "requires", "content-type", "topic", "base header level", "css", "license",
})

# Matched against a line without its trailing white space, so the value is taken greedily: a lazy value
# before optional trailing blanks tried every split of a long run of spaces (quadratic).
_FIELD = re.compile(r"([A-Za-z][A-Za-z0-9_-]*(?: [A-Za-z0-9_-]+){0,3}):(?:[ \t]+(.*))?")
_RST_FIELD = re.compile(r":([^:\s][^:]*):(?:[ \t]+(.*))?")
_MAX_LINE = 5_000  # a longer line is no header field
_CONTINUATION = re.compile(r"[ \t]+\S.*")


def header_fields(text: str) -> tuple[dict[str, str], str]:
    """The ``Key: value`` header opening ``text`` (RFC 2822: indented lines continue a value, unfolded with
    a space), ended by a blank line, and the text with it blanked; ``({}, text)`` when there is none. A
    header needs a key of :data:`HEADER_KEYS` and two fields, or a ``Title``, so that a file opening
    with "Note: ..." keeps it."""
    fields, end = _header(text)
    if not fields:
        return {}, text
    return {k: " ".join(v) for k, v in fields.items() if v}, _blank(text, end)


def markdown_meta(text: str) -> tuple[dict[str, str | list[str]], str]:
    """A Markdown file's metadata header: Python-Markdown's ``meta`` extension and MultiMarkdown
    (``Title: ...`` lines, a value on several lines a list of them), else Pandoc's title block (``% Title``,
    ``% Author; Other``, ``% Date``); and the text with it blanked."""
    fields, end = _header(text)
    if fields:
        return {k: v[0] if len(v) == 1 else v for k, v in fields.items() if v}, _blank(text, end)
    return _pandoc_title_block(text)


def rst_file_fields(text: str) -> tuple[dict[str, str], str]:
    """The field list opening a reStructuredText file (``:Author: Jane Doe``, ``:orphan:``, ``:tocdepth: 2``):
    docutils' bibliographic fields and Sphinx's file-wide metadata (less the fields that steer Sphinx's
    build, and those without a value); and the text with it blanked."""
    lines = text.split("\n")
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    fields: dict[str, str] = {}
    key = None
    while i < len(lines):
        line = lines[i]
        match = _RST_FIELD.fullmatch(line.rstrip()) if len(line) <= _MAX_LINE else None
        if match:
            key = match.group(1).strip().lower()
            fields[key] = (match.group(2) or "").strip()
        elif key is not None and _CONTINUATION.fullmatch(line):
            fields[key] = f"{fields[key]} {line.strip()}".strip()
        else:
            break
        i += 1
    if not fields:
        return {}, text
    meta = {k: v for k, v in fields.items() if v and k not in _SPHINX_BUILD_FIELDS}
    return meta, _blank(text, min(len(text), sum(len(line) + 1 for line in lines[:i])))


# Sphinx's file-wide fields that steer the build, not describe the document.
_SPHINX_BUILD_FIELDS = frozenset({"orphan", "nocomments", "nosearch", "tocdepth"})


def header_title(meta: MutableMapping[str, Any]) -> str:
    """The title a header gives (removed from ``meta``): a PEP's is "PEP 622 – Structural Pattern
    Matching", as peps.python.org shows it; "" when there is none."""
    title = meta.pop("title", "")
    if isinstance(title, list):
        title = " ".join(str(t) for t in title)
    if not isinstance(title, str) or not title.strip():
        return ""
    number = meta.get("pep")
    if isinstance(number, str) and number.strip().isdigit():
        return f"PEP {int(number)} – {title.strip()}"
    return title.strip()


def _header(text: str) -> tuple[dict[str, list[str]], int]:
    """The fields of a ``Key: value`` header opening ``text`` (each value's lines) and where it ends."""
    start = len(text) - len(text.lstrip("\ufeff"))
    fields: dict[str, list[str]] = {}
    key = None
    pos = start
    for line in text[start:].split("\n"):
        bare = line.rstrip("\r")
        match = _FIELD.fullmatch(bare.rstrip()) if len(bare) <= _MAX_LINE else None
        if match and match.group(1).lower() not in fields:
            key = match.group(1).lower()
            fields[key] = [match.group(2)] if match.group(2) else []
        elif key is not None and _CONTINUATION.fullmatch(bare):
            fields[key].append(bare.strip())
        elif not bare.strip() and fields:
            break
        else:
            return {}, 0
        pos += len(line) + 1
    else:
        pos = len(text)
    known = HEADER_KEYS.intersection(fields)
    if not known or (len(fields) < 2 and "title" not in fields):
        return {}, 0
    return fields, min(pos, len(text))


def _pandoc_title_block(text: str) -> tuple[dict[str, str | list[str]], str]:
    if not text.startswith("%"):
        return {}, text
    parts: list[list[str]] = []
    pos = 0
    for line in text.split("\n"):
        bare = line.rstrip("\r")
        if bare.startswith("%") and len(parts) < 3:
            parts.append([bare[1:].strip()])
        elif parts and _CONTINUATION.fullmatch(bare):
            parts[-1].append(bare.strip())
        else:
            break
        pos += len(line) + 1
    meta: dict[str, str | list[str]] = {}
    for key, lines in zip(("title", "author", "date"), parts, strict=False):
        if key == "author":  # "; " and each further line separate authors
            authors = [a.strip() for line in lines for a in line.split(";") if a.strip()]
            if authors:
                meta[key] = authors
        elif value := " ".join(v for v in lines if v):
            meta[key] = value
    if not meta:
        return {}, text
    return meta, _blank(text, min(pos, len(text)))


def _blank(text: str, end: int) -> str:
    """``text`` with its first ``end`` characters blanked (line breaks kept)."""
    return re.sub(r"[^\n]", " ", text[:end]) + text[end:]
