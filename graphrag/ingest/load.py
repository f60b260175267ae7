"""Loaders: files (md, txt, html, pdf, docx, jsonl) to :class:`Document`, and directory walking.

Parsing is done by well-kept libraries (PyYAML, BeautifulSoup, pypdf, python-docx); HTML and DOCX
are turned into Markdown-like text (``#`` headings) so the markdown chunker keeps their structure.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from graphrag.errors import InvalidInput
from graphrag.models import Document

log = logging.getLogger(__name__)

TYPES: dict[str, str] = {
    ".md": "md", ".markdown": "md", ".txt": "txt", ".text": "txt", ".html": "html", ".htm": "html",
    ".pdf": "pdf", ".docx": "docx", ".jsonl": "jsonl",
}
IGNORED_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", "dist", "build"}
_FRONT_MATTER = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|\Z)", re.S)
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t#]*$", re.M)


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
    return TYPES.get(path.suffix.lower())


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
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise LoadError(f"{path.name}: invalid YAML front matter: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise LoadError(f"{path.name}: front matter must be a mapping")
    # Blank out the front matter instead of cutting it, so chunk offsets still index the file text.
    return _jsonable(data), re.sub(r"[^\n]", " ", text[:match.end()]) + text[match.end():]


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _title_from_markdown(text: str) -> str | None:
    match = _HEADING.search(text)
    return match.group(1).strip() if match else None


def load_markdown(path: Path, data: bytes) -> list[Document]:
    text = _decode(data, path)
    meta, body = _front_matter(text, path)
    title = str(meta.pop("title", "") or _title_from_markdown(body) or path.stem)
    return [Document(source=str(path), title=title, text=body, kind="markdown", metadata=meta)]


def load_text(path: Path, data: bytes) -> list[Document]:
    text = _decode(data, path)
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    # A short first line that is not a sentence reads as a title; otherwise the file name.
    title = first if 0 < len(first) <= 80 and not first.endswith((".", ",", ";", ":")) else path.stem
    return [Document(source=str(path), title=title, text=text, kind="text")]


# Limits on hostile HTML. bs4 keeps about 1 KB per element, so the element cap bounds memory (~0.5 GB);
# a legitimate page has far fewer (a very long Wikipedia article: ~50,000).
HTML_MAX_ELEMENTS = 500_000
# Elements whose text is one block of the output; a <p>/<blockquote> inside an owner is part of its text.
_HTML_BLOCKS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "blockquote", "dt", "dd",
                          "figcaption", "summary"})
_HTML_OWNERS = frozenset({"li", "dt", "dd", "figcaption", "summary"})
# Block-level elements: loose text on either side of one belongs to different blocks.
_HTML_BREAKS = frozenset({"address", "article", "aside", "body", "br", "details", "div", "dl", "fieldset", "figure",
                          "footer", "header", "hr", "html", "main", "ol", "section", "table", "tbody", "td", "tfoot",
                          "th", "thead", "tr", "ul"}) | _HTML_BLOCKS
_HTML_INLINE_CODE = frozenset({"code", "kbd", "samp", "tt"})
# Never article text: scripts, embedded objects, form controls, site navigation and footers.
_HTML_SKIP = frozenset({"head", "script", "style", "noscript", "template", "svg", "iframe", "object", "embed",
                        "canvas", "nav", "footer", "button", "select", "input", "textarea", "option", "dialog"})
_HTML_SKIP_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "dialog",
                              "alertdialog", "menu", "menubar", "toolbar", "tooltip"})
# class/id words that name page furniture (a readability-style rule, applied to containers only: an inline
# <a class="header"> wrapping a heading's text stays). The second set only outside a main landmark, where a
# "header" is the site's banner rather than the article's own title block.
_HTML_CHROME = frozenset({"nav", "navbar", "navigation", "menu", "menubar", "sidebar", "sidenav", "breadcrumb",
                          "breadcrumbs", "toc", "pagination", "pager", "cookie", "cookies", "share", "sharing",
                          "social", "skip", "topbar", "bottombar"})
_HTML_CHROME_OUTSIDE_MAIN = frozenset({"header", "footer", "banner", "masthead", "copyright"})
_HTML_CONTAINERS = frozenset({"div", "section", "ul", "ol", "dl", "aside", "header", "table"})
_HEADING_LINK_MARKS = frozenset({"¶", "#", "§", "🔗", "∞", "link"})
_TITLE_SEPARATORS = re.compile(r"\s+(?:-|\||–|—|·|::|»)\s+")


def load_html(path: Path, data: bytes) -> list[Document]:
    """An HTML page's main content as Markdown-like text: headings, lists, code blocks and pipe tables.

    The article is the page's main landmark (``<main>``, ``role="main"``, or its one ``<article>``);
    navigation, banners, footers, sidebars, hidden help popups and scripts are dropped.
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
    page_title = title_tag.get_text(" ", strip=True) if title_tag else ""
    root, landmark = _main_content(soup)
    blocks = _html_blocks(root, landmark)
    if not blocks and root is not soup:  # a landmark with nothing in it: read the whole page
        blocks = _html_blocks(soup, False)
    body = _join_blocks([_render_block(kind, text) for kind, text in blocks])
    if not body.strip():
        body = soup.get_text("\n", strip=True)
    title = _html_title(page_title, blocks) or _title_from_markdown(body) or path.stem
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
    if name == "a":  # a heading's self-link: "¶", "#"
        href = attrs.get("href")
        if "headerlink" in (attrs.get("class") or ()):
            return True
        return (isinstance(href, str) and href.startswith("#") and len(node.contents) == 1
                and str(node.contents[0]).strip() in _HEADING_LINK_MARKS)
    if name in _HTML_CONTAINERS:
        words: set[str] = set()
        for value in (attrs.get("class") or (), (attrs.get("id") or "",)):
            for item in value if not isinstance(value, str) else (value,):
                words.update(re.split(r"[-_\s]+", str(item).lower()))
        if words & _HTML_CHROME or (not landmark and not in_article and words & _HTML_CHROME_OUTSIDE_MAIN):
            return True
    return False


def _html_blocks(root: Any, landmark: bool) -> list[tuple[str, str]]:
    """``(kind, text)`` of each block of ``root``, in document order, in one pass over the tree.

    Kinds are the block tags (``h2``, ``p``, ``li``, ``pre``...) and ``table`` (already a pipe table).
    Each piece of text belongs to its innermost block only; loose text between blocks is a ``p`` of its
    own. Inline tags add no spaces (``<em>a</em>, b`` stays "a, b"); inline code gets backticks.
    The walk keeps its own stack, so 100,000 nested elements cannot raise RecursionError; copying a
    nested block's text into each enclosing one would be quadratic in the nesting depth.
    """
    from bs4.element import CData, NavigableString, Tag

    out: list[tuple[str, list[str]]] = []
    loose: list[tuple[str, list[str]] | None] = [None]  # the open block of loose text, if any

    # (children still to visit, collecting block or None, inside <pre>, inside an owner, inside an
    #  <article>/<section>, text to add to the block on leaving the element)
    stack: list[tuple[Iterator[Any], tuple[str, list[str]] | None, bool, bool, bool, str]] = [
        (iter(root.contents), None, False, False, False, "")]
    while stack:
        children, current, in_pre, in_owner, in_article, closing = stack[-1]
        node = next(children, None)
        if node is None:
            stack.pop()
            if current is not None and closing:
                current[1].append(closing)
            continue
        if isinstance(node, Tag):
            name = node.name
            if _skip_html(node, landmark, in_article):
                continue
            if name in _HTML_BREAKS:
                loose[0] = None
                if current is not None and not in_pre:
                    current[1].append(" ")
            if name == "table" and not in_pre:
                table = _html_table(node)
                if table is not None:
                    caption, rows = table
                    if caption:
                        out.append(("p", [caption]))
                    out.append(("table", [rows]))
                    continue
            collector, closing = current, ""
            if not in_pre and name in _HTML_BLOCKS and (not in_owner or name not in ("p", "blockquote")):
                kind = name
                if name == "pre":
                    kind = "pre " + _code_language(node)
                collector = (kind, [])
                out.append(collector)
            elif name in _HTML_INLINE_CODE and not in_pre:
                if collector is None:  # code in loose text: it joins (or opens) the loose block
                    collector = loose[0]
                    if collector is None:
                        collector = loose[0] = ("p", [])
                        out.append(collector)
                collector[1].append("`")
                closing = "`"
            elif name in _HTML_BREAKS and current is not None and not in_pre:
                closing = " "
            stack.append((iter(node.contents), collector, in_pre or name == "pre", in_owner or name in _HTML_OWNERS,
                          in_article or name in ("article", "section"), closing))
        elif type(node) is NavigableString or isinstance(node, CData):
            text = str(node)
            if current is not None:
                current[1].append(text)
            elif text.strip():
                block = loose[0]
                if block is None:
                    block = loose[0] = ("p", [])
                    out.append(block)
                block[1].append(text)
    blocks = []
    for kind, parts in out:
        if kind.startswith("pre"):
            text = "".join(parts).strip("\n")
        elif kind == "table":
            text = parts[0]
        else:
            text = " ".join("".join(parts).split())
        if text.strip():
            blocks.append((kind, text))
    return blocks


def _code_language(pre: Any) -> str:
    """The language of a code block from ``class="language-rust"`` on the <pre> or its <code>."""
    for tag in (pre, pre.find("code")):
        for cls in (tag.get("class") or ()) if tag is not None else ():
            if cls.startswith(("language-", "lang-")):
                return re.sub(r"[^\w+#.-].*", "", cls.split("-", 1)[1])
    return ""


def _join_blocks(blocks: list[str]) -> str:
    """Blocks separated by blank lines, except consecutive list items (one list, one line each)."""
    out: list[str] = []
    for block in blocks:
        if out:
            out.append("\n" if block.startswith("- ") and out[-1].startswith("- ") else "\n\n")
        out.append(block)
    return "".join(out)


def _render_block(kind: str, text: str) -> str:
    if kind[0] == "h" and kind[1:].isdigit():
        return "#" * int(kind[1]) + " " + text
    if kind.startswith("pre"):
        fence = "````" if "```" in text else "```"
        return f"{fence}{kind[4:]}\n{text}\n{fence}"
    if kind == "li":
        return "- " + text
    if kind == "blockquote":
        return "> " + text
    return text


# A cell this long means a page laid out with a table, not a table of data.
_LAYOUT_CELL_CHARS = 2000


def _html_table(table: Any) -> tuple[str, str] | None:
    """``(caption, pipe table)`` for a data table; None for a layout table (read as ordinary blocks)."""
    if table.get("role") in ("presentation", "none") or table.find("table") is not None:
        return None
    rows: list[list[str]] = []
    for tr in table.find_all("tr"):
        cells: list[str] = []
        for cell in tr.find_all(("td", "th"), recursive=False):
            text = _cell_text(cell)
            if len(text) > _LAYOUT_CELL_CHARS:
                return None
            cells.append(text)
            span = cell.get("colspan")
            if isinstance(span, str) and span.isdigit():
                cells.extend([""] * min(int(span) - 1, 50))
        if cells:
            rows.append(cells)
    if not rows:
        return None
    caption_tag = table.find("caption")
    caption = _cell_text(caption_tag).replace("\\|", "|") if caption_tag is not None else ""
    return caption, _pipe_table(rows)


def _cell_text(cell: Any) -> str:
    """A table cell's text on one line: nested blocks joined by spaces, inline code in backticks, pipes escaped."""
    blocks = _html_blocks(cell, True)
    text = " ".join(text.replace("\n", " ") if not kind.startswith("pre") else " ".join(text.split())
                    for kind, text in blocks)
    return text.replace("|", "\\|")


def _pipe_table(rows: list[list[str]]) -> str:
    """Rows as a Markdown pipe table. Markdown needs a header row: the first row is it (<th> cells or not)."""
    width = max(len(row) for row in rows)
    rows = [row + [""] * (width - len(row)) for row in rows]
    lines = ["| " + " | ".join(rows[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(row) + " |" for row in rows[1:]]
    return "\n".join(lines)


def load_pdf(path: Path, data: bytes) -> list[Document]:
    import io

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise LoadError(f"{path.name}: encrypted PDF (password protected)")
        parts: list[str] = []
        pages: list[tuple[int, int]] = []
        offset = 0
        tables = _pdf_tables_by_page(data)
        for number, page in enumerate(reader.pages):
            text = tables.get(number) or (page.extract_text() or "").strip()
            pages.append((offset, offset + len(text)))
            parts.append(text)
            offset += len(text) + 2
        info = reader.metadata
        title = str(info.title).strip() if info and info.title else ""
        meta: dict[str, Any] = {"pages": len(pages)}
        if info and info.author:
            meta["author"] = str(info.author)
    except LoadError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise LoadError(f"{path.name}: unreadable PDF ({type(exc).__name__}: {exc})") from None
    body = "\n\n".join(parts)
    if not body.strip():
        raise LoadError(f"{path.name}: the PDF has no extractable text (scanned images need OCR)")
    return [Document(source=str(path), title=title or path.stem, text=body, kind="pdf", metadata=meta,
                     pages=tuple(pages))]


def _pdf_tables_by_page(data: bytes) -> dict[int, str]:
    """Pages that hold ruled tables, as their text with each table as a Markdown pipe table in place.

    pypdf flattens a table into loose words ("Max pressure 42 bar"), losing which value is in which column;
    pdfplumber finds ruled tables from the page's lines. Only pages with a table are re-read this way, so
    other pages keep pypdf's text. A PDF pdfplumber cannot parse simply keeps pypdf's text.
    """
    import io

    import pdfplumber

    found: dict[int, str] = {}
    try:
        with pdfplumber.open(io.BytesIO(data)) as pdf:
            for number, page in enumerate(pdf.pages):
                tables = [t for t in page.find_tables() if len(t.rows) >= 2]
                if tables:
                    found[number] = _pdf_page_with_tables(page, tables)
                page.close()  # drop the page's parsed layout: long manuals stay in bounded memory
    except Exception as exc:  # pdfminer raises many types on odd files; pypdf's text is still good
        log.debug("PDF table detection skipped: %s: %s", type(exc).__name__, exc)
        return {}
    return found


def _pdf_page_with_tables(page: Any, tables: list[Any]) -> str:
    """The page's text lines outside the tables, and the tables as pipe tables, in reading order by height."""
    boxes = [t.bbox for t in tables]

    def outside(obj: dict[str, Any]) -> bool:
        mid_x, mid_y = (obj["x0"] + obj["x1"]) / 2, (obj["top"] + obj["bottom"]) / 2
        return not any(x0 <= mid_x <= x1 and top <= mid_y <= bottom for x0, top, x1, bottom in boxes)

    blocks: list[tuple[float, str]] = [
        (line["top"], line["text"]) for line in page.filter(outside).extract_text_lines() if line["text"].strip()]
    for table in tables:
        rows = [[" ".join((cell or "").split()).replace("|", "\\|") for cell in row] for row in table.extract()]
        rows = [row for row in rows if any(row)]
        if rows:
            blocks.append((table.bbox[1], "\n" + _pipe_table(rows) + "\n"))
    blocks.sort(key=lambda block: block[0])
    text = "\n".join(text for _, text in blocks)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


# A real .docx has tens of entries and its XML compresses about 5-15x.
DOCX_MAX_ENTRIES = 10_000
DOCX_MAX_RATIO = 100


def load_docx(path: Path, data: bytes) -> list[Document]:
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
        document = docx.Document(io.BytesIO(data))
    except LoadError:
        raise
    # zlib.error (a corrupt deflate stream) and XMLSyntaxError (malformed XML parts, or an entity
    # expansion that lxml stops) used to escape as raw errors (a 500 on upload).
    except (zipfile.BadZipFile, zlib.error, etree.XMLSyntaxError, KeyError, ValueError, OSError) as exc:
        kind = "corrupt compressed data" if isinstance(exc, zlib.error) else type(exc).__name__
        raise LoadError(f"{path.name}: unreadable DOCX ({kind}: {str(exc)[:200]})") from None
    from docx.table import Table

    lines: list[str] = []
    for block in document.iter_inner_content():  # paragraphs and tables in document order
        if isinstance(block, Table):
            rows = _docx_rows(block)
            if rows:
                lines.append(_pipe_table(rows))
            continue
        text = block.text.strip()
        if not text:
            continue
        style = (block.style.name if block.style is not None else "") or ""
        level = style.removeprefix("Heading ").strip()
        if style.startswith("Heading") and level.isdigit():
            lines.append("#" * min(int(level), 6) + " " + text)
        elif style == "Title":
            lines.append("# " + text)
        elif style.startswith("List"):
            lines.append("- " + text)
        else:
            lines.append(text)
    body = _join_blocks(lines)
    props = document.core_properties
    title = (props.title or "").strip() or _title_from_markdown(body) or path.stem
    meta = {"author": props.author} if props.author else {}
    return [Document(source=str(path), title=title, text=body, kind="markdown", metadata=meta)]


def _docx_rows(table: Any) -> list[list[str]]:
    """A DOCX table's rows of cell text; a merged cell's text once, nested tables flattened into their cell."""
    rows: list[list[str]] = []
    for row in table.rows:
        cells: list[str] = []
        previous = None
        for cell in row.cells:
            # row.cells repeats a horizontally merged cell once per grid column it spans.
            cells.append("" if cell._tc is previous else _docx_cell_text(cell))
            previous = cell._tc
        if any(cells):
            rows.append(cells)
    return rows


def _docx_cell_text(cell: Any) -> str:
    """A cell's paragraphs and nested tables on one line, pipes escaped (iterative: nesting cannot recurse deep)."""
    from docx.table import Table, _Cell

    parts: list[str] = []
    pending = [iter(cell.iter_inner_content())]
    while pending:
        block = next(pending[-1], None)
        if block is None:
            pending.pop()
        elif isinstance(block, Table):
            for row in block.rows:
                pending.append(iter(row.cells))
        elif isinstance(block, _Cell):  # a nested table's cell
            pending.append(iter(block.iter_inner_content()))
        elif block.text.strip():
            parts.append(block.text.strip())
    return " ".join(" ".join(parts).split()).replace("|", "\\|")


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


LOADERS = {"md": load_markdown, "txt": load_text, "html": load_html, "pdf": load_pdf, "docx": load_docx,
           "jsonl": load_jsonl}


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
    data = found.path.read_bytes()
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
    merged = {**meta, **(metadata or {})}
    return Document(source=source, title=title or str(merged.pop("title", "") or _title_from_markdown(body) or source),
                    text=body, kind=kind, metadata=_jsonable(merged))
