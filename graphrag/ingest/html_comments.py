"""HTML comments in Markdown, which the page does not show, blanked in place."""

from __future__ import annotations

from graphrag.ingest.inplace import blank, fill, in_code_span, inline_code_spans
from graphrag.ingest.textprep import fence_closes, fence_open

__all__ = ["blank_html_comments"]


def blank_html_comments(text: str) -> str:
    """Markdown ``text`` with its HTML comments (``<!-- prettier-ignore -->``, Material's ``<!-- md:version
    5.0.0 -->``, a paragraph commented out) blanked outside code: the page does not show them. Run after
    indented code is fenced, so an HTML example in an indented block keeps its comments."""
    if "<!--" not in text:
        return text
    lines = text.split("\n")
    closes_below = [False] * len(lines)  # some line after this one holds "-->"
    for number in range(len(lines) - 2, -1, -1):
        closes_below[number] = closes_below[number + 1] or "-->" in lines[number + 1]
    fence = None
    inside = False  # a comment opened on an earlier line is still open
    for number, line in enumerate(lines):
        if fence is not None:
            fence = None if fence_closes(line, fence) else fence
            continue
        if not inside and (opened := fence_open(line)) is not None:
            fence = opened
            continue
        if not inside and "<!--" not in line:
            continue
        code = inline_code_spans(line) if "`" in line and not inside else []
        out, last, at = [], 0, 0
        while True:
            if not inside:
                start = line.find("<!--", at)
                while start != -1 and in_code_span(code, start):
                    start = line.find("<!--", start + 4)
                if start == -1 or ("-->" not in line[start + 4:] and not closes_below[number]):
                    break  # a comment that never closes is text, not the rest of the file hidden
                out.append(line[last:start])
                last, at, inside = start, start + 4, True
            end = line.find("-->", at)
            if end == -1:
                break
            last = at = end + 3
            inside = False
        if inside:  # open to the end of the line
            out.append(blank(line[last:]))
            last = len(line)
        kept = "".join(out) + line[last:]
        lines[number] = fill(line, kept.rstrip("\r")) if kept.strip() else blank(line)
    return "\n".join(lines)
