"""Loaders: files (md, mdx, rst, adoc, ipynb, txt, html, pdf, docx, jsonl) to :class:`Document`, and directory walking.

Parsing is done by well-kept libraries (PyYAML, BeautifulSoup, pypdf, python-docx); HTML and DOCX
are turned into Markdown-like text (``#`` headings) so the markdown chunker keeps their structure.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from graphrag.errors import InvalidInput
from graphrag.ingest.mdx import mdx_to_markdown
from graphrag.ingest.textprep import fence_indented_code, heading_text, markdown_title, pipe_table
from graphrag.models import Document

log = logging.getLogger(__name__)

TYPES: dict[str, str] = {
    ".md": "md", ".markdown": "md", ".mkd": "md", ".mdown": "md", ".mdx": "mdx", ".rst": "rst", ".rest": "rst", ".ipynb": "ipynb",
    ".adoc": "adoc", ".asciidoc": "adoc",
    ".txt": "txt", ".text": "txt",
    ".html": "html", ".htm": "html", ".pdf": "pdf", ".docx": "docx", ".jsonl": "jsonl",
}
# Files without an extension that projects keep as plain text.
TEXT_NAMES = frozenset({"readme", "license", "licence", "copying", "changelog", "changes", "history", "news",
                        "authors", "contributors", "notice", "install", "contributing", "todo", "faq"})
IGNORED_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", "dist", "build"}
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S | re.M)
_TOML_FRONT_MATTER = re.compile(r"\A\+\+\+[ \t]*\r?\n(.*?)(?:\r?\n)?^\+\+\+[ \t]*(?:\r?\n|\Z)", re.S | re.M)


class LoadError(InvalidInput):
    """A file that cannot be read: reported in ``failed`` with this message (HTTP 422)."""

    status_code = 422
    title = "Unprocessable content"


class Unsupported(InvalidInput):
    """A file type we do not read: reported in ``skipped``."""


@dataclass(frozen=True)
class Found:
    """A file found by :func:`discover`, with its type."""

    path: Path
    file_type: str


def file_type(path: Path) -> str | None:
    """The loader for a file by its extension; README, LICENSE, CHANGELOG... without one are text."""
    kind = TYPES.get(path.suffix.lower())
    if kind is None and not path.suffix and path.name.lower() in TEXT_NAMES:
        return "txt"
    return kind


def discover(paths: Iterable[Path], file_types: set[str] | None = None) -> tuple[list[Found], list[dict[str, str]]]:
    """Files to ingest under ``paths`` (recursively), and the ones skipped with a reason."""
    found: list[Found] = []
    skipped: list[dict[str, str]] = []

    def consider(path: Path) -> None:
        kind = file_type(path)
        if kind is None:
            skipped.append({"path": str(path), "reason": f"unsupported file type '{path.suffix or path.name}'"})
        elif file_types and kind not in file_types:
            skipped.append({"path": str(path), "reason": f"file type '{kind}' not in --file-types"})
        else:
            found.append(Found(path, kind))

    for root in paths:
        if root.is_file():
            consider(root)
        elif root.is_dir():
            for path in sorted(_walk(root)):
                consider(path)
        else:
            skipped.append({"path": str(root), "reason": "no such file or directory"})
    return found, skipped


def _walk(root: Path) -> Iterator[Path]:
    for child in root.iterdir():
        if child.name.startswith(".") or child.name in IGNORED_DIRS:
            continue
        if child.is_dir() and not child.is_symlink():
            yield from _walk(child)
        elif child.is_file():
            yield child


def _decode(data: bytes, path: Path) -> str:
    if b"\x00" in data:
        raise LoadError(f"{path.name}: binary content (NUL bytes) in a text file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoadError(f"{path.name}: not valid UTF-8 text (byte {exc.start})") from None


def _front_matter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    """Front matter (YAML between ``---`` lines, or TOML between ``+++``) as metadata, and the text with
    it blanked. Front matter that does not parse to a mapping (a thematic break opening the file, a
    colon in an unquoted value) is left in the text, with a warning: the document is still read."""
    match = _FRONT_MATTER.match(text)
    toml = match is None
    if toml:
        match = _TOML_FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        if toml:
            import tomllib

            data: Any = tomllib.loads(match.group(1))
        else:
            data = yaml.safe_load(match.group(1)) or {}
        if not isinstance(data, dict):
            raise ValueError("not a mapping")
        meta = _jsonable(data)
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        reason = (str(exc).splitlines() or [type(exc).__name__])[0][:200]
        log.warning("%s: front matter not read, kept as text (%s)", path.name, reason)
        return {}, text
    # Blank out the front matter instead of cutting it, so chunk offsets still index the file text.
    return meta, re.sub(r"[^\n]", " ", text[:match.end()]) + text[match.end():]


# Front matter larger than this (YAML aliases can expand a few hundred bytes into millions of nodes)
# is not metadata.
_MAX_METADATA_NODES = 10_000
_MAX_METADATA_DEPTH = 20


def _jsonable(value: Any) -> Any:
    """``value`` as JSON data: keys as strings, dates and other scalars as strings; ValueError past
    :data:`_MAX_METADATA_NODES` nodes or :data:`_MAX_METADATA_DEPTH` levels."""
    budget = [_MAX_METADATA_NODES]

    def convert(item: Any, depth: int) -> Any:
        budget[0] -= 1
        if budget[0] < 0 or depth > _MAX_METADATA_DEPTH:
            raise ValueError("metadata too large or too deeply nested")
        if isinstance(item, dict):
            return {str(k): convert(v, depth + 1) for k, v in item.items()}
        if isinstance(item, (list, tuple, set)):
            return [convert(v, depth + 1) for v in item]
        if item is None or isinstance(item, (bool, int, float, str)):
            return item
        return str(item)

    return json.loads(json.dumps(convert(value, 0)))


def _front_matter_title(meta: dict[str, Any]) -> str:
    """A front matter ``title`` as text: one string (a mapping of translations gives its first)."""
    title = meta.pop("title", "")
    if isinstance(title, dict):
        title = next((v for v in title.values() if isinstance(v, str)), "")
    return heading_text(title) if isinstance(title, str) else ""


def _file_title(path: Path) -> str:
    """A title from the file name: its stem, or the folder's name for a README or an index page."""
    if path.stem.lower() in ("readme", "index") and path.parent.name not in ("", ".", "/"):
        return path.parent.name
    return path.stem


def load_markdown(path: Path, data: bytes) -> list[Document]:
    """A Markdown (or MDX) file: front matter as metadata, the rest as the text (indented code blocks
    fenced; an MDX file's JSX blanked in place)."""
    text = _decode(data, path)
    meta, body = _front_matter(text, path)
    if path.suffix.lower() == ".mdx":
        body = mdx_to_markdown(body)  # MDX has no indented code blocks
    else:
        body = fence_indented_code(body)
    title = _front_matter_title(meta) or markdown_title(body) or _file_title(path)
    return [Document(source=str(path), title=title, text=body, kind="markdown", metadata=meta)]


def load_rst(path: Path, data: bytes) -> list[Document]:
    """A reStructuredText file (Sphinx docs, Python READMEs): docutils renders it, with Sphinx's roles and
    directives read leniently (:mod:`graphrag.ingest.rst`), and the HTML loader reads the page."""
    from graphrag.ingest.rst import rst_to_html

    text = _decode(data, path)
    try:
        page = rst_to_html(text)
    except InvalidInput as exc:
        raise LoadError(f"{path.name}: {exc}") from None
    except RecursionError:
        raise LoadError(f"{path.name}: unreadable reStructuredText (nested too deeply)") from None
    except Exception as exc:  # noqa: BLE001 - docutils' own errors, and plain ones from odd input
        raise LoadError(f"{path.name}: unreadable reStructuredText ({type(exc).__name__}: "
                        f"{' '.join(str(exc).split())[:200]})") from None
    docs = load_html(path, page.encode())
    if "<title></title>" in page:  # no one top heading (a changelog, a PEP): the file names it
        docs = [replace(d, title=_file_title(path)) for d in docs]
    return docs


def load_asciidoc(path: Path, data: bytes) -> list[Document]:
    """An AsciiDoc file (Antora sites, Spring, Neo4j, Hibernate docs) read as the Markdown its rendered page
    shows (:mod:`graphrag.ingest.asciidoc`); its header's description, keywords and author as metadata."""
    from graphrag.ingest.asciidoc import asciidoc_markdown

    text = _decode(data, path)
    try:
        body, meta = asciidoc_markdown(text)
    except RecursionError:
        raise LoadError(f"{path.name}: unreadable AsciiDoc (nested too deeply)") from None
    return [Document(source=str(path), title=markdown_title(body) or _file_title(path), text=body, kind="markdown",
                     metadata=meta)]


def load_notebook(path: Path, data: bytes) -> list[Document]:
    """A Jupyter notebook: Markdown cells and code cells (fenced, in the kernel's language) as Markdown;
    outputs and raw cells left out (:mod:`graphrag.ingest.notebook`)."""
    from graphrag.ingest.notebook import notebook_markdown

    try:
        body, meta = notebook_markdown(data)
    except InvalidInput as exc:
        raise LoadError(f"{path.name}: {exc}") from None
    return [Document(source=str(path), title=markdown_title(body) or _file_title(path), text=body, kind="markdown",
                     metadata=meta)]


def load_text(path: Path, data: bytes) -> list[Document]:
    text = _decode(data, path)
    # A short first line that is not a sentence reads as a title (rules of "=" or "-" and the columns
    # of an RFC header are not one); otherwise the file name.
    first = next((ln.strip() for ln in text.splitlines() if re.search(r"\w", ln)), "")
    first = re.split(r"\s{3,}", first)[0]
    title = first if 0 < len(first) <= 80 and not first.endswith((".", ",", ";", ":")) else _file_title(path)
    return [Document(source=str(path), title=title, text=text, kind="text")]


# Limits on hostile HTML. bs4 keeps about 1 KB per element, so the element cap bounds memory (~0.5 GB);
# a legitimate page has far fewer (a very long Wikipedia article: ~50,000).
HTML_MAX_ELEMENTS = 500_000
# Elements whose text is one block of the output; a <p>/<blockquote> inside an owner is part of its text.
_HTML_BLOCKS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "blockquote", "dt", "dd",
                          "figcaption", "summary"})
_HTML_OWNERS = frozenset({"li", "dt", "dd", "figcaption", "summary", "blockquote"})
# Block-level elements: loose text on either side of one belongs to different blocks. (A <label> is
# inline, but tab labels sit side by side with nothing between them: "PythonBash".)
_HTML_BREAKS = frozenset({"address", "article", "aside", "body", "br", "details", "div", "dl", "fieldset", "figure",
                          "footer", "header", "hr", "html", "label", "main", "ol", "section", "table", "tbody", "td",
                          "tfoot", "th", "thead", "tr", "ul"}) | _HTML_BLOCKS
_HTML_INLINE_CODE = frozenset({"code", "kbd", "samp", "tt"})
# Never article text: scripts, embedded objects, form controls, site navigation and footers.
_HTML_SKIP = frozenset({"head", "script", "style", "noscript", "template", "svg", "iframe", "object", "embed",
                        "canvas", "nav", "footer", "button", "select", "input", "textarea", "option", "dialog"})
_HTML_SKIP_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "dialog",
                              "alertdialog", "menu", "menubar", "toolbar", "tooltip", "doc-backlink"})
# class/id words that name page furniture (a readability-style rule, applied to containers only: an inline
# <a class="header"> wrapping a heading's text stays). The second set only outside a main landmark, where a
# "header" is the site's banner rather than the article's own title block.
_HTML_CHROME = frozenset({"nav", "navbar", "navigation", "menu", "menubar", "sidebar", "sidenav", "breadcrumb",
                          "breadcrumbs", "toc", "pagination", "pager", "cookie", "cookies", "share", "sharing",
                          "social", "skip", "topbar", "bottombar"})
_HTML_CHROME_OUTSIDE_MAIN = frozenset({"header", "footer", "banner", "masthead", "copyright"})
_HTML_CONTAINERS = frozenset({"div", "section", "ul", "ol", "dl", "aside", "header", "table"})
# Whole class names that mark furniture on any element, inline ones included: text only screen readers
# get, line-number gutters of highlighted code, heading self-links, footnote back-links, "skip to content"
# and "back to top" links, copy buttons, rustdoc's version-and-source corner and its "Expand description".
_HTML_FURNITURE_CLASSES = frozenset({
    "sr-only", "visually-hidden", "visuallyhidden", "screen-reader-text", "screen-reader-only",
    "linenos", "linenodiv", "lineno", "linenumber", "line-number", "line-numbers", "rouge-gutter",
    "headerlink", "hash-link", "anchor-link", "anchorjs-link", "header-anchor", "heading-anchor",
    "footnote-backref", "fn-backref", "skip-link", "skip-to-content", "skip-to-main", "back-to-top",
    "copybtn", "copy-button", "md-clipboard", "rightside", "hideme", "since"})
_HEADING_LINK_MARKS = frozenset({"¶", "#", "§", "🔗", "∞", "link"})
_HEADING_LINK_LABELS = ("direct link", "permalink", "link to this", "anchor link")
_TITLE_SEPARATORS = re.compile(r"\s+(?:-|\||–|—|·|::|»)\s+")
# Characters that show nothing: zero-width spaces and joiners, soft hyphens, byte-order marks.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\xad"))
# Class names that are a code block's language by themselves (rustdoc: <pre class="rust">; pandoc:
# <pre class="sourceCode python">).
_CODE_LANGUAGES = frozenset({"rust", "python", "java", "javascript", "typescript", "go", "c", "cpp", "csharp",
                             "bash", "shell", "sh", "console", "json", "yaml", "toml", "sql", "html", "xml", "css",
                             "ruby", "kotlin", "swift", "scala", "haskell", "php", "perl", "lua", "r"})
# Javadoc (17+) lays out its summary tables as CSS grids of <div>s: "three-column-summary".
_GRID_TABLE = re.compile(r"(two|three|four|five)-column-summary")
_GRID_COLUMNS = {"two": 2, "three": 3, "four": 4, "five": 5}
# Nested lists are indented in the text up to this many levels; deeper ones stay at that indentation.
_LIST_INDENT_LEVELS = 6


def load_html(path: Path, data: bytes) -> list[Document]:
    """An HTML page's main content as Markdown-like text: headings, lists, code blocks and pipe tables.

    The article is the page's main landmark (``<main>``, ``role="main"``, or its one ``<article>``);
    navigation, banners, footers, sidebars, hidden help popups and scripts are dropped. A page whose
    landmark holds no text (a search page filled in by script) has no text content.
    """
    from bs4 import BeautifulSoup

    if b"\x00" in data:
        raise LoadError(f"{path.name}: binary content (NUL bytes) in an HTML file")
    elements = data.count(b"<") - data.count(b"</")  # an upper bound on start tags, counted before parsing
    if elements > HTML_MAX_ELEMENTS:
        raise LoadError(f"{path.name}: about {elements} HTML elements is over the {HTML_MAX_ELEMENTS} limit")
    # lxml, not the stdlib "html.parser": on Python < 3.13.4 html.parser is quadratic on crafted input
    # (60 KB of "<a " took ~50 s), and it nests every unclosed <p>/<li>, where lxml closes them as
    # browsers do. lxml is always installed (python-docx needs it).
    soup = BeautifulSoup(data, "lxml")
    title_tag = soup.find("title")
    page_title = title_tag.get_text(" ", strip=True).translate(_INVISIBLE) if title_tag else ""
    root, landmark = _main_content(soup)
    blocks = _html_blocks(root, landmark)
    if not blocks and root is not soup and root.name == "article":  # an empty article: read the landmark around it
        blocks = _html_blocks(soup, False)
    body = _join_blocks([_render_block(kind, text) for kind, text in blocks])
    if not body.strip() and not landmark:
        body = soup.get_text("\n", strip=True)
    title = _html_title(page_title, blocks) or markdown_title(body) or _file_title(path)
    meta = {}
    for m in soup.find_all("meta"):
        name, content = m.get("name"), m.get("content")
        if name in ("author", "description", "keywords") and content:
            meta[name] = content
    return [Document(source=str(path), title=title, text=body, kind="markdown", metadata=meta)]


def _html_title(page_title: str, blocks: list[tuple[str, str]]) -> str:
    """The article's own <h1>; else the page <title> less a site-name part when one part is the first heading."""
    headings = [text for kind, text in blocks if kind in ("h1", "h2", "h3", "h4", "h5", "h6") and text]
    h1 = next((text for kind, text in blocks if kind == "h1" and text), "")
    if h1:
        return h1
    parts = _TITLE_SEPARATORS.split(page_title)
    if headings and len(parts) > 1 and headings[0] in parts:
        return headings[0]
    return page_title


def _main_content(soup: Any) -> tuple[Any, bool]:
    """The element holding the page's article, and whether it is a main landmark (else the whole page)."""
    from bs4.element import Tag

    def is_main(tag: Any) -> bool:
        return isinstance(tag, Tag) and (tag.name == "main" or tag.get("role") == "main")

    root = soup.find(is_main)
    if root is None:
        articles = soup.find_all("article", limit=2)
        return (articles[0], True) if len(articles) == 1 else (soup, False)
    while (inner := root.find(is_main)) is not None:  # a role="main" article inside <main>: the narrower one
        root = inner
    articles = root.find_all("article", limit=2)
    return (articles[0] if len(articles) == 1 else root), True


def _count(value: Any, default: int, limit: int) -> int:
    """An attribute's small count (``start``, ``rowspan``, ``w:val``): ASCII digits only, at most ``limit``."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,7}", value.strip()):
        return min(int(value), limit)
    return default


def _classes(node: Any) -> list[str]:
    value = node.attrs.get("class") or ()
    return [value] if isinstance(value, str) else list(value)


def _skip_html(node: Any, landmark: bool, in_article: bool) -> bool:
    """Whether an element is page furniture rather than article text (its whole subtree is dropped)."""
    name = node.name
    if name in _HTML_SKIP:
        return True
    attrs = node.attrs
    if not attrs:
        return name in ("header", "aside") and not (landmark or in_article)
    if "hidden" in attrs or attrs.get("aria-hidden") == "true" or attrs.get("role") in _HTML_SKIP_ROLES:
        return True
    style = attrs.get("style")
    if isinstance(style, str) and "display:none" in style.replace(" ", "").lower():
        return True
    if name in ("header", "aside") and not (landmark or in_article):
        return True
    classes = _classes(node)
    if not _HTML_FURNITURE_CLASSES.isdisjoint(classes):
        return True
    if name == "a":  # a heading's self-link: "¶", "#", or an empty one labelled "Direct link to ..."
        href = attrs.get("href")
        if "src" in classes:  # rustdoc's "Source" link
            return True
        if not (isinstance(href, str) and href.startswith("#")):
            return False
        label = attrs.get("aria-label")
        if isinstance(label, str) and label.lower().startswith(_HEADING_LINK_LABELS):
            return True
        text = node.get_text().translate(_INVISIBLE).strip() if len(node.contents) <= 1 else None
        return text is not None and (text in _HEADING_LINK_MARKS or (not text and "anchor" in classes))
    if name in _HTML_CONTAINERS:
        words: set[str] = set()
        for item in [*classes, str(attrs.get("id") or "")]:
            words.update(re.split(r"[-_\s]+", item.lower()))
        if words & _HTML_CHROME or (not landmark and not in_article and words & _HTML_CHROME_OUTSIDE_MAIN):
            return True
    return False


class _Block:
    """A block of the output being collected. Once a nested block has been put after it (a code block
    in a list item), it is *sealed*: the rest of its text goes to a continuation block after that one."""

    __slots__ = ("kind", "parts", "sealed", "then", "tail")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.parts: list[str] = []
        self.sealed = False
        self.then: _Block | None = None
        self.tail: _Block = self  # on a chain's first block: its last one seen (walks stay short)


class _Frame:
    """One element being walked: its children left, the block its text goes to, and its context."""

    __slots__ = ("children", "block", "in_pre", "in_owner", "in_article", "closing", "code_at", "list", "indent")

    def __init__(self, children: Iterator[Any], block: _Block | None, in_pre: bool, in_owner: bool,
                 in_article: bool, list_: list[Any] | None, indent: str) -> None:
        self.children = children
        self.block = block
        self.in_pre = in_pre
        self.in_owner = in_owner
        self.in_article = in_article
        self.closing = ""  # text to add to the block on leaving the element
        self.code_at = -1  # inline code: where its opening backticks are in the block's parts
        self.list = list_  # the innermost list: [ordered, items so far, indentation of its items]
        self.indent = indent  # where a list inside this element is indented to


def _html_blocks(root: Any, landmark: bool, cell: bool = False) -> list[tuple[str, str]]:
    """``(kind, text)`` of each block of ``root``, in document order, in one pass over the tree.

    Kinds are the block tags (``h2``, ``p``, ``pre python``...), ``table`` (already a pipe table) and
    ``li <indent><marker>`` (``li   2. ``); in a table ``cell`` a block of symbols alone ("<>") is kept.
    Each piece of text belongs to its innermost block only;
    loose text between blocks is a ``p`` of its own, and a block's text after a nested block (a list
    item's sentence after its code block) is a block of its own after that one. Inline tags add no
    spaces (``<em>a</em>, b`` stays "a, b"); inline code gets backticks.
    The walk keeps its own stack, so 100,000 nested elements cannot raise RecursionError; copying a
    nested block's text into each enclosing one would be quadratic in the nesting depth.
    """
    from bs4.element import CData, NavigableString, Tag

    out: list[_Block] = []
    loose: list[_Block | None] = [None]  # the open block of loose text, if any

    def target(block: _Block) -> _Block:
        """Where text for ``block`` goes now: the block, or the continuation after its nested blocks."""
        head, block = block, block.tail
        while block.sealed:
            if block.then is None:
                block.then = _Block("blockquote" if head.kind == "blockquote" else "p")
                out.append(block.then)
            block = block.then
        head.tail = block
        return block

    def start(block: _Block, parent: _Block | None) -> None:
        """Put ``block`` next; a block it is nested in continues after it."""
        if parent is not None:
            last = parent.tail
            while last.then is not None:
                last = last.then
            parent.tail = last
            last.sealed = True
        out.append(block)

    stack = [_Frame(iter(root.contents), None, False, False, False, None, "")]
    while stack:
        frame = stack[-1]
        node = next(frame.children, None)
        if node is None:
            stack.pop()
            if frame.block is not None:
                if frame.code_at >= 0:
                    _close_code(target(frame.block), frame)
                elif frame.closing:
                    target(frame.block).parts.append(frame.closing)
            continue
        current, in_pre = frame.block, frame.in_pre
        if isinstance(node, Tag):
            name = node.name
            if _skip_html(node, landmark, frame.in_article):
                continue
            if name in _HTML_BREAKS:
                loose[0] = None
                if current is not None:
                    target(current).parts.append("\n" if in_pre and name == "br" else "" if in_pre else " ")
            if not in_pre and name in ("table", "div"):
                table = _html_table(node) if name == "table" else _grid_table(node)
                if table is not None:
                    caption, rows = table
                    if caption:
                        start(_Block("p"), current)
                        out[-1].parts.append(caption)
                    start(_Block("table"), current)
                    out[-1].parts.append(rows)
                    continue
            child = _Frame(iter(node.contents), current, in_pre or name == "pre", frame.in_owner or name in _HTML_OWNERS,
                           frame.in_article or name in ("article", "section"), frame.list, frame.indent)
            if name in ("ul", "ol") and not in_pre:
                number = _count(node.get("start"), 1, 10**6) - 1 if name == "ol" else 0
                child.list = [name == "ol", number, frame.indent]
            if not in_pre and name in _HTML_BLOCKS and (not frame.in_owner or name not in ("p", "blockquote")):
                kind = name
                if name == "pre":
                    kind = "pre " + _code_language(node)
                elif name == "li":
                    kind, child.indent = _list_item(frame.list)
                child.block = _Block(kind)
                start(child.block, current)
            elif name in _HTML_INLINE_CODE and not in_pre:
                if current is None:  # code in loose text: it joins (or opens) the loose block
                    current = loose[0]
                    if current is None:
                        current = loose[0] = _Block("p")
                        out.append(current)
                    child.block = current
                parts = target(current).parts
                child.code_at = len(parts)
                parts.append("`")
            elif name in _HTML_BREAKS and current is not None and not in_pre:
                child.closing = " "
            elif name == "a" and current is not None and (node.get("role") == "doc-noteref"
                                                          or "footnote-ref" in _classes(node)):
                if not node.get_text().lstrip().startswith("["):  # "boils at 100 degrees.[1]"
                    target(current).parts.append("[")
                    child.closing = "]"
            stack.append(child)
        elif type(node) is NavigableString or isinstance(node, CData):
            text = str(node).translate(_INVISIBLE)
            if current is not None:
                target(current).parts.append(text)
            elif loose[0] is not None:  # white space between inline elements still separates words
                loose[0].parts.append(text)
            elif text.strip():
                opened = loose[0] = _Block("p")
                out.append(opened)
                opened.parts.append(text)
    blocks: list[tuple[str, str]] = []
    for block in out:
        kind, parts = block.kind, block.parts
        if kind.startswith("pre"):
            text = re.sub(r"\A(?:[ \t]*\n)+", "", "".join(parts)).rstrip()
        elif kind == "table":
            text = parts[0]
        else:
            text = " ".join("".join(parts).split())
        if not text.strip() or not (cell or kind == "table" or kind.startswith("pre") or any(c.isalnum() for c in text)):
            continue  # nothing, or only a separator left from furniture ("·", "|"); in a table cell "<>" is a value
        if kind == "dd" and blocks and blocks[-1][0] == "dt":  # "Returns: true if ..." stays one line
            term = blocks.pop()[1]
            blocks.append(("p", term + (" " if term.endswith(":") else ": ") + text))
            continue
        blocks.append((kind, text))
    return blocks


def _list_item(lst: list[Any] | None) -> tuple[str, str]:
    """A list item's kind (``li`` + indentation + marker) and where a list inside it is indented to."""
    if lst is None:  # an <li> outside any list
        return "li - ", "  "
    lst[1] += 1
    marker = f"{lst[1]}. " if lst[0] else "- "
    indent = lst[2]
    inner = indent + " " * len(marker) if indent.count(" ") < 4 * _LIST_INDENT_LEVELS else indent
    return f"li {indent}{marker}", inner


def _close_code(block: _Block, frame: _Frame) -> None:
    """Close an inline code span; a span holding backticks gets a longer fence, padded with spaces."""
    parts = block.parts
    at = frame.code_at
    content = "".join(parts[at + 1:]) if at < len(parts) and parts[at] == "`" else ""
    if "`" not in content:
        parts.append("`")
        return
    fence = "`" * (max(len(run) for run in re.findall(r"`+", content)) + 1)
    parts[at] = fence + " "
    parts.append(" " + fence)


def _code_language(pre: Any) -> str:
    """A code block's language: ``language-rust`` / ``lang-rust`` on the <pre> or its <code>, a wrapper's
    ``highlight-python`` (Sphinx) or ``language-python`` (MkDocs), or a bare name (``<pre class="rust">``)."""
    candidates = [pre, pre.find("code")]
    parent = pre.parent
    for _ in range(3):  # the highlighter's wrappers
        if parent is None or parent.name not in ("div", "figure", "section"):
            break
        candidates.append(parent)
        parent = parent.parent
    for tag in candidates:
        if tag is None:
            continue
        for cls in _classes(tag):
            prefix, _, rest = cls.partition("-")
            if prefix in ("language", "lang") and rest or prefix == "highlight" and rest not in ("", "default", "none"):
                return re.sub(r"[^\w+#.-].*", "", rest)
    for tag in candidates[:2]:
        if tag is not None:
            known = [cls for cls in _classes(tag) if cls.lower() in _CODE_LANGUAGES]
            if known:
                return known[0].lower()
    return ""


def _join_blocks(blocks: list[str]) -> str:
    """Blocks separated by blank lines, except consecutive list items (one list, one line each)."""
    out: list[str] = []
    for block in blocks:
        if out:
            out.append("\n" if _LIST_ITEM.match(block) and _LIST_ITEM.match(out[-1]) else "\n\n")
        out.append(block)
    return "".join(out)


_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]")


def _render_block(kind: str, text: str) -> str:
    if kind[0] == "h" and kind[1:].isdigit():
        return "#" * int(kind[1]) + " " + text
    if kind.startswith("pre"):
        fence = "`" * max(3, *(len(run) + 1 for run in re.findall(r"`{3,}", text))) if "```" in text else "```"
        return f"{fence}{kind[4:]}\n{text}\n{fence}"
    if kind == "table":
        return text
    text = _escape_markdown(text)
    if kind.startswith("li "):
        return kind[3:] + text
    if kind == "blockquote":
        return "> " + text
    return text


_MARKDOWN_START = re.compile(r"(?:#{1,6}(?:\s|$)|[-*+]\s|>|```|~~~|\|)")
_ORDERED_START = re.compile(r"(\d{1,9})([.)]\s)")


def _escape_markdown(text: str) -> str:
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


# A cell this long means a page laid out with a table, not a table of data.
_LAYOUT_CELL_CHARS = 2000
# Highlighted code laid out as a table: a line-number column beside the code.
_CODE_TABLES = frozenset({"highlighttable", "rouge-table", "linenotable"})


def _html_table(table: Any) -> tuple[str, str] | None:
    """``(caption, pipe table)`` for a data table; None for a layout table (read as ordinary blocks).

    A cell spanning rows (``rowspan``) is repeated in each of them, so every row reads whole; one
    spanning columns adds empty cells.
    """
    if (table.get("role") in ("presentation", "none") or table.find("table") is not None
            or not _CODE_TABLES.isdisjoint(_classes(table))):
        return None
    rows: list[list[str]] = []
    spanned: dict[int, tuple[str, int]] = {}  # column -> (text, rows still to fill)
    for tr in table.find_all("tr"):
        cells: list[str] = []

        for cell in tr.find_all(("td", "th"), recursive=False):
            _fill_spanned(cells, spanned)
            if cell.find("pre") is not None and not {"linenos", "rouge-gutter"}.isdisjoint(_classes(cell)):
                return None  # highlighted code with a line-number column
            text = _cell_text(cell)
            if len(text) > _LAYOUT_CELL_CHARS:
                return None
            down = _count(cell.get("rowspan"), 1, 1000)
            across = _count(cell.get("colspan"), 1, 50)
            if down > 1:  # each column the cell covers is filled in the rows below
                for k in range(max(across, 1)):
                    spanned[len(cells) + k] = (text if k == 0 else "", down - 1)
            cells.append(text)
            cells.extend([""] * (across - 1))
        _fill_spanned(cells, spanned)
        if cells:
            rows.append(cells)
    if not rows:
        return None
    caption_tag = table.find("caption")
    caption = _cell_text(caption_tag).replace("\\|", "|") if caption_tag is not None else ""
    return caption, pipe_table(rows)


def _fill_spanned(cells: list[str], spanned: dict[int, tuple[str, int]]) -> None:
    """Repeat the cells above that span down into this row, at the columns they hold."""
    while len(cells) in spanned:
        column = len(cells)
        text, left = spanned.pop(column)
        cells.append(text)
        if left > 1:
            spanned[column] = (text, left - 1)


def _grid_table(div: Any) -> tuple[str, str] | None:
    """A table laid out as a grid of <div> cells (Javadoc's summaries), or None for any other <div>."""
    from bs4.element import Tag

    match = next((m for cls in _classes(div) if (m := _GRID_TABLE.fullmatch(cls))), None)
    if match is None or div.find(lambda t: t.name == "div" and any(_GRID_TABLE.fullmatch(c) for c in _classes(t))):
        return None  # not a grid, or grids in a grid: read as ordinary blocks (and never recursively)
    children = [c for c in div.children if isinstance(c, Tag) and not _skip_html(c, True, True)]
    caption = ""
    if children and "caption" in _classes(children[0]):  # a caption before the cells
        caption = _cell_text(children.pop(0)).replace("\\|", "|")
    cells = [_cell_text(c) for c in children]
    if not cells:
        return None
    width = _GRID_COLUMNS[match.group(1)]
    return caption, pipe_table([cells[i:i + width] for i in range(0, len(cells), width)])


def _cell_text(cell: Any) -> str:
    """A table cell's text on one line: nested blocks joined by spaces, inline code in backticks, pipes escaped."""
    blocks = _html_blocks(cell, True, cell=True)
    text = " ".join(text.replace("\n", " ") if not kind.startswith("pre") else " ".join(text.split())
                    for kind, text in blocks)
    return text.replace("|", "\\|")


def load_pdf(path: Path, data: bytes) -> list[Document]:
    """A PDF's text page by page (pypdf), ruled tables as pipe tables in place (pdfplumber); ``pages``
    holds each page's span of the text. A PDF locked only against copying or printing (an empty user
    password) is read; one that needs a password to open is a :class:`LoadError`."""
    import io

    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except DependencyError as exc:
                raise LoadError(f"{path.name}: encrypted PDF that needs a cipher not installed ({exc})") from None
            if not opened:
                raise LoadError(f"{path.name}: encrypted PDF (password protected)")
        if len(reader.pages) == 0:
            raise LoadError(f"{path.name}: the PDF has no pages")
        parts: list[str] = []
        pages: list[tuple[int, int]] = []
        offset = 0
        tables = _pdf_tables_by_page(_decrypted(reader) if reader.is_encrypted else data)
        widgets = _Widgets()
        for number, page in enumerate(reader.pages):
            text = tables.get(number) or (page.extract_text() or "").strip()
            answers = _pdf_form_answers(page, text, widgets)
            if answers:
                text = f"{text}\n\n{answers}" if text else answers
            pages.append((offset, offset + len(text)))
            parts.append(text)
            offset += len(text) + 2
        info = reader.metadata
        title = _pdf_title(str(info.title) if info and info.title else "")
        meta: dict[str, Any] = {"pages": len(pages)}
        if info and info.author:
            meta["author"] = str(info.author).replace("\x00", "").strip()
    except LoadError:
        raise
    except RecursionError:
        raise LoadError(f"{path.name}: unreadable PDF (objects nested too deeply)") from None
    # pypdf raises its own errors (PdfReadError, LimitReachedError...) and, on damaged files, plain
    # Python ones from deep inside (AttributeError, IndexError): all of them mean the file cannot be read.
    except Exception as exc:  # noqa: BLE001
        raise LoadError(f"{path.name}: unreadable PDF ({type(exc).__name__}: {str(exc)[:200]})") from None
    body = "\n\n".join(parts)
    if not body.strip():
        raise LoadError(f"{path.name}: the PDF has no extractable text (scanned images need OCR)")
    return [Document(source=str(path), title=title or path.stem, text=body, kind="pdf", metadata=meta,
                     pages=tuple(pages))]


# A form with more fields than this is not a form a person fills in: the rest are not read.
_PDF_MAX_FIELDS = 2_000


@dataclass
class _Widgets:
    """Form widgets read so far in one PDF: each once (pages may share one annotation list), and no
    more than :data:`_PDF_MAX_FIELDS` in all."""

    seen: set[int] = field(default_factory=set)
    read: int = 0


def _pdf_field_value(value: Any, kind: Any, in_list: bool = False) -> str:
    """A form field's value as text: a text or choice field's text, a checked box's or a chosen radio
    button's export name ("Yes", "Option2"), a number; "" for unset, unchecked ("Off"), signatures,
    and anything else (a stream or dictionary is no answer)."""
    from pypdf.generic import ArrayObject, FloatObject, NameObject, NumberObject, TextStringObject

    if value is None or kind == "/Sig":
        return ""
    value = value.get_object() if hasattr(value, "get_object") else value
    if isinstance(value, ArrayObject):  # a multiple-choice list (of values, not of lists)
        return "" if in_list else ", ".join(filter(None, (_pdf_field_value(v, kind, True) for v in value[:100])))
    if isinstance(value, NameObject):
        name = str(value)[1:]
        return "" if name.lower() == "off" else name
    if isinstance(value, (TextStringObject, str, NumberObject, FloatObject)):
        return " ".join(str(value).replace("\x00", "").split())
    return ""


def _pdf_field_label(name: str) -> str:
    """A field's partial name as a label: "topmostSubform[0].Page1[0].full_name[0]" -> "full name"."""
    last = re.sub(r"\[\d+\]", "", name).rsplit(".", 1)[-1]
    return " ".join(last.replace("_", " ").split())


def _pdf_form_answers(page: Any, text: str, widgets: _Widgets) -> str:
    """The filled-in form fields on a page as "Label: value" lines. An interactive form keeps its answers
    in field values, not in the page's text, so a filled-in application would otherwise read blank.
    The label is the field's description (``/TU``) or its name; values already in the page's text (a
    form printed flat) and empty fields are left out."""
    lines: list[str] = []
    seen: set[tuple[str, str]] = set()
    from pypdf.generic import ArrayObject, IndirectObject

    try:
        annotations = page.get("/Annots") or []
        annotations = annotations.get_object() if hasattr(annotations, "get_object") else annotations
        if not isinstance(annotations, ArrayObject):
            return ""
        annotations = list(annotations)
    except Exception:  # noqa: BLE001 - a damaged annotation list: the page's text is still read
        return ""
    for annotation in annotations:
        if widgets.read >= _PDF_MAX_FIELDS:
            break
        if isinstance(annotation, IndirectObject):
            if annotation.idnum in widgets.seen:
                continue
            widgets.seen.add(annotation.idnum)
        try:
            node = annotation.get_object()
            if node.get("/Subtype") != "/Widget":
                continue
            widgets.read += 1
            # /T, /TU, /V and /FT are inherited: a widget of a radio group or of a field shown twice
            # holds only its place on the page, and its parent field the rest.
            found: dict[str, Any] = {}
            for _ in range(16):
                for key in ("/T", "/TU", "/V", "/FT"):
                    if key not in found and key in node:
                        found[key] = node[key]
                parent = node.get("/Parent")
                if parent is None:
                    break
                node = parent.get_object()
            value = _pdf_field_value(found.get("/V"), found.get("/FT"))
            label = " ".join(str(found.get("/TU") or "").split()) or _pdf_field_label(str(found.get("/T") or ""))
        except Exception:  # noqa: BLE001 - one damaged field does not hide the others
            continue
        if not value or (len(value) >= 4 and value in text) or (label, value) in seen:
            continue
        seen.add((label, value))
        lines.append(f"{label}: {value}" if label else value)
    return "\n".join(lines)


def _decrypted(reader: Any) -> bytes:
    """An opened encrypted PDF written out plain, for the table finder (pdfminer fails on some locks
    pypdf opens, such as a negative permissions value); b"" if that fails (pypdf's text then)."""
    import io

    from pypdf import PdfWriter

    try:
        out = io.BytesIO()
        PdfWriter(clone_from=reader).write(out)
        return out.getvalue()
    except Exception as exc:  # noqa: BLE001 - the text is still read, without tables
        log.debug("PDF not rewritten for table detection: %s: %s", type(exc).__name__, exc)
        return b""


# Titles that authoring tools write for a document nobody titled.
_PLACEHOLDER_TITLES = frozenset({"untitled", "untitled document", "title", "document", "model", "slide 1",
                                 "powerpoint presentation", "microsoft word document", "no title", "none"})
_TITLE_TOOL_PREFIX = re.compile(r"^(?:Microsoft (?:Word|PowerPoint|Excel) - |Word - )", re.I)
_TITLE_FILE_NAME = re.compile(r"^[\w .,()+-]*\.(?:docx?|rtf|odt|pptx?|xlsx?|pdf|txt|html?|exe|indd|ps|eps|tex|qxd|pub)$",
                              re.I)


def _pdf_title(raw: str) -> str:
    """A PDF's metadata title, or "" where it is a placeholder or a file name (the file's name is used)."""
    title = " ".join(_TITLE_TOOL_PREFIX.sub("", raw.replace("\x00", "")).split())
    if _TITLE_FILE_NAME.match(title) or title.lower() in _PLACEHOLDER_TITLES:
        return ""
    if len(title) < 3 and not any(ord(c) > 0x2E80 for c in title):  # "x", "1"; one CJK character is a word
        return ""
    if not any(c.isalpha() for c in title):  # "88300 162..177"
        return ""
    return title


def _pdf_tables_by_page(data: bytes) -> dict[int, str]:
    """Pages that hold ruled tables, as their text with each table as a Markdown pipe table in place.

    pypdf flattens a table into loose words ("Max pressure 42 bar"), losing which value is in which column;
    pdfplumber finds ruled tables from the page's lines. Only pages with a table are re-read this way, so
    other pages keep pypdf's text, and so do pages where the tables would lose more than they give:
    rotated pages, text in columns (pdfplumber reads lines straight across), and tables whose rows hold
    several rows of values each. A PDF pdfplumber cannot parse simply keeps pypdf's text.
    """
    import io

    import pdfplumber

    found: dict[int, str] = {}
    try:
        if not data:
            return {}
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            for number, page in enumerate(pdf.pages):
                if not (page.rotation or 0) % 360 and (page.lines or page.rects):
                    text = _pdf_page_with_tables(page)
                    if text is not None:
                        found[number] = text
                page.close()  # drop the page's parsed layout: long manuals stay in bounded memory
    except Exception as exc:  # noqa: BLE001 - pdfminer raises many types on odd files; pypdf's text is still good
        log.debug("PDF table detection skipped: %s: %s", type(exc).__name__, exc)
        return {}
    return found


# A cell of more lines than this is a page laid out in boxes, not a table cell.
_PDF_CELL_MAX_LINES = 12


def _pdf_table_rows(table: Any) -> list[list[str]] | None:
    """A table's rows for a pipe table, or None where it is no data table: one column (a frame around
    the page) or a cell of a whole section. A row whose filled cells all hold the same number (3 or
    more) of lines holds that many rows' values (ruling coarser than the text: "Alabama Alaska
    Arizona | 18,870 209 2,303"): it becomes that many rows, line by line."""
    raw = [[(cell or "").strip() for cell in row] for row in table.extract()]
    raw = [row for row in raw if any(row)]
    if len(raw) < 2 or max(len(row) for row in raw) < 2:
        return None
    rows: list[list[str]] = []
    for row in raw:
        lines = [cell.splitlines() for cell in row]
        counts = {len(cell) for cell in lines if cell}
        if max(counts) > _PDF_CELL_MAX_LINES:
            return None
        if len(counts) == 1 and (k := counts.pop()) >= 3 and sum(1 for cell in row if cell) >= 2:
            rows += [[cell[i] if cell else "" for cell in lines] for i in range(k)]
        else:
            rows.append(row)
    return [[" ".join(cell.split()).replace("|", "\\|") for cell in row] for row in rows]


def _pdf_in_columns(page: Any, words: list[dict[str, Any]]) -> bool:
    """Whether the page's text (outside its tables) runs in columns: a gutter no word crosses."""
    lines = {round(w["top"]) for w in words}
    if len(lines) < 15:
        return False
    width = float(page.width)
    covered = bytearray(int(width) + 2)
    for w in words:
        start, end = max(0, int(w["x0"])), min(len(covered), int(w["x1"]) + 1)
        covered[start:end] = b"\x01" * max(0, end - start)
    lo, hi = int(width * 0.25), int(width * 0.75)
    run = 0
    for x in range(lo, hi):
        run = run + 1 if not covered[x] else 0
        if run >= 6:  # a gutter of 6 pt or more: columns
            left = sum(1 for w in words if w["x1"] <= x)
            right = sum(1 for w in words if w["x0"] >= x)
            if left >= 20 and right >= 20:
                return True
    return False


def _pdf_page_with_tables(page: Any) -> str | None:
    """The page's text lines outside its tables, and the tables as pipe tables, in reading order by
    height; None where the page has no data table or its text runs in columns."""
    tables: list[tuple[Any, list[list[str]]]] = []
    for table in page.find_tables():
        rows = _pdf_table_rows(table)
        if rows is not None:
            tables.append((table, rows))
    # A table inside another one's box (a frame drawn around tables) would repeat their text.
    boxes = [t.bbox for t, _ in tables]
    tables = [(t, rows) for t, rows in tables
              if not any(b != t.bbox and b[0] <= t.bbox[0] and b[1] <= t.bbox[1] and b[2] >= t.bbox[2]
                         and b[3] >= t.bbox[3] for b in boxes)]
    if not tables:
        return None
    boxes = [t.bbox for t, _ in tables]

    def outside(obj: dict[str, Any]) -> bool:
        mid_x, mid_y = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
        return not any(x0 <= mid_x <= x1 and top <= mid_y <= bottom for x0, top, x1, bottom in boxes)

    rest = page.filter(outside)
    if _pdf_in_columns(page, rest.extract_words()):
        return None
    blocks: list[tuple[float, str]] = [
        (line["top"], line["text"]) for line in rest.extract_text_lines() if line["text"].strip()]
    for table, rows in tables:
        blocks.append((table.bbox[1], "\n" + pipe_table(rows) + "\n"))
    blocks.sort(key=lambda block: block[0])
    text = "\n".join(text for _, text in blocks)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


# A real .docx has tens of entries and its XML compresses about 5-15x.
DOCX_MAX_ENTRIES = 10_000
DOCX_MAX_RATIO = 100


def load_docx(path: Path, data: bytes) -> list[Document]:
    """A Word document's body as Markdown-like text: headings, lists (numbered ones numbered), pipe tables,
    and its footnotes and endnotes at the end; page headers, footers and comments are left out.

    The body's XML is read directly (python-docx opens the package): its paragraph API skips tracked
    insertions, content controls, fields, text boxes and equations, and its table API rows in content
    controls, all of which hold document text.
    """
    import io
    import zipfile
    import zlib

    import docx
    from lxml import etree

    # Zip bomb guards, all from the archive's directory, before anything is inflated. zipfile never
    # inflates an entry past its declared size (it stops, then fails the CRC), so declared sizes are
    # a real bound. The entry count is checked before ZipFile parses the directory: it builds an object
    # per entry (~0.5 KB), so a 50 MB file of empty entries would otherwise cost ~0.3 GB.
    entries = data.count(b"PK\x01\x02")  # central directory signatures: an upper bound on entries
    if entries > DOCX_MAX_ENTRIES:
        raise LoadError(f"{path.name}: DOCX has {entries} zip entries, over the {DOCX_MAX_ENTRIES} limit "
                        "(zip bomb guard)")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
        total = sum(info.file_size for info in infos)
        if total > 20 * len(data) + 50_000_000:
            raise LoadError(f"{path.name}: DOCX expands to {total} bytes (zip bomb guard)")
        for info in infos:
            if info.file_size > 10_000_000 and info.file_size > DOCX_MAX_RATIO * max(info.compress_size, 1):
                raise LoadError(f"{path.name}: DOCX entry {info.filename[:100]!r} expands {info.compress_size} "
                                f"bytes to {info.file_size} (over {DOCX_MAX_RATIO}x; zip bomb guard)")
        try:
            document = docx.Document(io.BytesIO(data))
        except KeyError:
            # A relationship to a part the archive lacks (a styles or numbering part dropped by a
            # converter): Word repairs such a file, so the document is read without those parts.
            document = docx.Document(io.BytesIO(_docx_without_dangling_relationships(data)))
        reader = _DocxReader(document)
        body = _join_blocks(reader.body_lines())
    except LoadError:
        raise
    except RecursionError:
        raise LoadError(f"{path.name}: unreadable DOCX (tables nested too deeply)") from None
    # zlib.error (a corrupt deflate stream) and XMLSyntaxError (malformed XML parts, or an entity
    # expansion that lxml stops) used to escape as raw errors (a 500 on upload); zipfile raises
    # NotImplementedError for compression it lacks (Deflate64) and RuntimeError for encrypted entries.
    except (zipfile.BadZipFile, zlib.error, etree.XMLSyntaxError, KeyError, ValueError, OSError,
            NotImplementedError, RuntimeError) as exc:
        raise LoadError(f"{path.name}: unreadable DOCX ({_docx_error(exc)})") from None
    title, meta = "", {}
    try:  # metadata only: a broken docProps part does not make the document unreadable
        props = document.core_properties
        title = (props.title or "").strip()
        meta = {"author": props.author} if props.author else {}
    except Exception as exc:  # noqa: BLE001
        log.debug("DOCX core properties skipped: %s: %s", type(exc).__name__, exc)
    title = title or markdown_title(body) or _file_title(path)
    return [Document(source=str(path), title=title, text=body, kind="markdown", metadata=meta)]


def _docx_without_dangling_relationships(data: bytes) -> bytes:
    """The DOCX package with each relationship to an internal part it does not hold taken out."""
    import io
    import posixpath
    import zipfile
    from urllib.parse import unquote

    from lxml import etree

    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as archive, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as repaired:
        names = {name.lower() for name in archive.namelist()}
        for info in archive.infolist():
            content = archive.read(info)
            if info.filename.endswith(".rels"):
                # word/_rels/document.xml.rels holds the relationships of word/document.xml: targets
                # are relative to word/ (or absolute from the package root with a leading "/").
                base = posixpath.dirname(posixpath.dirname(info.filename))
                tree = etree.fromstring(content, etree.XMLParser(resolve_entities=False, no_network=True))
                for rel in list(tree):
                    target = unquote(rel.get("Target") or "")  # "media/image%201.png"
                    if rel.get("TargetMode") == "External" or not target:
                        continue
                    part = target.lstrip("/") if target.startswith("/") else posixpath.normpath(
                        posixpath.join(base, target))
                    if part.lower() not in names:  # part names ignore case (OPC)
                        tree.remove(rel)
                content = etree.tostring(tree, xml_declaration=True, encoding="UTF-8", standalone=True)
            repaired.writestr(info, content)
    return out.getvalue()


def _docx_error(exc: Exception) -> str:
    """What went wrong reading a DOCX, in a line without Python object reprs."""
    import zlib

    text = str(exc)
    if isinstance(exc, ValueError) and "is not a Word file" in text:
        content_type = re.search(r"content type is '([^']*)'", text)
        return f"not a Word document: content type {content_type.group(1) if content_type else 'unknown'}"
    if isinstance(exc, KeyError) and "officeDocument" in text:
        return "no main document part; Strict Open XML documents are not supported"
    kind = "corrupt compressed data" if isinstance(exc, zlib.error) else type(exc).__name__
    return f"{kind}: {text[:200]}"


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_M = "{http://schemas.openxmlformats.org/officeDocument/2006/math}"
_MC_FALLBACK = "{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback"
# Wrappers whose content is document text: content controls, custom XML, tracked insertions and moves.
_DOCX_WRAPPERS = frozenset({_W + "sdt", _W + "sdtContent", _W + "customXml", _W + "ins", _W + "moveTo",
                            _W + "smartTag", _W + "fldSimple", _W + "hyperlink", _W + "r", _W + "dir", _W + "bdo"})
# Never text: deleted and moved-away runs, properties, a field's code, the VML copy of a drawing.
_DOCX_SKIP = frozenset({_W + "del", _W + "moveFrom", _W + "pPr", _W + "rPr", _W + "sdtPr", _W + "sdtEndPr",
                        _W + "instrText", _W + "delInstrText", _MC_FALLBACK, _W + "commentReference"})
class _DocxReader:
    """Walks a python-docx document's XML in document order."""

    def __init__(self, document: Any) -> None:
        self.document = document
        self.styles = self._styles()
        self.numbering = self._numbering()
        self.counters: dict[tuple[str, int], int] = {}
        self.notes: list[tuple[str, str]] = []  # (mark, text) of footnotes/endnotes referenced, in order

    # -- parts -------------------------------------------------------------------------------------
    def _part_xml(self, reltype_suffix: str) -> Any:
        from docx.oxml import parse_xml

        for rel in self.document.part.rels.values():
            if rel.reltype.endswith(reltype_suffix) and not rel.is_external:
                try:
                    return parse_xml(rel.target_part.blob)
                except Exception as exc:  # noqa: BLE001 - an optional part; the body is still read
                    log.debug("DOCX part %s skipped: %s", reltype_suffix, exc)
        return None

    def _styles(self) -> dict[str, tuple[str, str, int | None, Any]]:
        """styleId -> (name, basedOn id, outline level, numPr element) of paragraph styles."""
        root = self._part_xml("/styles")
        out: dict[str, tuple[str, str, int | None, Any]] = {}
        if root is None:
            return out
        for style in root.iter(_W + "style"):
            sid = style.get(_W + "styleId") or ""
            name_el, based_el = style.find(_W + "name"), style.find(_W + "basedOn")
            ppr = style.find(_W + "pPr")
            outline = ppr.find(_W + "outlineLvl") if ppr is not None else None
            level = outline.get(_W + "val") if outline is not None else None
            out[sid] = ((name_el.get(_W + "val") or "") if name_el is not None else "",
                        (based_el.get(_W + "val") or "") if based_el is not None else "",
                        (value if (value := _count(level, -1, 9)) >= 0 else None),
                        ppr.find(_W + "numPr") if ppr is not None else None)
        return out

    def _numbering(self) -> dict[str, dict[int, tuple[str, int]]]:
        """numId -> level -> (format, start)."""
        root = self._part_xml("/numbering")
        if root is None:
            return {}
        abstract: dict[str, dict[int, tuple[str, int]]] = {}
        for node in root.iter(_W + "abstractNum"):
            levels: dict[int, tuple[str, int]] = {}
            for lvl in node.iter(_W + "lvl"):
                fmt, start = lvl.find(_W + "numFmt"), lvl.find(_W + "start")
                ilvl = lvl.get(_W + "ilvl") or "0"
                first = start.get(_W + "val") if start is not None else "1"
                levels[_count(ilvl, 0, 8)] = (
                    (fmt.get(_W + "val") or "decimal") if fmt is not None else "decimal",
                    _count(first, 1, 10**6))
            abstract[node.get(_W + "abstractNumId") or ""] = levels
        out: dict[str, dict[int, tuple[str, int]]] = {}
        for num in root.iter(_W + "num"):
            ref = num.find(_W + "abstractNumId")
            if ref is not None:
                out[num.get(_W + "numId") or ""] = abstract.get(ref.get(_W + "val") or "", {})
        return out

    # -- the body ----------------------------------------------------------------------------------
    def body_lines(self) -> list[str]:
        lines: list[str] = []
        self._blocks(self.document.element.body, lines)
        notes = {kind: self._notes(kind) for kind in ("footnote", "endnote")}
        for mark, key in self.notes:
            kind, _, note_id = key.partition(":")
            text = notes[kind].get(note_id, "")
            if text:
                lines.append(f"[{mark}] {text}")
        return lines

    def _blocks(self, root: Any, lines: list[str], flat: bool = False) -> None:
        """Paragraphs and tables under ``root`` in document order (iterative: nesting cannot recurse);
        ``flat``: a table's cells as lines of their own (a table inside a cell)."""
        pending = [iter(root)]
        while pending:
            node = next(pending[-1], None)
            if node is None:
                pending.pop()
            elif node.tag == _W + "p":
                self._paragraph(node, lines)
            elif node.tag == _W + "tbl":
                rows = self._table_rows(node)
                if flat:
                    lines += [cell.replace("\\|", "|") for row in rows for cell in row if cell]
                elif rows:
                    lines.append(pipe_table(rows))
            elif node.tag in _DOCX_WRAPPERS:
                pending.append(iter(node))

    def _paragraph(self, p: Any, lines: list[str]) -> None:
        boxes: list[Any] = []
        text = self._text(p, boxes).strip()
        if text:
            lines.append(self._render(p, text))
        for box in boxes:  # text boxes anchored in the paragraph: their own blocks after it
            self._blocks(box, lines)

    def _text(self, root: Any, boxes: list[Any] | None = None) -> str:
        """The visible text under ``root``: runs in insertions, content controls, fields, hyperlinks and
        equations included; deletions and field codes not. Text boxes go to ``boxes`` (or inline)."""
        parts: list[str] = []
        pending = [iter(root)]
        while pending:
            node = next(pending[-1], None)
            if node is None:
                pending.pop()
                continue
            tag = node.tag
            if not isinstance(tag, str) or tag in _DOCX_SKIP:
                continue
            if tag == _W + "t" or tag == _M + "t":
                parts.append(node.text or "")
            elif tag == _W + "tab":
                parts.append("\t")
            elif tag in (_W + "br", _W + "cr"):
                parts.append("\n")
            elif tag == _W + "noBreakHyphen":
                parts.append("-")
            elif tag == _W + "sym":
                parts.append(_docx_symbol(node.get(_W + "char") or ""))
            elif tag in (_W + "footnoteReference", _W + "endnoteReference"):
                kind = "footnote" if tag == _W + "footnoteReference" else "endnote"
                mark = str(len(self.notes) + 1)
                self.notes.append((mark, f"{kind}:{node.get(_W + 'id')}"))
                parts.append(f"[{mark}]")
            elif tag == _W + "txbxContent" and boxes is not None:
                boxes.append(node)
            elif tag == _W + "p" and parts:  # a paragraph inside (a text box read inline)
                parts.append(" ")
                pending.append(iter(node))
            else:
                pending.append(iter(node))
        return "".join(parts)

    def _render(self, p: Any, text: str) -> str:
        ppr = p.find(_W + "pPr")
        style_el = ppr.find(_W + "pStyle") if ppr is not None else None
        style_id = (style_el.get(_W + "val") or "") if style_el is not None else ""
        level = self._heading_level(ppr, style_id)
        if level is not None:
            return "#" * level + " " + " ".join(text.split())
        marker = self._list_marker(ppr, style_id)
        if marker is not None:
            return marker + " ".join(text.split())
        # Plain text that would read as Markdown structure ("# not a heading", "- literal dash") is escaped.
        return _escape_markdown("\n".join(line.strip() for line in text.splitlines()))

    def _style_chain(self, style_id: str) -> Iterator[tuple[str, str, int | None, Any]]:
        seen: set[str] = set()
        while style_id and style_id not in seen and style_id in self.styles:
            seen.add(style_id)
            style = self.styles[style_id]
            yield style
            style_id = style[1]

    def _heading_level(self, ppr: Any, style_id: str) -> int | None:
        """1-6 for a heading: a Title or "Heading N" style (or one based on it), or an outline level."""
        outline = ppr.find(_W + "outlineLvl") if ppr is not None else None
        if outline is not None and 0 <= (value := _count(outline.get(_W + "val"), -1, 9)) < 9:
            return min(value + 1, 6)
        for name, _, level, _ in self._style_chain(style_id):
            lowered = name.lower()
            if lowered == "title":
                return 1
            if lowered.startswith("heading ") and _count(lowered[8:], 0, 9) > 0:
                return min(_count(lowered[8:], 0, 9), 6)
            if level is not None and level < 9:
                return min(level + 1, 6)
        if not self.styles and style_id.lower().startswith("heading") and _count(style_id[7:], 0, 9) > 0:
            return min(_count(style_id[7:], 0, 9), 6)  # no styles part: Word's own style ids
        return None

    def _list_marker(self, ppr: Any, style_id: str) -> str | None:
        """"- " or "3. " (indented by level) for a list paragraph: numbering on it or on its style;
        a "List ..." style without numbering is a bullet unless it only continues an item."""
        num = ppr.find(_W + "numPr") if ppr is not None else None
        for _, _, _, style_num in self._style_chain(style_id):
            if num is not None:
                break
            num = style_num
        if num is not None:
            num_id_el, ilvl_el = num.find(_W + "numId"), num.find(_W + "ilvl")
            num_id = (num_id_el.get(_W + "val") or "") if num_id_el is not None else ""
            raw_level = (ilvl_el.get(_W + "val") or "0") if ilvl_el is not None else "0"
            level = _count(raw_level, 0, 8)
            if num_id and num_id != "0":
                fmt, start = self.numbering.get(num_id, {}).get(level, ("bullet", 1))
                for key in [k for k in self.counters if k[0] == num_id and k[1] > level]:
                    del self.counters[key]  # a new item at this level restarts the deeper ones
                indent = "  " * min(level, _LIST_INDENT_LEVELS)
                if fmt in ("bullet", "none"):
                    return indent + "- "
                count = self.counters.get((num_id, level), start - 1) + 1
                self.counters[(num_id, level)] = count
                return f"{indent}{count}. "
        name = next((n for n, _, _, _ in self._style_chain(style_id)), "")
        if name.startswith("List") and "Continue" not in name and name not in ("List Paragraph", "List"):
            return "- "
        return None

    # -- tables ------------------------------------------------------------------------------------
    def _children(self, node: Any, tag: str) -> Iterator[Any]:
        """``tag`` children of ``node``, also inside content controls and custom XML around them."""
        pending = [iter(node)]
        while pending:
            child = next(pending[-1], None)
            if child is None:
                pending.pop()
            elif child.tag == tag:
                yield child
            elif child.tag in (_W + "sdt", _W + "sdtContent", _W + "customXml"):
                pending.append(iter(child))

    def _table_rows(self, tbl: Any) -> list[list[str]]:
        """Rows of cell text: a cell merged across columns once (then empty cells), one merged down
        in each row it spans (as an HTML rowspan: every row reads whole); nested tables flattened into
        their cell."""
        rows: list[list[str]] = []
        above: dict[int, str] = {}  # column -> the text of the cell there in the row above
        for tr in self._children(tbl, _W + "tr"):
            cells: list[str] = []
            for tc in self._children(tr, _W + "tc"):
                tcpr = tc.find(_W + "tcPr")
                merge = tcpr.find(_W + "vMerge") if tcpr is not None else None
                span_el = tcpr.find(_W + "gridSpan") if tcpr is not None else None
                continued = merge is not None and (merge.get(_W + "val") or "continue") == "continue"
                text = above.get(len(cells), "") if continued else self._cell_text(tc)
                above[len(cells)] = text
                cells.append(text)
                span = (span_el.get(_W + "val") or "1") if span_el is not None else "1"
                cells.extend([""] * (_count(span, 1, 50) - 1))
            if any(cells):
                rows.append(cells)
        return rows

    def _cell_text(self, tc: Any) -> str:
        """A cell's paragraphs and nested tables, in order, on one line, pipes escaped."""
        lines: list[str] = []
        self._blocks(tc, lines, flat=True)
        text = " ".join(line.lstrip("\\").replace("\n", " ") for line in lines)
        return " ".join(text.split()).replace("|", "\\|")

    # -- notes -------------------------------------------------------------------------------------
    def _notes(self, kind: str) -> dict[str, str]:
        root = self._part_xml(f"/{kind}s")
        out: dict[str, str] = {}
        if root is None:
            return out
        for note in root.iter(_W + kind):
            if (note.get(_W + "type") or "normal") == "normal":
                out[note.get(_W + "id") or ""] = " ".join(self._text(note).split())
        return out


def _docx_symbol(code: str) -> str:
    """A ``w:sym`` character: symbol fonts put theirs at U+F0xx, where the low byte is the Latin-1 one."""
    try:
        value = int(code, 16)
    except ValueError:
        return ""
    if 0xF000 <= value <= 0xF0FF:
        value -= 0xF000
    return chr(value) if 0x20 <= value < 0x110000 else ""


def load_jsonl(path: Path, data: bytes) -> list[Document]:
    """One document per line: ``{"text", "title"?, "source"?, "metadata"?}``; source defaults to path#line."""
    text = _decode(data, path)
    docs: list[Document] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LoadError(f"{path.name} line {number}: invalid JSON ({exc.msg})") from None
        if not isinstance(record, dict) or not isinstance(record.get("text"), str):
            raise LoadError(f"{path.name} line {number}: a record needs a string 'text' field")
        meta = record.get("metadata") or {}
        if not isinstance(meta, dict):
            raise LoadError(f"{path.name} line {number}: 'metadata' must be an object")
        source = str(record.get("source") or record.get("_id") or f"{path}#{number}")
        docs.append(
            Document(source=source, title=str(record.get("title") or source), text=record["text"], kind="record",
                     metadata=_jsonable(meta))
        )
    return docs


LOADERS = {"md": load_markdown, "mdx": load_markdown, "rst": load_rst, "adoc": load_asciidoc, "ipynb": load_notebook, "txt": load_text,
           "html": load_html, "pdf": load_pdf, "docx": load_docx, "jsonl": load_jsonl}


def load_file(found: Found, max_bytes: int) -> list[Document]:
    """Read and parse one file; :class:`LoadError` says why it cannot be ingested."""
    try:
        size = found.path.stat().st_size
    except OSError as exc:
        raise LoadError(f"{found.path.name}: cannot read ({exc.strerror})") from None
    if size > max_bytes:
        raise LoadError(f"{found.path.name}: {size} bytes is over the {max_bytes}-byte limit (GRAPHRAG_MAX_FILE_MB)")
    if size == 0:
        raise LoadError(f"{found.path.name}: empty file")
    try:
        data = found.path.read_bytes()
    except OSError as exc:  # unreadable (permissions), a directory, or gone since the listing
        raise LoadError(f"{found.path.name}: cannot read ({exc.strerror or type(exc).__name__})") from None
    docs = LOADERS[found.file_type](found.path, data)
    return [d for d in docs if d.text.strip()] or _empty(found.path)


def load_bytes(filename: str, data: bytes, max_bytes: int) -> list[Document]:
    """Parse an uploaded file by its name's extension (REST uploads, agent tools).

    Raises :class:`~graphrag.errors.UnsupportedMedia` for a type we do not read,
    :class:`~graphrag.errors.PayloadTooLarge` over ``max_bytes`` and :class:`LoadError` for unreadable content.
    """
    from graphrag.errors import PayloadTooLarge, UnsupportedMedia

    path = Path(Path(filename).name or "upload")  # never a path from the client, only its base name
    kind = file_type(path)
    if kind is None:
        known = ", ".join(sorted({k.lstrip(".") for k in TYPES}))
        raise UnsupportedMedia(f"{path.name}: unsupported file type (supported: {known})")
    if len(data) > max_bytes:
        raise PayloadTooLarge(f"{path.name}: {len(data)} bytes is over the {max_bytes}-byte limit (GRAPHRAG_MAX_FILE_MB)")
    if not data:
        raise LoadError(f"{path.name}: empty file")
    docs = LOADERS[kind](path, data)
    return [d for d in docs if d.text.strip()] or _empty(path)


def _empty(path: Path) -> list[Document]:
    raise LoadError(f"{path.name}: no text content")


def load_text_document(text: str, *, source: str, title: str | None = None, kind: str = "markdown",
                       metadata: dict[str, Any] | None = None) -> Document:
    """A document from text handed in directly (REST, agent), parsed like a Markdown file."""
    meta, body = _front_matter(text, Path(source))
    if kind == "markdown":
        body = fence_indented_code(body)
    merged = {**meta, **(metadata or {})}
    return Document(source=source, title=title or _front_matter_title(merged) or markdown_title(body) or source,
                    text=body, kind=kind, metadata=_jsonable(merged))
