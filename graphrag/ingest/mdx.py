"""MDX (Markdown with JSX, as Docusaurus, Nextra, Astro and Mintlify sites write their docs) read as Markdown.

What is not Markdown is blanked out with spaces, line breaks kept, so a chunk's offsets still index
the file: ESM ``import``/``export`` blocks, ``{...}`` expressions (JSX comments ``{/* ... */}``
included) and JSX component tags (``<Tabs>``, ``<TabItem value="pip">``, ``<Figure src={img} />``,
fragments ``<>``). A component's children are Markdown and stay. HTML tags (lower-case names) are
left to the prose view like those of any Markdown file; code blocks, inline code and escaped
characters (``\\<``, ``\\{``) are never touched.

A tag that opens a line with text after it on that line is blanked to a no-break space and spaces, so
the text does not turn into a heading or a list item it never was. One left-to-right scan, linear in the file: a brace or tag that never closes is read as text, and
after one brace that never closes the rest of the file's braces are too (MDX would reject the file).
"""

from __future__ import annotations

import bisect
import re

from graphrag.ingest.textprep import CODE_SPAN, outside_fences

_BLANK_LINE = re.compile(r"\n[ \t\r]*(?:\n|$)")  # CRLF files too
# A component tag's start: "<Name", "</Name", "<a.b" (member names); "<>"/"</>" are checked apart.
_TICKS = re.compile(r"`+")
_TAG_START = re.compile(r"</?(?:[A-Z][\w.:-]*|[a-z][\w-]*(?:\.[\w-]+)+)(?=[\s/>{])")
_ESM_START = re.compile(r"(?:import|export)[ \t]")
# Template literals nested deeper than this ("`${`${`${...") are read as text, not recursed into.
_MAX_NESTING = 50


class _Scanner:
    """Finds the ends of MDX constructs in one stretch of text outside code blocks."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.n = len(text)
        self.braces_ok = True  # False after a brace that never closes: the rest are text
        self.esm_closes = True  # False after an ESM block whose brackets never close: the rest end at a blank line

    def string_end(self, i: int, nesting: int = 0) -> int:
        """After the string opening at ``i`` ('...', "...", `...` with ${...}); a quote that does
        not close on its line (an apostrophe in JSX text) is just a character: ``i + 1``."""
        s, quote = self.s, self.s[i]
        j = i + 1
        while j < self.n:
            c = s[j]
            if c == "\\":
                j += 2
                continue
            if c == quote:
                return j + 1
            if quote == "`" and c == "$" and s.startswith("{", j + 1):
                k = self.braces_end(j + 1, nesting + 1) if nesting < _MAX_NESTING else None
                if k is None:
                    return i + 1
                j = k
                continue
            if c == "\n" and quote != "`":
                return i + 1
            j += 1
        return i + 1

    def braces_end(self, i: int, nesting: int = 0) -> int | None:
        """After the ``}`` matching the ``{`` at ``i`` (strings, template literals and comments skipped),
        or None if it never closes."""
        if not self.braces_ok:
            return None
        s = self.s
        depth, j = 0, i
        while j < self.n:
            c = s[j]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    return j + 1
            elif c in "\"'`":
                j = self.string_end(j, nesting)
                continue
            elif c == "/" and s.startswith("*", j + 1):
                k = s.find("*/", j + 2)
                if k < 0:
                    break
                j = k + 2
                continue
            j += 1
        self.braces_ok = False
        return None

    def tag_end(self, i: int) -> int | None:
        """After the JSX tag opening at ``i``, or None if none does."""
        s = self.s
        if s.startswith(("<>", "</>"), i):
            return i + (2 if s[i + 1] == ">" else 3)
        m = _TAG_START.match(s, i)
        if m is None:
            return None
        j = m.end()
        while j < self.n:
            c = s[j]
            if c == ">":
                return j + 1
            if c == "{":
                k = self.braces_end(j)
                if k is None:
                    return None
                j = k
                continue
            if c in "\"'":
                k = s.find(c, j + 1)
                if k < 0 or _BLANK_LINE.search(s, j, k):
                    return None
                j = k + 1
                continue
            if c == "<" or (c == "\n" and _BLANK_LINE.match(s, j)):
                return None  # no raw "<" and no blank line inside a tag
            j += 1
        return None

    def esm_end(self, i: int) -> int:
        """The end of the ESM block starting at ``i``: the first blank line outside brackets and
        strings (``export function f() {`` ... blank lines ... ``}``), or, where brackets never
        close, the first blank line."""
        s = self.s
        first_blank = _BLANK_LINE.search(s, i)
        if not self.esm_closes:
            return first_blank.start() if first_blank else self.n
        depth, j = 0, i
        while j < self.n:
            c = s[j]
            if c in "{([":
                depth += 1
            elif c in "})]":
                depth -= 1
            elif c in "\"'`":
                j = self.string_end(j)
                continue
            elif c == "\n" and depth <= 0 and _BLANK_LINE.match(s, j):
                return j
            j += 1
        if depth > 0:  # never closes: this block and every later one end at their first blank line
            self.esm_closes = False
            return first_blank.start() if first_blank else self.n
        return self.n


def _prose(segment: str) -> str:
    """One stretch of the file outside code blocks, without its ESM blocks, expressions and JSX."""
    scan = _Scanner(segment)
    s, n = segment, len(segment)
    out = list(segment)
    runs: dict[int, list[int]] = {}  # where this paragraph's backtick runs of each length start
    line_start, after_blank = 0, True  # ESM starts a line after a blank line (or the file's first)
    paragraph_end = -1  # inline code closes before this offset (a blank line)
    i = 0
    while i < n:
        c = s[i]
        end: int | None = None
        if i == line_start and after_blank and _ESM_START.match(s, i):
            end = scan.esm_end(i)
        elif c == "\n":
            after_blank = not s[line_start:i].strip()
            line_start = i + 1
        elif c == "\\" and s[i + 1:i + 2] != "\n":
            i += 1  # an escaped character is text
        elif c == "`":
            if i >= paragraph_end:  # the backtick runs of this paragraph, by length, found once
                found = _BLANK_LINE.search(s, i)
                paragraph_end = found.start() if found else n
                runs = {}
                for m in _TICKS.finditer(s, i, paragraph_end):
                    runs.setdefault(len(m.group(0)), []).append(m.start())
            run = _run(s, i)
            starts = runs.get(run, [])
            k = bisect.bisect_right(starts, i)
            if k < len(starts):
                i = starts[k] + run - 1  # inline code is kept as it is
            else:
                i += run - 1
        elif c == "{":
            end = scan.braces_end(i)
        elif c == "<":
            end = scan.tag_end(i)
        if end is None:
            i += 1
            continue
        for k in range(i, end):
            if out[k] != "\n":
                out[k] = " "
        line_end = s.find("\n", end)
        if i == line_start and "\n" not in s[i:end] and s[end:line_end if line_end >= 0 else n].strip():
            # "<Tag># text": the text is inside JSX, no heading; blanked to spaces it would read as one.
            out[i] = "\u00a0"
        last_newline = s.rfind("\n", i, end)
        if last_newline >= 0:
            line_start, after_blank = last_newline + 1, False
        i = end
    return "".join(out)


def _run(s: str, i: int) -> int:
    j = i
    while j < len(s) and s[j] == "`":
        j += 1
    return j - i


def mdx_to_markdown(text: str) -> str:
    """``text`` with its MDX-only syntax blanked out (the same length and lines, see the module)."""
    return outside_fences(text, _prose)


# An ES module import of a JavaScript package or file ("import Tabs from '@theme/Tabs';", "import
# '../styles.css';"), or an export of a value: never a line of Markdown prose.
_ESM_LINE = re.compile(r"""^(?:import[ \t]+(?:[\w*{][^\n]*?[ \t]from[ \t]*)?['"][^'"\n]+['"]|"""
                       r"""export[ \t]+(?:const|let|default|function)\b)""", re.M)
_COMPONENT = re.compile(r"<[A-Z][\w.]*(?=[\s/>])")
_DOCUSAURUS_IMPORT = re.compile(r"""^import[ \t][^\n]*?['"]@(?:theme|site|docusaurus)/""", re.M)


def reads_as_mdx(text: str) -> bool:
    """Whether a ``.md`` file is MDX in fact: Docusaurus (and other MDX sites) read ``.md`` files as
    MDX, and their pages import components ("import Tabs from '@theme/Tabs';") and use them
    (``<Tabs>``) outside code. Both must be there, outside code blocks and inline code (or an import
    from Docusaurus's own ``@theme/``, ``@site/`` or ``@docusaurus/``, used or not)."""
    if "import" not in text and "export" not in text:
        return False
    segments: list[str] = []

    def keep(segment: str) -> str:
        segments.append(CODE_SPAN.sub(" ", segment))
        return segment

    outside_fences(text, keep)
    prose = "\n".join(segments)
    return _ESM_LINE.search(prose) is not None and (_COMPONENT.search(prose) is not None
                                                    or _DOCUSAURUS_IMPORT.search(prose) is not None)
