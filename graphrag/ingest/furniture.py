"""Running headers, footers and page numbers of paged documents, found by repetition across pages.

A manual's PDF repeats its title or the chapter's at the top of every page and a page number at
the foot; an RFC's text ends each page with "Hinden & Deering  Standards Track  [Page 3]" and opens
the next with "RFC 2373  IPv6 Addressing Architecture  July 1998". Left in, these lines cut
sentences in two, fill every page's chunk with the same words and make the authors' names a hub of
the graph. A line is furniture when it sits among the first or last few lines of its page and
recurs there on three or more pages, as written or with only a number that grows with the page:

- on a quarter of the pages or more (a running title, alternating left and right headers), or
- on pages close together (a chapter's running header, pages at most two apart: left and right).

Table rows and long lines are never furniture. Plain text is cut into pages at form feeds, or, where
it has none, after each line that names its page ("[Page 3]", "Page 3 of 40") and recurs with a
growing number.

A table of contents' dot leaders and page numbers ("Concept Index . . . . . . 32") go too: the
titles stay, the rest is noise to keyword search, embeddings and the extractor.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ZONE = 3  # non-blank lines at each edge of a page where furniture sits
MIN_PAGES = 3
_MAX_LINE = 160
_NUMBER = re.compile(r"\d+")
_ROMAN = re.compile(r"[ivxlc]{1,6}")  # front matter's page numbers ("iv")
_LETTER_OR_DIGIT = re.compile(r"[^\W_]")
_PAGE_FOOTER = re.compile(r"\bpage\s+\d+(?:\s+of\s+\d+)?\W{0,3}\s*$", re.I)  # ends its line: "[Page 3]"
# A dot leader and the page number it leads to, at a line's end: ". . . . 32", ".......2".
_LEADER = re.compile(r"[ \t]*(?:\.[ \t]?){4,}[ \t]*(?:\d+|[ivxlc]{1,6})[ \t]*$")
_LEADER_LINE = 300  # longer lines are not a table of contents' (and the pattern stays cheap)
_PAGE_N = re.compile(r"\bpage\s+(\d+)", re.I)


def _form(line: str) -> str:
    """A line as compared across pages: spaces collapsed, case folded, each number a "#"."""
    folded = " ".join(line.split()).casefold()
    return "#" if _ROMAN.fullmatch(folded) else _NUMBER.sub("#", folded)


def _numbers(line: str) -> tuple[int, ...]:
    return tuple(int(n) for n in _NUMBER.findall(line[:_MAX_LINE]))


def _counts_pages(at: list[int], values: list[tuple[int, ...]]) -> bool:
    """Whether some number position of ``values`` (one per page of ``at``) is the page's number: its
    page index less a fixed offset on every page."""
    width = min(len(v) for v in values)
    return any(len({p - v[k] for p, v in zip(at, values, strict=True)}) == 1 for k in range(width))


def _close_run(pages: list[int]) -> bool:
    """Three or more of ``pages`` in a row, each at most two pages after the one before."""
    run = 1
    for a, b in zip(pages, pages[1:], strict=False):
        run = run + 1 if b - a <= 2 else 1
        if run >= MIN_PAGES:
            return True
    return False


def _recurs(on: list[int], pages: int) -> bool:
    """Whether lines on the (sorted, distinct) pages ``on`` recur enough to be furniture."""
    return len(on) >= MIN_PAGES and (4 * len(on) >= pages or _close_run(on))


def _page_number(line: str, remainder_recurs: bool) -> int | None:
    """The page number ``line`` prints, if it prints one where page numbers go: alone ("12", "- 12 -"),
    after "page" ("Page 12 of 40"), at the end of a running header ("Chapter 2: Parsing 12"), or at
    its start where the rest of the line recurs ("12 GNU Libtasn1" on left-hand pages)."""
    if (m := _PAGE_N.search(line)) is not None:
        return int(m.group(1))
    if not _LETTER_OR_DIGIT.search(_NUMBER.sub("", line)):  # "12", "- 12 -", "[12]"
        numbers = _NUMBER.findall(line)
        return int(numbers[0]) if len(numbers) == 1 else None
    words = line.split()
    if words[-1].isdigit():
        return int(words[-1])
    if remainder_recurs and words[0].isdigit():
        return int(words[0])
    return None


def furniture(pages: Sequence[str]) -> list[set[int]]:
    """Per page, the indexes of its lines (``page.split("\\n")``) that are running headers, footers or
    page numbers. Documents of fewer than three pages have none."""
    found: list[set[int]] = [set() for _ in pages]
    if len(pages) < MIN_PAGES:
        return found
    seen: dict[str, list[tuple[int, int, str]]] = {}  # form -> (page, line index, line)
    split = [text.split("\n") for text in pages]
    filled = [[i for i, line in enumerate(lines) if line.strip()] for lines in split]
    for p, lines in enumerate(split):
        for i in dict.fromkeys(filled[p][:ZONE] + filled[p][-ZONE:]):
            line = lines[i].strip()
            if len(line) > _MAX_LINE or line.startswith("|") or not _LETTER_OR_DIGIT.search(line):
                continue
            seen.setdefault(_form(line), []).append((p, i, " ".join(line.split())))
    # Page numbers: a line at a page's edge that prints its page's number in a numbering that holds
    # over several pages (the printed number is the page's index less a fixed offset).
    after_number: dict[str, set[int]] = {}  # "gnu libtasn#" of "# gnu libtasn#": the pages it is on
    for form, hits in seen.items():
        if form.startswith("# "):
            after_number.setdefault(form[2:], set()).update(p for p, _, _ in hits)
    numbered: dict[int, list[tuple[int, int]]] = {}  # offset -> (page, line index)
    for form, hits in seen.items():
        recurs = form.startswith("# ") and len(after_number[form[2:]]) >= 2
        for p, i, line in hits:
            if (n := _page_number(line, recurs)) is not None:
                numbered.setdefault(p - n, []).append((p, i))
    for at in numbered.values():
        if _recurs(sorted({p for p, _ in at}), len(pages)):
            for p, i in at:
                found[p].add(i)
    # Running headers and footers: the same line, or one whose numbers count pages, on many pages.
    groups = list(seen.values())
    for hits in seen.values():  # each line as written too: "Chapter 1: Pumps" and "Chapter 2: Pumps" apart
        as_written: dict[str, list[tuple[int, int, str]]] = {}
        for hit in hits:
            as_written.setdefault(hit[2], []).append(hit)
        if len(as_written) > 1:
            groups += as_written.values()
    repeated: list[set[int]] = [set() for _ in pages]
    for hits in groups:
        on = sorted({p for p, _, _ in hits})
        if not _recurs(on, len(pages)):
            continue
        first: dict[int, str] = {}  # one occurrence per page, the first, for the number check
        for p, _, line in hits:
            first.setdefault(p, line)
        written = [first[p] for p in on]
        if len(set(written)) > 1 and not _counts_pages(on, [_numbers(line) for line in written]):
            continue  # the numbers do not count pages: content that happens to repeat its words
        if len(set(written)) == 1 and _form(written[0]) == "#":
            continue  # the same bare number on every page is not a page number
        for p, i, _ in hits:
            repeated[p].add(i)
    for p, lines in enumerate(split):
        keep = set()
        # A whole edge of repeated lines is content that pages repeat (a table's head carried over, a
        # page printed again), not a header: furniture is a line or two.
        for edge in (filled[p][:ZONE], filled[p][-ZONE:]):
            if edge and all(i in repeated[p] for i in edge):
                keep.update(edge)
        gone = found[p] | (repeated[p] - keep)
        if all(i in gone or not _LETTER_OR_DIGIT.search(lines[i]) for i in filled[p]):
            gone = set()  # nothing would be left of the page: it is what it says
        found[p] = gone
    return found


def strip_furniture(pages: Sequence[str]) -> list[str]:
    """``pages`` without their furniture lines (see :func:`furniture`)."""
    drop = furniture(pages)
    return [page if not gone else "\n".join(line for i, line in enumerate(page.split("\n")) if i not in gone).strip()
            for page, gone in zip(pages, drop, strict=True)]


def text_pages(text: str) -> list[tuple[int, int]]:
    """Where the pages of a plain text lie, as ``(start, end)`` offsets: cut at form feeds, or after
    each page footer (a line naming its page, recurring with a growing number); ``[]`` for a text of
    fewer than three pages."""
    if text.count("\f") >= MIN_PAGES - 1:
        cuts = [m.start() for m in re.finditer("\f", text)]
    else:
        markers: dict[str, list[tuple[int, str]]] = {}
        offset = 0
        for line in text.split("\n"):
            end = offset + len(line)
            if len(line) <= _MAX_LINE and _PAGE_FOOTER.search(line):
                markers.setdefault(_form(line.strip()), []).append((end, line))
            offset = end + 1
        best = max((m for m in markers.values()
                    if len(m) >= MIN_PAGES
                    and _counts_pages(list(range(len(m))), [(int(_PAGE_N.findall(x)[-1]),) for _, x in m])),
                   key=len, default=[])
        cuts = [end for end, _ in best]
    spans, start = [], 0
    for cut in cuts:
        spans.append((start, cut))
        start = cut + 1 if cut < len(text) and text[cut] in "\f\n" else cut
    if text[start:].strip():
        spans.append((start, len(text)))
    return spans if len(spans) >= MIN_PAGES else []


def blank_furniture(text: str, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` with the furniture lines of its pages (``spans``) blanked with spaces: every line keeps
    its length, so offsets still index the file."""
    pages = [text[a:b] for a, b in spans]
    out = list(text)
    for (start, _), page, gone in zip(spans, pages, furniture(pages), strict=True):
        offset = start
        for i, line in enumerate(page.split("\n")):
            if i in gone:
                out[offset:offset + len(line)] = " " * len(line)
            offset += len(line) + 1
    return "".join(out)


def strip_leaders(text: str, *, blank: bool = False) -> str:
    """``text`` without the dot leaders and page numbers of its table-of-contents lines; with
    ``blank``, replaced by spaces so every line keeps its length. A table of contents is three or more
    such lines close together whose page numbers never fall: a price list's "Pump .... 1200" stays."""
    if "...." not in text and ". . ." not in text:
        return text
    found: list[tuple[int, int, int, int]] = []  # line number, start, end (in text), page number
    offset = 0
    for number, line in enumerate(text.split("\n")):
        if len(line) <= _LEADER_LINE and (m := _LEADER.search(line)) is not None:
            page = m.group(0).rstrip().rsplit(None, 1)[-1].lstrip(".")
            found.append((number, offset + m.start(), offset + m.end(), int(page) if page.isdigit() else 0))
        offset += len(line) + 1
    blocks: list[list[tuple[int, int, int, int]]] = []
    for hit in found:
        if blocks and hit[0] - blocks[-1][-1][0] <= 4:
            blocks[-1].append(hit)
        else:
            blocks.append([hit])
    out: list[str] = []
    last = 0
    for block in blocks:
        pages = [hit[3] for hit in block]
        if len(block) < MIN_PAGES or any(a > b for a, b in zip(pages, pages[1:], strict=False)):
            continue
        for _, start, end, _ in block:
            out += [text[last:start], " " * (end - start) if blank else ""]
            last = end
    return "".join(out) + text[last:] if out else text
