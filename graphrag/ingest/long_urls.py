"""Addresses too long to read, cut to where they point.

Documentation links to playgrounds and REPLs whose address carries the whole example, compressed
(``https://play.vuejs.org/#eNqNksGOgjAQhl9l...``, 2-3 KB), and embeds images as ``data:`` URIs. A page
shows only the link's text, but the Markdown keeps the address, and a chunk counts its tokens: one
such link makes a chunk or two of base64, which is embedded, indexed for keyword search and read by
NER (names such as ``QL/45hskk9z8Bddbn``).

:func:`shorten_long_urls` cuts an address of :data:`LONG_URL` characters or more to its scheme, host
and path (a ``data:`` URI to its media type), outside code. The cut is filled with spaces and the
delimiter that closed the address (``)``, ``>``, a quote) moves to just after what is kept, so the
link still reads as a link, every line keeps its length and chunk offsets still index the file.
"""

from __future__ import annotations

import re

from graphrag.ingest.inplace import in_code_span, inline_code_spans
from graphrag.ingest.textprep import lines_outside_fences

__all__ = ["LONG_URL", "shorten_long_urls"]

LONG_URL = 200  # characters; real addresses with a meaningful path or query are shorter
_MAX_PATH = 100  # a longer path is itself the payload: only the host is kept

# Bounded: an address is a run without white space or the characters that end a link's target.
_URL = re.compile(r"\b(?:(?:https?|ftp)://[^\s()<>\"'`\]]{%d,}|data:[^\s()<>\"'`\]]{%d,})" % (LONG_URL - 8, LONG_URL - 5),
                  re.I)
_SPLIT = re.compile(r"^([a-z]+://[^/?#]*)(/[^?#]*)?", re.I)
_CLOSERS = ")>\"'"


def _kept(url: str) -> str:
    """What is left of a long address: ``scheme://host/path`` (the host alone when the path is long),
    or a ``data:`` URI's media type with its comma."""
    if url[:5].lower() == "data:":
        head = url.split(",", 1)[0]
        return (head if len(head) <= _MAX_PATH else head.split(";", 1)[0][:_MAX_PATH]) + ","
    m = _SPLIT.match(url)
    if m is None:  # no host: not an address to cut
        return url
    host, path = m.group(1), m.group(2) or "/"
    return host + (path if len(path) <= _MAX_PATH else "/")


def _shorten_line(line: str) -> str:
    if "://" not in line and "data:" not in line.lower():
        return line
    code = inline_code_spans(line) if "`" in line else []
    out, last = [], 0
    for m in _URL.finditer(line):
        start, end = m.span()
        if in_code_span(code, start):
            continue
        kept = _kept(m.group(0))
        if len(kept) >= end - start:
            continue
        closer = line[end] if end < len(line) and line[end] in _CLOSERS else ""
        span_end = end + len(closer)
        out.append(line[last:start])
        out.append((kept + closer).ljust(span_end - start))
        last = span_end
    if not out:
        return line
    out.append(line[last:])
    return "".join(out)


def shorten_long_urls(text: str) -> str:
    """Markdown ``text`` with each address of :data:`LONG_URL` characters or more, outside fenced and
    inline code, cut to where it points (see the module's docstring); the same length, line for line."""
    if "://" not in text and "data:" not in text.lower():
        return text
    lines = text.split("\n")
    for i in lines_outside_fences(lines):
        if len(lines[i]) >= LONG_URL:
            lines[i] = _shorten_line(lines[i])
    return "\n".join(lines)
