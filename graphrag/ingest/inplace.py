"""Edits of a file's text in place: each line keeps its length (what is taken out becomes spaces) and
line breaks stay, so a chunk's offsets still index the file. Inline code spans are found in one pass,
and markup inside them is left alone."""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable

__all__ = ["blank", "cut_outside_code", "fill", "in_code_span", "inline_code_spans", "replace_outside_code",
           "shift_left"]


def fill(line: str, new: str) -> str:
    """``new`` in place of ``line``: padded with spaces to its length, its line ending kept."""
    end = "\r" if line.endswith("\r") else ""
    body = line[:len(line) - len(end)]
    return new + " " * max(0, len(body) - len(new)) + end


def shift_left(line: str, columns: int) -> str:
    """``line`` with up to ``columns`` columns of its indentation taken off (a tab counts as up to the
    next multiple of four) and as many spaces put at its end, so it keeps its length."""
    taken = width = 0
    while width < columns and taken < len(line) and line[taken] in " \t":
        step = 4 - width % 4 if line[taken] == "\t" else 1
        if width + step > columns:
            break
        width += step
        taken += 1
    if not taken:
        return line
    end = "\r" if line.endswith("\r") else ""
    return line[taken:len(line) - len(end)] + " " * taken + end


def blank(line: str) -> str:
    """``line`` as spaces, its line ending kept."""
    return fill(line, "")


_TICKS = re.compile(r"`+")


def inline_code_spans(line: str) -> list[tuple[int, int]]:
    """Where inline code spans sit in ``line``: a backtick run and the next run of its length (one pass
    over the runs, whatever their number)."""
    runs = [(m.start(), m.end()) for m in _TICKS.finditer(line)]
    by_length: dict[int, list[int]] = {}
    for i, (a, b) in enumerate(runs):
        by_length.setdefault(b - a, []).append(i)
    spans: list[tuple[int, int]] = []
    reached = 0  # runs before this one are inside a span already
    for i, (a, b) in enumerate(runs):
        if i < reached:
            continue
        same = by_length[b - a]
        k = bisect.bisect_right(same, i)
        if k < len(same):
            j = same[k]
            spans.append((a, runs[j][1]))
            reached = j + 1
    return spans


def in_code_span(code: list[tuple[int, int]], position: int) -> bool:
    """Whether ``position`` lies inside one of the (sorted, disjoint) inline code spans ``code``."""
    k = bisect.bisect_right(code, (position, 1 << 62)) - 1
    return k >= 0 and code[k][0] <= position < code[k][1]


def replace_outside_code(line: str, matches: list[re.Match[str]], replace: Callable[[re.Match[str]], str]) -> str:
    """``line`` with each of ``matches`` outside inline code replaced (``replace`` gives the text), every
    replacement padded with spaces to the match's length."""
    if not matches:
        return line
    code = inline_code_spans(line) if "`" in line else []
    out: list[str] = []
    last = 0
    for m in matches:
        if m.start() < last or in_code_span(code, m.start()):
            continue
        new = replace(m)
        out += [line[last:m.start()], new + " " * max(0, len(m.group(0)) - len(new))]
        last = m.end()
    return "".join(out) + line[last:] if out else line


def cut_outside_code(line: str, matches: list[re.Match[str]]) -> str:
    """``line`` without those of ``matches`` that lie outside inline code, padded with spaces at its end:
    what follows moves left, so markup that opened the line leaves no indentation (four spaces would
    read as a code block)."""
    code = inline_code_spans(line) if "`" in line else []
    kept = [m for m in matches if not in_code_span(code, m.start())]
    if not kept:
        return line
    end = "\r" if line.endswith("\r") else ""
    body = line[:len(line) - len(end)]
    out, last = [], 0
    for m in kept:
        if m.start() >= last:
            out.append(body[last:m.start()])
            last = m.end()
    rest = "".join(out) + body[last:]
    return rest + " " * (len(body) - len(rest)) + end
