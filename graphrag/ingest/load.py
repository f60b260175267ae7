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
_HTML_BLOCKS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "blockquote", "td", "th"})
_HTML_OWNERS = frozenset({"li", "td", "th"})  # a <p>/<blockquote> inside one of these is part of its text


def load_html(path: Path, data: bytes) -> list[Document]:
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
    for tag in soup(["script", "style", "noscript", "template", "svg"]):
        tag.decompose()
    title_tag = soup.find("title")
    blocks: list[str] = []
    for name, text in _html_blocks(soup):
        if not text or name in ("td", "th"):
            continue
        if name[0] == "h":
            blocks.append("#" * int(name[1]) + " " + text)
        elif name == "pre":
            blocks.append("```\n" + text.strip("\n") + "\n```")
        elif name == "li":
            blocks.append("- " + text)
        else:
            blocks.append(text)
    body = "\n\n".join(blocks) or soup.get_text("\n", strip=True)
    title = (title_tag.get_text(strip=True) if title_tag else "") or _title_from_markdown(body) or path.stem
    meta = {}
    for m in soup.find_all("meta"):
        name, content = m.get("name"), m.get("content")
        if name in ("author", "description", "keywords") and content:
            meta[name] = content
    return [Document(source=str(path), title=title, text=body, kind="markdown", metadata=meta)]


def _html_blocks(soup: Any) -> list[tuple[str, str]]:
    """``(tag name, text)`` of each block element, in document order, in one pass over the tree.

    Each piece of text belongs to its innermost block only. Calling ``get_text`` on every block (as
    this used to) copies a nested block's text into each enclosing one: quadratic time and output on
    deeply nested input (4,000 nested <p> gave 40 MB of text). The walk keeps its own stack, so
    100,000 nested elements cannot raise RecursionError.
    """
    from bs4.element import CData, NavigableString, Tag

    out: list[tuple[str, list[str]]] = []
    # (children still to visit, collecting block or None, inside <pre>, inside <li>/<td>/<th>)
    stack: list[tuple[Iterator[Any], tuple[str, list[str]] | None, bool, bool]] = [
        (iter(soup.contents), None, False, False)]
    while stack:
        children, current, in_pre, in_owner = stack[-1]
        node = next(children, None)
        if node is None:
            stack.pop()
        elif isinstance(node, Tag):
            name, collector = node.name, current
            if not in_pre and name in _HTML_BLOCKS and (not in_owner or name not in ("p", "blockquote")):
                collector = (name, [])
                out.append(collector)
            stack.append((iter(node.contents), collector, in_pre or name == "pre", in_owner or name in _HTML_OWNERS))
        elif current is not None and (type(node) is NavigableString or isinstance(node, CData)):
            current[1].append(str(node))
    return [(name, "".join(parts) if name == "pre" else " ".join(s for s in (p.strip() for p in parts) if s))
            for name, parts in out]


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
        for page in reader.pages:
            text = (page.extract_text() or "").strip()
            pages.append((offset, offset + len(text)))
            parts.append(text)
            offset += len(text) + 2
        info = reader.metadata
        title = str(info.title).strip() if info and info.title else ""
        meta = {"pages": len(pages)}
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
    lines: list[str] = []
    for para in document.paragraphs:
        text = para.text.strip()
        if not text:
            continue
        style = (para.style.name if para.style is not None else "") or ""
        level = style.removeprefix("Heading ").strip()
        if style.startswith("Heading") and level.isdigit():
            lines.append("#" * min(int(level), 6) + " " + text)
        elif style == "Title":
            lines.append("# " + text)
        else:
            lines.append(text)
    body = "\n\n".join(lines)
    props = document.core_properties
    title = (props.title or "").strip() or _title_from_markdown(body) or path.stem
    meta = {"author": props.author} if props.author else {}
    return [Document(source=str(path), title=title, text=body, kind="markdown", metadata=meta)]


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
