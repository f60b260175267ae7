"""Pure text work that makes entity extraction fit technical text (no model needed).

- :func:`prose_view`: what NER should read of a Markdown/plain chunk. Code blocks are taken out
  (kept aside for identifier lookups), markup is removed (links keep their text, HTML tags,
  comments, reference definitions and URLs go), headings end as sentences so a name never runs
  from a heading into the next line, and inline code spans stay in the text with their positions
  recorded, so the NER spans they overlap can be replaced by a ``CODE`` entity.
- :func:`code_name`: the identifier an inline code span names (``Rc::clone()`` -> ``Rc::clone``),
  or None for code that is not a name (``let x = 5;``).
- :func:`reject_name`: why a candidate name is not an entity: a code fragment (unbalanced brackets,
  operators, markup, URLs), a structural reference (Listing 4-1, Chapter 15), a version, ...
- :func:`is_boilerplate`: licence text (GNU FDL, MIT, Apache, GPL, CC notices) and similar chunks
  that should yield no entities.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Literal, NamedTuple
from dataclasses import dataclass, field

# --- Markdown structure (shared by the loaders, the chunker and the prose view) ---------------------


class Fence(NamedTuple):
    """An open code fence: the column its marker starts at (after any block-quote markers), the marker
    ("```", "~~~~") and how many block quotes hold it ("> ```rust": 1)."""

    indent: int
    marker: str
    quotes: int = 0


# A fence may open a list item's content ("  - ```yaml", a MyST list-table's cell) or sit in a block
# quote ("> ```rust"); the closing fence is then indented to the item's content, or quoted as deep.
_FENCE_OPEN = re.compile(r"^((?:[ \t]{0,3}>[ \t]?){0,8})([ \t]*+(?:(?:[-*+]|\d{1,9}[.)])[ \t]++){0,3})(`{3,}|~{3,})([^\r\n]*)")
_FENCE_CLOSE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*\r?\n?$")
_QUOTE_MARK = re.compile(r"[ \t]{0,3}>[ \t]?")
# ATX headings; closing #s only after white space ("# Using C#" is about C#). The text is runs of
# non-space characters and of white space followed by more text, taken possessively: a lazy ".*?"
# before optional white space tried every split of a long run of spaces (quadratic).
HEADING_LINE = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]++((?:[^ \t\r\n]++|\r(?!\n?$)|[ \t]++(?!#++[ \t]*+\r?\n?$)"
                          r"(?=[^ \t\r\n]|\r(?!\n?$)))*+)(?:[ \t]++#++)?[ \t]*+\r?\n?$")
SETEXT_UNDERLINE = re.compile(r"^[ \t]{0,3}(=+|-+)[ \t]*\r?\n?$")
_HTML_H1 = re.compile(r"^[ \t]*<h1\b[^>]*>(.*?)</h1>", re.I | re.S)
# A heading's attribute list: "{#id}", "{ #id .class }" (Python-Markdown, pandoc, MkDocs), or a Hugging
# Face doc-builder anchor "[[automatic-speech-recognition]]".
_HEADING_ATTRS = re.compile(r"\s*(?:\{\s*[#.][^{}]*\}|\[\[[\w.:-]+\]\])\s*$")


def strip_heading_attrs(text: str) -> str:
    """``text`` without a trailing attribute list or anchor; the pattern only sees the line's end (from
    every start in a long run of spaces it would scan to the end: quadratic)."""
    stripped = text.rstrip()
    if not stripped.endswith(("}", "]]")):
        return text
    tail = stripped[-_MAX_HEADING_CHARS:]
    m = _HEADING_ATTRS.search(tail)
    return stripped[:len(stripped) - len(tail) + m.start()] if m else text


def fence_open(line: str) -> Fence | None:
    """The fence a line opens, at any indentation (code in list items, admonitions and tabs is
    indented), on a list item's first line or in a block quote; a backtick fence's info string holds
    no backtick (that is inline code). After a list marker, a MyST directive (``- ```{note}``) is no
    code block."""
    m = _FENCE_OPEN.match(line)
    if m is None or (m.group(3)[0] == "`" and "`" in m.group(4)):
        return None
    quotes = m.group(1).count(">")
    if m.group(2).strip() and m.group(4).lstrip().startswith("{"):
        return None
    return Fence(len(m.group(2).expandtabs(4)), m.group(3), quotes)


def lines_outside_fences(lines: list[str]) -> Iterator[int]:
    """The numbers of ``lines`` that lie outside fenced code blocks (the fence lines are inside), as
    :class:`BlockState` reads them (HTML comments are text here)."""
    state = BlockState()
    for number, line in enumerate(lines):
        if state.step(line, comments=False) == "text":
            yield number


class DirectiveFences:
    """Code blocks among MyST's directive fences, line by line: a fence whose info string is ``{name}``
    (```` ````{note} ````) holds Markdown and its closing line closes it, where a bare fence line would
    otherwise be read as opening a code block."""

    def __init__(self) -> None:
        self.fence: Fence | None = None  # the code block open, if any
        self.directives: list[Fence] = []  # the directive fences open, innermost last

    def in_code(self, line: str) -> bool:
        """Read ``line``: whether it is in a code block (its fence lines included)."""
        if self.fence is not None:
            if fence_closes(line, self.fence):
                self.fence = None
            return True
        if self.directives and fence_closes(line, self.directives[-1]):
            self.directives.pop()
            return False
        opened = fence_open(line)
        if opened is None:
            return False
        if line.lstrip(" \t`~").startswith("{"):
            self.directives.append(opened)
            return False
        self.fence = opened
        return True


def _unquoted(line: str, quotes: int) -> str | None:
    """``line`` without its first ``quotes`` block-quote markers, or None when it has fewer (it is
    outside a block quote that deep)."""
    pos = 0
    for _ in range(quotes):
        m = _QUOTE_MARK.match(line, pos)
        if m is None:
            return None
        pos = m.end()
    return line[pos:]


def fence_ends_before(line: str, fence: Fence) -> bool:
    """Whether ``line`` ends a block-quoted code block without closing it: a line of text outside the
    quote (CommonMark ends the quote and its code there; the line itself is text)."""
    return fence.quotes > 0 and bool(line.strip()) and _unquoted(line, fence.quotes) is None


def fence_closes(line: str, fence: Fence) -> bool:
    """Whether ``line`` closes ``fence``: the same character, at least as many, nothing after them,
    indented at most 3 columns more than the opening (a fence shown inside the block is deeper), as
    deep in block quotes; a line of text outside those quotes ends the block too."""
    if fence.quotes:
        unquoted = _unquoted(line, fence.quotes)
        if unquoted is None:
            return bool(line.strip())
        line = unquoted
    m = _FENCE_CLOSE.match(line)
    return bool(m and m.group(2)[0] == fence[1][0] and len(m.group(2)) >= len(fence[1])
                and len(m.group(1).expandtabs(4)) <= fence[0] + 3)


# A GFM table's delimiter row: "--- | :---:", "|---|---|" (a pipe in it tells it from a setext underline).
# Possessive quantifiers: white space shared by two of them would otherwise be tried every way (quadratic).
_DELIMITER_ROW = re.compile(
    r"^[ \t]{0,3}(?=[^\n]*\|)\|?[ \t]*+:?-++:?[ \t]*+(?:\|[ \t]*+:?-++:?[ \t]*+)*+\|?[ \t]*+\r?\n?$")


def _cells(row: str) -> int:
    row = row.strip()
    row = row[1:] if row.startswith("|") else row
    row = row[:-1] if row.endswith("|") and not row.endswith("\\|") else row
    return len(re.split(r"(?<!\\)\|", CODE_SPAN.sub("x", row)))


def table_starts(line: str, next_line: str) -> bool:
    """Whether ``line`` is the header row of a GFM table, leading pipes or not ("a | b" over
    "--- | ---"): the next line is a delimiter row with as many cells."""
    return "|" in line and bool(_DELIMITER_ROW.match(next_line)) and _cells(line) == _cells(next_line)


def pipe_table(rows: list[list[str]]) -> str:
    """Rows as a Markdown pipe table. Markdown needs a header row: the first row is it (header cells or not)."""
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    return "\n".join(lines)


def opens_comment(line: str) -> bool:
    """Whether an HTML comment starts on ``line`` and does not end there (a ``<!--`` in inline code
    is no comment)."""
    if "<!--" not in line:
        return False
    plain = CODE_SPAN.sub(" ", line)
    return "<!--" in plain and "-->" not in plain.split("<!--", 1)[1]


@dataclass
class BlockState:
    """Where a line-by-line walk of Markdown is: inside a code block (``fence``), inside an HTML comment,
    or in the text. :meth:`step` reads the next line; what is open at the end stays in the fields.

    The Markdown walks (the chunker's sections, the prose view NER reads, indented code, notebook
    cells, the fences of a chunk) all step through this one state, so they agree on what is code."""

    fence: Fence | None = None
    in_comment: bool = False
    # After a "comment" line: its text outside the comment (before an opening ``<!--``, after a closing
    # ``-->``), or None for a line wholly inside one.
    outside: str | None = None

    def step(self, line: str, comments: bool = True) -> Literal["code", "fence", "comment", "text"]:
        """Read one line and say what it is: ``"code"`` (inside a block, its closing fence included),
        ``"fence"`` (opens a block), ``"comment"`` (inside a comment, or opening or closing one; see
        :attr:`outside`) or ``"text"``. ``comments=False`` reads comments as text."""
        if self.fence is not None:
            if not fence_ends_before(line, self.fence):
                if fence_closes(line, self.fence):
                    self.fence = None
                return "code"
            self.fence = None  # the quote holding the block ended: this line is read below
        if self.in_comment:
            if "-->" not in line:
                self.outside = None
                return "comment"
            after = line.split("-->", 1)[1]
            self.in_comment = opens_comment(after)  # "--> text <!-- more" opens the next one
            self.outside = after.split("<!--", 1)[0] if self.in_comment else after
            return "comment"
        if (opened := fence_open(line)) is not None:
            self.fence = opened
            return "fence"
        if comments and opens_comment(line):
            self.in_comment = True
            self.outside = line.split("<!--", 1)[0]
            return "comment"
        return "text"


# Past this length a line is no heading or title; the markup rules below are quadratic on crafted
# lines ("<a <a <a ..."), so they never see more.
_MAX_HEADING_CHARS = 500


def heading_text(raw: str) -> str:
    """A heading's words without markup: attribute lists, links (their text), images, HTML tags,
    emphasis and code backticks (``## `async` and **await**`` -> "async and await")."""
    text = strip_heading_attrs(raw[:_MAX_HEADING_CHARS])
    text = _IMAGE.sub(lambda m: m.group(1), text)
    text = _LINK.sub(lambda m: m.group(1), text)
    text = _TAG.sub(" ", text)
    text = CODE_SPAN.sub(lambda m: m.group(2).strip(), text)
    text = re.sub(r"(?<![\w*])(\*{1,3}|_{1,3})(?=\S)(.+?)(?<=\S)\1(?![\w*])", r"\2", text)
    return " ".join(html.unescape(text).split())


# -- indented code blocks ------------------------------------------------------------------------------
_LIST_ITEM = re.compile(r"^[ \t]{0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
# Containers of Markdown extensions whose content is indented four spaces: admonitions (!!! note, ??? tip),
# content tabs (=== "pip"), definitions (":   text"), footnote definitions.
_INDENTED_CONTAINER = re.compile(r'^(?:(?:!!!|\?\?\?\+?)[ \t]|===[+!]?[ \t]+"|:[ \t]+\S|\[\^[^\]]+\]:)')
_HTML_BLOCK = re.compile(r"^[ \t]{0,3}<(address|article|aside|blockquote|center|details|dialog|div|dl|fieldset|figure|footer|"
                         r"form|header|main|nav|ol|pre|section|table|ul|script|style|textarea)\b", re.I)
_RAW_HTML = ("pre", "script", "style", "textarea")  # HTML blocks that end at their closing tag, not a blank line
# Processing instructions, declarations and CDATA open HTML blocks that end where these close them.
_SPECIAL_HTML = re.compile(r"^[ \t]{0,3}(<\?|<![A-Za-z]|<!\[CDATA\[)")
_SPECIAL_HTML_END = {"<?": re.compile(r"\?>"), "<!": re.compile(">"), "<![CDATA[": re.compile(r"\]\]>")}
_PLAIN_WORD = re.compile(r"""^[(\["'“‘*_]*[A-Za-z][a-z'’-]*[)\]"'”’*_]*[.,;:!?]?[)\]"'”’]*$""")
_SENTENCE_END = re.compile(r"""[a-z)\]"'”’`*_]\.(?:\s|$)""")
_CODE_START = re.compile(r"^\s*(?:\$ |% |>>> |# |//|/\*|<[!/?A-Za-z]|[\w.-]+> |(?:def|import|from|fn|let|var|const|"
                         r"function|class|return|if|for|while|pub|use|struct|impl|enum|package|func|type|echo|export|"
                         r"sudo|npm|pip|cd|git|curl|SELECT|INSERT)\b)")


def _indent(line: str) -> int:
    """Columns of leading white space, a tab to the next multiple of four."""
    width = 0
    for ch in line:
        if ch == " ":
            width += 1
        elif ch == "\t":
            width += 4 - width % 4
        else:
            break
    return width


def _dedent4(line: str) -> str:
    """``line`` without its first four columns of indentation."""
    width, i = 0, 0
    while i < len(line) and width < 4 and line[i] in " \t":
        width += 1 if line[i] == " " else 4 - width % 4
        i += 1
    return " " * (width - 4) + line[i:] if width > 4 else line[i:]


def _reads_as_prose(lines: list[str]) -> bool:
    """An indented block of sentences (a paragraph indented by habit, not code): at least half its lines
    hold six words or more, three in four of them plain words, and a sentence ends in it."""
    filled = [ln for ln in lines if ln.strip()]

    def sentence(line: str) -> bool:
        tokens = line.split()
        if len(tokens) < 6 or _CODE_START.match(line):
            return False
        return sum(1 for t in tokens if _PLAIN_WORD.match(t)) * 4 >= len(tokens) * 3

    sentences = sum(map(sentence, filled))
    return sentences > 0 and sentences * 2 >= len(filled) and _SENTENCE_END.search(" ".join(filled)) is not None


_STAR_EMPHASIS = re.compile(r"(\*{1,3})(?=[^\s*])([^*\n]{1,300}?)(?<=[^\s*])\1")


def bold_title(title: str, *, markdown: bool) -> str:
    """A block's title (an admonition's, a tab's) as a line wholly in bold, which the prose view reads as
    a title: ``**Careful**``; "" for none. A Markdown title's own emphasis goes, as all of it is bold
    (``Inspired **FastAPI** to``); a title still holding "*" (text, or a Markdown ``*args``) stays as
    it is, since bold around it would not read as bold."""
    title = title.strip()
    if markdown and "*" in title:
        title = _STAR_EMPHASIS.sub(r"\2", title)
    return title if not title or "*" in title else f"**{title}**"


def fence_for(lines: list[str]) -> str:
    """A backtick fence longer than any run of backticks opening a line of the code it is to hold."""
    longest = max((len(m.group(1)) for line in lines if (m := re.match(r"[ \t]*(`{3,})", line))), default=0)
    return "`" * max(3, longest + 1)


def fence_indented_code(text: str) -> str:
    """Markdown with its indented code blocks (four spaces or a tab, after a blank line or a heading)
    written as fenced ones, so the chunker keeps them whole and NER reads them as code.

    Conservative where Markdown's extensions use indentation for something else: nothing inside a list
    (continuation paragraphs, nested code), an admonition, a content tab, a definition or footnote, or an
    open HTML block is touched, and an indented block that reads as sentences stays prose."""
    if "    " not in text and "\t" not in text:
        return text
    lines = text.split("\n")
    blocks = indented_code_blocks(lines)
    if not blocks:
        return text
    out: list[str] = []
    done = 0
    for start, end in blocks:
        out.extend(lines[done:start])
        body = [_dedent4(ln) for ln in lines[start:end]]
        mark = fence_for(body)
        out.extend([mark, *body, mark])
        done = end
    out.extend(lines[done:])
    return "\n".join(out)


def _html_block(line: str) -> tuple[re.Pattern[str], bool] | None:
    """The HTML block ``line`` opens and does not close on it, as (what closes it, whether a blank line
    ends it): block tags end at a blank line; raw text (``<pre>``, ``<script>``), processing
    instructions, declarations and CDATA only where they close."""
    if (m := _HTML_BLOCK.match(line)) is not None:
        tag = m.group(1).lower()
        closer = re.compile(rf"</{tag}\s*>", re.I)
        return None if closer.search(line, m.end()) else (closer, tag not in _RAW_HTML)
    if (special := _SPECIAL_HTML.match(line)) is not None:
        closer = _SPECIAL_HTML_END[special.group(1) if special.group(1) == "<![CDATA[" else special.group(1)[:2]]
        return None if closer.search(line, special.end()) else (closer, False)
    return None


def indented_code_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """``(first line, line after the last)`` of each indented code block of a Markdown text's lines
    (see :func:`fence_indented_code`)."""
    blocks: list[tuple[int, int]] = []
    state = BlockState()
    context = False  # inside a list or an extension's container: indentation is theirs
    html: tuple[re.Pattern[str], bool] | None = None  # an open HTML block: what closes it, whether a blank line does
    previous_blank = True
    previous_heading = False
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if state.fence is not None or state.in_comment:
            state.step(line)
            i += 1
            continue
        if not line.strip():
            previous_blank, previous_heading = True, False
            if html is not None and html[1]:
                html = None
            i += 1
            continue
        width = _indent(line)
        # An indented fence (under a container this scan does not know) is left to the fence rules: code either way.
        if width >= 4 and (previous_blank or previous_heading) and not context and html is None and fence_open(line) is None:
            end = i
            while end < n and (not lines[end].strip() or _indent(lines[end]) >= 4):
                end += 1
            last = end
            while last > i and not lines[last - 1].strip():
                last -= 1
            if not _reads_as_prose(lines[i:last]):
                blocks.append((i, last))
            previous_blank, previous_heading = end > last, False
            i = end
            continue
        state.step(line)  # a fence or a comment it opens
        if html is None:
            html = _html_block(line) if width < 4 else None
        elif not html[1] and html[0].search(line):
            html = None
        heading = HEADING_LINE.match(line) is not None
        if _LIST_ITEM.match(line) or (width == 0 and _INDENTED_CONTAINER.match(line)):
            context = True
        elif width == 0 and (previous_blank or heading):
            context = False  # a paragraph or heading at the margin ends a list or container
        previous_heading = heading
        previous_blank = False
        i += 1
    return blocks


def markdown_title(text: str) -> str | None:
    """The document's title: its first level-1 heading (``# T``, ``T`` over ``===``, or an HTML
    ``<h1>``), else a first heading of any level that comes before any other text; never a line
    inside a code block or an HTML comment."""
    first: str | None = None
    seen_text = False
    state = BlockState()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if state.step(line) != "text":
            continue
        line = line[:_MAX_HEADING_CHARS]
        level, title = 0, ""
        if (m := HEADING_LINE.match(line)) is not None:
            level, title = len(m.group(1)), m.group(2)
        elif (h1 := _HTML_H1.match(line)) is not None:
            level, title = 1, h1.group(1)
        elif (line.strip() and i + 1 < len(lines) and (u := SETEXT_UNDERLINE.match(lines[i + 1])) is not None
              and not (i > 0 and lines[i - 1].strip()) and not _TABLE_RULE.match(line)):
            level, title = (1 if u.group(1)[0] == "=" else 2), line
        title = heading_text(title) if level else ""
        if title and level == 1:
            return title
        if title and first is None and not seen_text:
            first = title
        elif line.strip() and not level and not _TAG.fullmatch(line.strip()):
            seen_text = seen_text or bool(re.search(r"\w{3,}", _TAG.sub(" ", _IMAGE.sub(" ", _COMMENT.sub(" ", line)))))
    return first


# --- prose view ------------------------------------------------------------------------------

_REF_DEF = re.compile(r"^[ \t]{0,3}\[(?!\^)[^\]]+\]:\s*\S+.*$")
_FOOTNOTE_DEF = re.compile(r"^[ \t]{0,3}\[\^[^\]]+\]:[ \t]*")
_FOOTNOTE_REF = re.compile(r"\[\^[^\]\s]+\]")
_TABLE_RULE = re.compile(r"^[\s|:\-+]+$")
_ADMONITION = re.compile(r'^[ \t]*(?:!!!|\?\?\?\+?)\s*[\w-]+(?:[ \t]+[\w-]+)*(?:\s+"([^"]*)")?\s*$')
_CONTAINER = re.compile(r"^[ \t]*(?::{3,}[ \t]*[\w-]*[ \t]*(.*)|===[+!]?[ \t]+\"([^\"]*)\"[ \t]*)$")  # ":::tip T", '=== "pip"'
_STRONG_LINE = re.compile(r"^[ \t]*\*\*(?=\S)([^*\r\n]{1,300}?)(?<=\S)\*\*[ \t]*\r?$")  # "**Careful now**"
#: Text wholly in bold (a Markdown line, an HTML paragraph) is a block's title up to this long.
BOLD_TITLE_CHARS = 80


def reads_as_bold_title(text: str) -> bool:
    """Whether ``text``, wholly in bold on a line or paragraph of its own, is a block's title ("Setup",
    "Expected output", "Tier: 3") rather than a sentence set in bold ("Do not enable debug mode in
    production.", a long thank-you naming people): at most :data:`BOLD_TITLE_CHARS` characters, not
    ending in ".", "!" or "?". The Markdown and HTML loaders share it."""
    text = text.strip()
    return 0 < len(text) <= BOLD_TITLE_CHARS and not text.endswith((".", "!", "?"))
_QUOTE = re.compile(r"^(?:[ \t]{0,3}>[ \t]?)+(?:\[![A-Za-z]+\][ \t]*)?")  # "> ", GitHub's "> [!NOTE]"
_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.S)
_HTML_TAGS = ("a|abbr|b|br|code|dd|del|details|dfn|div|dl|dt|em|figcaption|figure|h[1-6]|hr|i|img|input|ins|"
              "kbd|li|mark|ol|p|picture|pre|q|s|samp|section|small|span|strong|sub|summary|sup|table|tbody|td|"
              "th|thead|tr|u|ul|var|video|source|iframe|Listing|center|font")
_TAG = re.compile(rf"</?(?:{_HTML_TAGS})(?:\s(?:\"[^\"]*\"|'[^']*'|[^<>\"'])*)?/?>", re.I)
_IMAGE = re.compile(r"!\[([^\[\]]*)\](?:\([^()]*\)|\[[^\[\]]*\])")
# [text](url), [text](<url>), [text](url 'title'), [text][ref], [text][] -- the text stays (it may hold code)
_LINK = re.compile(r"\[((?:[^\[\]]|\[[^\]]*\])*)\](?:\((?:<[^>]*>|(?:[^()\s]|\([^)]*\))*)"
                   r"(?:\s+(?:\"[^\"]*\"|'[^']*'))?\)|\[[^\]]*\])")
_AUTOLINK = re.compile(r"<(?:(?:https?|ftp|mailto):[^>\s]+|[\w.+-]+@[\w-]+(?:\.[\w-]+)+)>")
_EXTERNAL = re.compile(r"\s*<?(?:[a-z][a-z0-9+.-]*:|//|www\.)", re.I)  # a link target with a scheme or host
_REF_TARGET = re.compile(r"^[ \t]{0,3}\[(?!\^)([^\]]+)\]:[ \t]*(\S+)", re.M)
_URL = re.compile(r"(?:https?|ftp)://[^\s)>\]]+|www\.[^\s)>\]]+")
CODE_SPAN = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")
# Emphasis marks; the link marks (\x01, \x02) stand for the link's text, which may be a word.
_EMPHASIS = re.compile(r"(?<![\w*\x02])[*_]{1,3}(?=[^\s*_])|(?<=[^\s*_])[*_]{1,3}(?![\w*\x01])")
_ANNOTATION = re.compile(r"\s\(\d+\)!")
_STASHED = re.compile(r"\x00(\d+)\x00")


@dataclass
class Prose:
    """A chunk as NER should read it, plus the code it held."""

    text: str
    code_spans: list[tuple[int, int, str]] = field(default_factory=list)  # start, end in text, raw content
    code_blocks: list[str] = field(default_factory=list)
    open_fence: Fence | None = None  # the chunk ends inside this code block (a long block cut in pieces)
    headings: list[tuple[int, int]] = field(default_factory=list)  # start, end in text of each heading line
    links: list[tuple[int, int]] = field(default_factory=list)  # start, end in text of each internal link's text, trimmed
    titles: list[tuple[int, int]] = field(default_factory=list)  # start, end in text of each line wholly in bold


def external_references(text: str) -> frozenset[str]:
    """The labels of ``text``'s reference definitions that point to another site
    (``[1]: https://example.org``), in the form :func:`_link_text` compares them."""
    return frozenset(_ref_label(label) for label, target in _REF_TARGET.findall(text) if _EXTERNAL.match(target))


def _ref_label(label: str) -> str:
    return " ".join(label.lower().split())


def _link_text(m: re.Match[str], external: frozenset[str] = frozenset()) -> str:
    """A link's text; an internal link's (to a page or section of the same site: a relative path, an
    anchor, or a reference not defined as another site's address, ``external``) between marks, since
    its text is usually that page's or section's title."""
    rest = m.group(0)[len(m.group(1)) + 2:]
    if rest.startswith("("):
        inside = _EXTERNAL.match(rest[1:]) is None
    else:
        inside = _ref_label(rest[1:-1] or m.group(1)) not in external
    return f"\x01{m.group(1)}\x02" if inside else m.group(1)


def _unmark(text: str, pos: int, links: list[tuple[int, int]]) -> str:
    """``text`` without its link marks; the position of each marked stretch without the white space at
    its ends (``pos``: where ``text`` starts) goes to ``links``. A mark without its pair (a code span in
    the link's text) is dropped."""
    if "\x01" not in text and "\x02" not in text:
        return text
    out: list[str] = []
    opened: int | None = None  # where in out the marked stretch starts
    length = 0
    for piece in re.split(r"([\x01\x02])", text):
        if piece == "\x01":
            opened = len(out)
        elif piece == "\x02":
            if opened is not None:
                inner = "".join(out[opened:])
                start = pos + length - len(inner) + (len(inner) - len(inner.lstrip()))
                end = pos + length - (len(inner) - len(inner.rstrip()))
                if end > start:
                    links.append((start, end))
            opened = None
        else:
            out.append(piece)
            length += len(piece)
    return "".join(out)


def _inline(line: str, out: list[str], pos: int, spans: list[tuple[int, int, str]],
            links: list[tuple[int, int]] | None = None, external: frozenset[str] = frozenset()) -> int:
    """Append one line of prose without markup; inline code content stays, its position is recorded,
    as is the text of each internal link (in ``links``).

    Code spans are set aside first, so nothing meant for prose touches them (``Option<S>`` keeps
    its ``<S>``, ``http://localhost`` its URL)."""
    codes: list[str] = []
    found: list[tuple[int, int]] = [] if links is None else links

    def stash(m: re.Match[str]) -> str:
        codes.append(m.group(2).strip())
        return f"\x00{len(codes) - 1}\x00"

    line = CODE_SPAN.sub(stash, re.sub(r"[\x00-\x02]", " ", line))
    line = _COMMENT.sub(" ", line)
    line = _IMAGE.sub(lambda m: " ", line)
    line = _FOOTNOTE_REF.sub(" ", line)
    for _ in range(2):  # a link inside a link's text is rare but exists
        line = _LINK.sub(lambda m: _link_text(m, external), line)
    line = _AUTOLINK.sub(" ", line)
    line = _TAG.sub(" ", line)
    line = _URL.sub(" ", line)
    line = _ANNOTATION.sub(" ", line)
    line = html.unescape(line)  # "AT&amp;T" -> "AT&T", "&#x27;" -> "'"
    last = 0
    for m in _STASHED.finditer(line):
        before = _unmark(_EMPHASIS.sub(" ", line[last:m.start()]), pos, found)
        out.append(before + " ")
        pos += len(before) + 1
        content = codes[int(m.group(1))]
        out.append(content)
        spans.append((pos, pos + len(content), content))
        pos += len(content)
        out.append(" ")
        pos += 1
        last = m.end()
    rest = _unmark(_EMPHASIS.sub(" ", line[last:]), pos, found)
    out.append(rest)
    return pos + len(rest)


def _drop_tag(m: re.Match[str]) -> str:
    # A tag spanning lines (an <img> with a long alt text) goes before the text is read line by line;
    # one that would swallow a fence is not a tag.
    tag = m.group(0)
    if "\n" not in tag or "```" in tag or "~~~" in tag:
        return tag
    return " " + "\n" * tag.count("\n")


def outside_fences(text: str, change: Callable[[str], str], fence: Fence | None = None) -> str:
    """``text`` with ``change`` applied to each stretch outside code blocks (``fence``: it starts inside
    one); ``change`` keeps the number of lines."""
    out: list[str] = []
    prose: list[str] = []
    state = BlockState(fence)
    for line in text.split("\n"):
        if state.step(line, comments=False) == "text":
            prose.append(line)
            continue
        if prose:
            out.append(change("\n".join(prose)))
            prose = []
        out.append(line)
    if prose:
        out.append(change("\n".join(prose)))
    return "\n".join(out)


def prose_view(text: str, open_fence: Fence | None = None, external: frozenset[str] | None = None) -> Prose:
    """The prose of a chunk for NER, with inline code positions and the code blocks set aside.

    ``open_fence``: the chunk starts inside this code block (the previous piece of a long block ended
    in it), so its lines are code until the block closes. ``external``: the reference labels that
    name another site's address (:func:`external_references`; by default, those the chunk defines)."""
    if external is None:
        external = external_references(text)
    if "<" in text:
        text = outside_fences(text, lambda prose: _TAG.sub(_drop_tag, prose), open_fence)
    out: list[str] = []
    spans: list[tuple[int, int, str]] = []
    blocks: list[str] = []
    headings: list[tuple[int, int]] = []
    links: list[tuple[int, int]] = []
    titles: list[tuple[int, int]] = []
    pos = 0
    state = BlockState(open_fence)
    block: list[str] = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        kind = state.step(line)
        if kind == "code":
            if state.fence is None:  # its closing fence
                blocks.append("\n".join(block))
                block = []
            else:
                block.append(line)
            continue
        if kind == "fence":
            continue
        if kind == "comment":
            if state.outside is None:  # wholly inside the comment
                continue
            line = state.outside
        if _REF_DEF.match(line) or (line.strip() and _TABLE_RULE.match(line) and "-" in line) or SETEXT_UNDERLINE.match(line):
            out.append("\n")
            pos += 1
            continue
        if i + 1 < len(lines) and SETEXT_UNDERLINE.match(lines[i + 1]) and line.strip() and not _TABLE_RULE.match(line):
            line = "# " + line  # setext heading: its underline is dropped above
        line = _QUOTE.sub("", line)
        line = _FOOTNOTE_DEF.sub("", line)
        heading = HEADING_LINE.match(line)
        admonition = _ADMONITION.match(line)
        container = _CONTAINER.match(line) if not heading and not admonition else None
        # A line wholly in bold reads as a title: a block's title as the MkDocs pass shows it, a
        # README's pseudo-heading.
        strong = _STRONG_LINE.match(line) if not (heading or admonition or container) else None
        if strong and not reads_as_bold_title(strong.group(1)):
            strong = None  # a sentence set in bold is text
        if heading:
            line = strip_heading_attrs(heading.group(2))
        elif admonition:
            line = admonition.group(1) or ""
        elif container:
            line = container.group(1) or container.group(2) or ""
        elif strong:
            line = strong.group(1)
        if "|" in line:
            line = line.replace("\\|", " ").replace("|", " ; ")
        start = pos
        pos = _inline(line, out, pos, spans, links, external)
        if heading:
            headings.append((start, pos))
        elif strong:
            titles.append((start, pos))
        # A title ends its sentence, not run into the line below.
        if (heading or admonition or container or strong) and line.strip() and line.rstrip()[-1] not in ".!?:":
            out.append(".")
            pos += 1
        out.append("\n")
        pos += 1
    if state.fence is not None and block:
        blocks.append("\n".join(block))
    return Prose("".join(out), spans, blocks, state.fence, headings, links, titles)


def _overlap_at(previous: str, text: str) -> int | None:
    """Where in ``previous`` the start of ``text`` begins when ``text`` repeats its end (sentence
    windows repeat their last sentences), else None."""
    probe = text[:16]
    at = previous.find(probe) if probe else -1
    while at >= 0:
        if text.startswith(previous[at:]):
            return at
        at = previous.find(probe, at + 1)
    return None


def _fence_after(text: str, fence: Fence | None) -> Fence | None:
    """The code fence open at the end of ``text``, read from a start inside ``fence`` (or outside any)."""
    state = BlockState(fence)
    for line in text.split("\n"):
        state.step(line, comments=False)
    return state.fence


def prose_views(texts: Sequence[str]) -> list[Prose]:
    """:func:`prose_view` of one document's chunks in order, each read from the code-block state where
    it starts: inside a block left open by the chunk before (pieces of a block over the model limit),
    or, for a chunk that repeats the end of the one before (overlapping sentence windows), the state
    at the point of that chunk where it starts."""
    views: list[Prose] = []
    previous, previous_start = "", None
    carry: Fence | None = None
    external = frozenset().union(*(external_references(text) for text in texts))  # defined in any chunk
    for text in texts:
        start = carry
        at = _overlap_at(previous, text) if previous else None
        if at is not None:
            start = _fence_after(previous[:at], previous_start)
        view = prose_view(text, start, external)
        views.append(view)
        previous, previous_start, carry = text, start, view.open_fence
    return views


# --- code identifiers ------------------------------------------------------------------------

IDENTIFIER = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(?:-[A-Za-z0-9_]+)*"  # a name; hyphens inside (package names)
    r"(?:(?:::|\.)[A-Za-z_][A-Za-z0-9_]*)*"  # qualified: a::b, a.b.c
)
_THROWAWAY = re.compile(r"[a-z]{1,2}\d*|[A-Z]\d*")  # x, s1, r2, T: placeholders, not names
_GENERIC = re.compile(r"<[A-Za-z0-9_,\s'&:<>\[\]]*>$")
KEYWORDS = frozenset(
    "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod "
    "move mut pub ref return self static struct super trait true type unsafe use where while def class import "
    "from pass lambda none null nil undefined var function this new try catch except finally raise throw with "
    "yield and or not is elif print void public private protected package interface extends implements default switch case do goto".split()
)


def code_name(content: str) -> tuple[str, str] | None:
    """(display name, base name) of the identifier an inline code span names, or None.

    ``Rc<T>`` -> ("Rc<T>", "Rc"); ``Rc::clone()`` -> ("Rc::clone", "Rc::clone"); ``&str`` -> ("str", "str");
    ``println!`` -> ("println!", "println"); code that is not one name (``let x = 5;``) -> None.
    """
    text = content.strip()
    text = re.sub(r"^(?:&mut\s+|&|\*|@)", "", text)
    text = re.sub(r"\(\s*\)$", "", text)
    text = text.rstrip(":")
    macro = text.endswith("!")
    if macro:
        text = text[:-1]
    generic = _GENERIC.search(text)
    base = text[:generic.start()] if generic else text
    if not IDENTIFIER.fullmatch(base) or base.lower() in KEYWORDS or _THROWAWAY.fullmatch(base):
        return None
    if generic and (text.count("<") != text.count(">")):
        return None
    return (text + ("!" if macro else ""), base)


def identifier_shaped(name: str) -> bool:
    """Names that only code uses: ``snake_case``, ``a::b``, ``a.b``, ``CamelCase`` with a lower-case run
    between capitals (``RefCell``, ``RunContext``), ``SCREAMING_CASE`` with an underscore."""
    return bool(re.search(r"_|::|\w\.\w", name) or re.fullmatch(r"[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+", name))


# --- name filters ----------------------------------------------------------------------------

_STRUCTURAL = re.compile(
    r"^(?:listing|listings|chapter|chapters|figure|figures|fig|section|sections|table|tables|appendix|example|"
    r"examples|exercise|exercises|step|steps|part|lab|page|pages|line|lines|note|equation|eq|version)\b\.?"
    r"(?:\s*(?:\d[\w.\-–]*|[A-Z](?:\.\d+)*|[IVXLC]+)(?:\s*(?:,|and|&|to|-|–)\s*(?:\d[\w.\-–]*|[A-Z]))*)?$",
    re.I,
)
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+(?:[-+.]\w+)*$", re.I)
_BAD_CHARS = re.compile(r"[=;|\\^~*\"`@#$%{}\[\]<>]|\]\(|<!--|&(?:quot|amp|lt|gt|nbsp)\b|://|\bwww\.")
_PAIRS = {"(": ")", "[": "]", "{": "}", "<": ">"}


def balanced(name: str) -> bool:
    """Brackets and quotes pair up."""
    stack: list[str] = []
    for ch in name:
        if ch in _PAIRS:
            stack.append(_PAIRS[ch])
        elif ch in _PAIRS.values():
            if not stack or stack.pop() != ch:
                return False
    return not stack and name.count('"') % 2 == 0 and name.count("`") % 2 == 0


def reject_name(name: str) -> str | None:
    """Why ``name`` is not an entity name ("fragment", "structure", "version", "empty"), or None.

    Only the code-entity path may keep ``<>`` (generics) and ``::``: it validates names itself.
    """
    text = name.strip()
    if not text or not any(c.isalnum() for c in text):
        return "empty"
    if "\n\n" in text or not balanced(text) or _BAD_CHARS.search(text):
        return "fragment"
    if re.search(r"(?:^|\s)(?:&&|\|\||[-+*/%|<>!]=?|=>|->)(?:\s|$)", text) or re.search(r"\w\(|\)\w", text):
        return "fragment"
    if not (text[0].isalnum() or text[0] in "._'’(") or text[-1] in ",;:(-/&":
        return "fragment"
    if _STRUCTURAL.match(text):
        return "structure"
    if _VERSION.match(text):
        return "version"
    return None


# --- boilerplate -----------------------------------------------------------------------------

_LICENCE_PHRASES = re.compile(
    r"permission is (?:hereby )?granted|free documentation license|general public license|invariant sections|"
    r"front-cover texts?|back-cover texts?|without (?:any )?warrant(?:y|ies)|provided \W?as is\W?|"
    r"licensed under the|all rights reserved|redistribution and use in source and binary forms|"
    r"creative commons|this program is free software|modified versions?|sublicense|licensee|licensor|"
    r"terms and conditions|copyright (?:\(c\)|©|notice|holder)|verbatim cop(?:y|ies)|"
    r"merchantability|fitness for a particular purpose|the (?:above )?copyright notice",
    re.I,
)
_LICENCE_WORDS = re.compile(r"\b(?:licen[cs]e[ds]?|copyright|warrant(?:y|ies)|permission|distribut\w+|verbatim|"
                            r"modif\w+|notices?|sublicens\w+|royalty|infring\w+|liabilit\w+|liable|terms)\b", re.I)


def is_boilerplate(text: str) -> bool:
    """Licence text: several distinct licence phrases, or licence vocabulary dense enough that the
    chunk is about the licence (a one-line "MIT licensed" mention is not)."""
    phrases = {m.group(0).lower() for m in _LICENCE_PHRASES.finditer(text)}
    words = len(re.findall(r"\w+", text))
    if not words:
        return False
    density = len(_LICENCE_WORDS.findall(text)) / words
    return len(phrases) >= 3 or (len(phrases) >= 1 and density >= 0.04) or density >= 0.07


def _licence_signal(text: str) -> bool:
    """A weaker sign: one licence phrase, or some licence vocabulary."""
    words = len(re.findall(r"\w+", text)) or 1
    return bool(_LICENCE_PHRASES.search(text)) or len(_LICENCE_WORDS.findall(text)) / words >= 0.02


def boilerplate_flags(texts: list[str]) -> list[bool]:
    """Which chunks of one document are boilerplate. Licence text runs over several chunks and not
    every chunk of it is dense in licence words, so the document decides too: a document that is
    mostly licence is all licence, and a chunk between two licence chunks, or after one with a
    licence signal of its own, belongs to the same licence section."""
    flags = [is_boilerplate(t) for t in texts]
    if sum(flags) >= max(2, 0.4 * len(texts)):
        return [True] * len(texts)
    out = list(flags)
    for i in range(1, len(texts)):
        if flags[i] or not out[i - 1]:
            continue
        after = flags[i + 1] if i + 1 < len(texts) else False
        out[i] = after or _licence_signal(texts[i])
    return out


def repeated_chunks(documents: list[list[str]], min_documents: int) -> set[str]:
    """Chunk texts that occur verbatim (whitespace folded) in ``min_documents`` or more documents:
    navigation, footers and notices copied into every page."""
    if min_documents < 2 or len(documents) < min_documents:
        return set()
    seen: dict[str, set[int]] = {}
    for d, texts in enumerate(documents):
        for text in texts:
            key = " ".join(text.split())
            if len(key) >= 20:
                seen.setdefault(key, set()).add(d)
    return {k for k, docs in seen.items() if len(docs) >= min_documents}
