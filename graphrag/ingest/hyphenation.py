"""Words hyphenated across a line break in a PDF's text, joined again.

Justified type breaks long words at the line's end ("manip-" / "ulation"); a PDF's text keeps the
break, so keyword search misses the word and the extractor reads two fragments. A line that ends in
a word fragment and a hyphen (or a soft hyphen), followed by a line that opens in lower case, gets
the whole word back at its end; the next line loses the fragment. Whether the hyphen stays is read
from the document itself: the word as written elsewhere without the hyphen ("manipulation") or with
it ("state-of-the-art", "well-known"). Where the document does not say, the hyphen goes (line-end
hyphens in justified text are mostly the typesetter's), except in a compound already hyphenated
("state-of-the-") and after prefixes that keep theirs ("self-", "well-"). Table rows are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_BROKEN = re.compile(r"(?<![^\W\d_])([^\W\d_]{2,})[-\u00ad]$")  # "manip-" at a line's end, a word's tail
_PART_OF_COMPOUND = re.compile(r"[^\W\d_]-[^\W\d_]+[-\u00ad]$")  # "of-the-"
_REST = re.compile(r"^[ \t]*([a-zß-ÿ][^\W\d_]*)([.,;:!?)\]]*)(?:[ \t]+|$)")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
_LINE_END_HYPHEN = re.compile(r"[-\u00ad][ \t]*\n")
_KEEPS_HYPHEN = frozenset({"self", "well", "half", "cross"})


def join_hyphenated(pages: Sequence[str]) -> list[str]:
    """``pages`` with words broken across lines by a hyphen joined again (see the module's notes)."""
    vocabulary = {w.casefold() for page in pages for w in _WORD.findall(page)}
    # a line may end in spaces after its hyphen ("defi- ", a scan's text layer)
    return [_join(page, vocabulary) if _LINE_END_HYPHEN.search(page) else page for page in pages]


def _join(page: str, vocabulary: set[str]) -> str:
    original = page.split("\n")
    lines = list(original)
    for i in range(len(lines) - 1):
        line = lines[i].rstrip()
        if line.lstrip().startswith("|") or lines[i + 1].lstrip().startswith("|"):
            continue
        broken = _BROKEN.search(line)
        rest = _REST.match(lines[i + 1]) if broken else None
        if broken is None or rest is None:
            continue
        head, tail = broken.group(1), rest.group(1)
        joined = head + tail
        hyphened = f"{head}-{tail}"
        keep = (hyphened.casefold() in vocabulary and joined.casefold() not in vocabulary) or (
            joined.casefold() not in vocabulary
            and (_PART_OF_COMPOUND.search(line) is not None or head.casefold() in _KEEPS_HYPHEN))
        word = hyphened if keep else joined
        lines[i] = line[:broken.start()] + word + rest.group(2)
        lines[i + 1] = lines[i + 1][rest.end():]
    # A line whose only word moved up goes; a blank line stays a paragraph break.
    return "\n".join(line for line, was in zip(lines, original, strict=True) if line.strip() or not was.strip())
