"""Loaders: files (md, mdx, rst, adoc, ipynb, txt, html, pdf, docx, jsonl) to :class:`Document`, and directory walking.

Parsing is done by well-kept libraries (PyYAML, docutils here; BeautifulSoup, pypdf and pdfplumber,
python-docx in :mod:`~graphrag.ingest.html_reader`, :mod:`~graphrag.ingest.pdf_reader`,
:mod:`~graphrag.ingest.docx_reader`); HTML, DOCX, reStructuredText, AsciiDoc and notebooks are turned
into Markdown-like text (``#`` headings) so the markdown chunker keeps their structure.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from graphrag.errors import InvalidInput
from graphrag.ingest.autodoc import expand_autodoc_rst, expand_mkdocstrings
from graphrag.ingest.docx_reader import load_docx
from graphrag.ingest.encoding import NotText, decode_text
from graphrag.ingest.furniture import blank_furniture, strip_leaders, text_pages
from graphrag.ingest.html_comments import blank_html_comments
from graphrag.ingest.html_reader import load_html
from graphrag.ingest.ignore import IgnoreRules
from graphrag.ingest.includes import Includes, expand_asciidoc, expand_markdown, expand_rst
from graphrag.ingest.eval_rst import render_eval_rst
from graphrag.ingest.headers import header_fields, header_title, markdown_meta, rst_file_fields
from graphrag.ingest.load_base import LoadError, NoText, Unsupported, file_title, unligature
from graphrag.ingest.long_urls import shorten_long_urls
from graphrag.ingest.mdx import mdx_to_markdown, reads_as_mdx
from graphrag.ingest.pdf_reader import load_pdf
from graphrag.ingest.project import Project, project_root
from graphrag.ingest.sitegen import site_markup_to_markdown
from graphrag.ingest.templates import is_template
from graphrag.ingest.textprep import fence_indented_code, heading_text, markdown_title
from graphrag.models import Document

__all__ = ["LOADERS", "TYPES", "Found", "LoadError", "NoText", "Unsupported", "discover", "file_type", "is_partial",
           "load_bytes", "load_file", "load_text_document"]

log = logging.getLogger(__name__)


TYPES: dict[str, str] = {
    ".md": "md", ".markdown": "md", ".mkd": "md", ".mdown": "md", ".qmd": "md", ".rmd": "md", ".mdx": "mdx", ".rst": "rst", ".rest": "rst", ".ipynb": "ipynb",
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


@dataclass(frozen=True)
class Found:
    """A file found by :func:`discover`, with its type."""

    path: Path
    file_type: str
    #: The project it was found in (:class:`~graphrag.ingest.project.Project`: the folder its include
    #: directives may read, its cross-references); None for a file on its own (no includes are read).
    project: Project | None = None

    @property
    def root(self) -> Path | None:
        """The folder this file's include directives may read files under (None: none)."""
        return self.project.root if self.project is not None else None


def file_type(path: Path) -> str | None:
    """The loader for a file by its extension; README, LICENSE, CHANGELOG... without one are text."""
    kind = TYPES.get(path.suffix.lower())
    if kind is None and not path.suffix and path.name.lower() in TEXT_NAMES:
        return "txt"
    return kind


# The end of a skip's reason when ``--file-types`` left the file out (read by ``--sync``, which keeps
# such a file's documents: the file is still a page, only not of this ingest's types).
NOT_IN_FILE_TYPES = "not in --file-types"


def left_out_by_file_types(skip: dict[str, str]) -> bool:
    """Whether a skipped file (an entry of :func:`discover`'s skipped list) was left out by ``--file-types``."""
    return skip["reason"].endswith(NOT_IN_FILE_TYPES)


def discover(paths: Iterable[Path], file_types: set[str] | None = None,
             read_ignore_files: bool = True) -> tuple[list[Found], list[dict[str, str]]]:
    """Files to ingest under ``paths`` (recursively), and the ones skipped with a reason. In a folder,
    with ``read_ignore_files``, what the project's ``.gitignore`` and ``.graphragignore`` files match is
    left out (:mod:`~graphrag.ingest.ignore`); a file named in ``paths`` is always taken."""
    found: list[Found] = []
    skipped: list[dict[str, str]] = []

    def consider(path: Path, project: Project) -> None:
        kind = file_type(path)
        if kind is None:
            skipped.append({"path": str(path), "reason": f"unsupported file type '{path.suffix or path.name}'"})
        elif file_types and kind not in file_types:
            skipped.append({"path": str(path), "reason": f"file type '{kind}' {NOT_IN_FILE_TYPES}"})
        else:
            found.append(Found(path, kind, project))

    for root in paths:
        if root.is_file():
            consider(root, Project(project_root(root)))
        elif root.is_dir():
            project = Project(project_root(root))
            rules = IgnoreRules(project.root) if read_ignore_files else None
            if rules is not None and rules.ignored_by(root, True):  # a folder named though ignored: its own rules
                rules = IgnoreRules(root)
            for path in sorted(_walk(root, rules, skipped)):
                consider(path, project)
        else:
            skipped.append({"path": str(root), "reason": "no such file or directory"})
    return found, skipped


# The folder a browser saves a web page's resources in, beside the page ("Page.html" and "Page_files/":
# Chrome and Firefox; "-Dateien", "_archivos", "_fichiers" in Internet Explorer's and Edge's languages).
_SAVED_PAGE_RESOURCES = re.compile(r"(?P<page>.+)(?:_files|-Dateien|_archivos|_fichiers|_arquivos|_bestanden)$")


def saved_page_of(folder: Path) -> Path | None:
    """The saved web page whose resources ``folder`` holds (its scripts, styles, images and the HTML of
    its frames: ads, widgets), or None. Its files are the page's parts, not documents."""
    match = _SAVED_PAGE_RESOURCES.fullmatch(folder.name)
    if match is None:
        return None
    return next((page for suffix in (".html", ".htm", ".xhtml")
                 if (page := folder.with_name(match["page"] + suffix)).is_file()), None)


def _walk(root: Path, rules: IgnoreRules | None, skipped: list[dict[str, str]]) -> Iterator[Path]:
    for child in sorted(root.iterdir()):
        if child.name.startswith(".") or child.name in IGNORED_DIRS:
            continue
        folder = child.is_dir() and not child.is_symlink()
        if not folder and not child.is_file():
            continue
        source = rules.ignored_by(child, folder) if rules is not None else None
        page = saved_page_of(child) if folder and source is None else None
        if page is not None:
            skipped.append({"path": str(child), "reason": f"the resources of the saved web page {page.name}"})
        elif source is not None:
            skipped.append({"path": str(child), "reason": f"ignored by {source}"})
        elif folder:
            yield from _walk(child, rules, skipped)
        else:
            yield child


def _decode(data: bytes, path: Path, utf8_only: bool = False) -> str:
    """A text file's text: UTF-8, or the legacy encoding it was written in (:mod:`graphrag.ingest.encoding`);
    ``utf8_only`` for JSON, which is UTF-8 by definition."""
    try:
        text, encoding = decode_text(data, legacy=not utf8_only)
    except NotText as exc:
        why = "; JSON Lines must be UTF-8" if utf8_only and "UTF-8" in str(exc) else ""
        raise LoadError(f"{path.name}: {exc}{why}") from None
    if encoding != "utf-8":
        log.info("%s: read as %s", path.name, encoding)
    return unligature(text)


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


def _beyond_headings(text: str) -> bool:
    """Whether ``text`` has a line with words that is not an ATX heading."""
    return any(line.strip() and not line.lstrip().startswith("#") for line in text.split("\n"))


def _as_rendered(body: str, labels: dict[str, str] | None = None) -> str:
    """Markdown as its page reads: site-generator markup rewritten (a bare MyST ``{ref}`` showing the
    section title ``labels`` has for it), indented code fenced, addresses too long to read cut, HTML
    comments blanked."""
    return shorten_long_urls(blank_html_comments(fence_indented_code(site_markup_to_markdown(body, labels))))


def load_markdown(path: Path, data: bytes, includes: Includes | None = None,
                  labels: dict[str, str] | None = None) -> list[Document]:
    """A Markdown (or MDX) file: front matter as metadata, the rest as the text (indented code blocks
    fenced; an MDX file's JSX blanked in place); with ``includes``, the files its include directives
    name filled in (:mod:`~graphrag.ingest.includes`); ``labels`` (the project's section titles by
    label) are what a bare MyST ``{ref}`` to another file shows."""
    text = _decode(data, path)
    meta, body = _front_matter(text, path)
    named = ""
    if not meta:  # Python-Markdown's and MultiMarkdown's "Title: ..." lines, Pandoc's "% Title" block
        meta, body = markdown_meta(body)
        named = header_title(meta)
    if includes is not None:
        body = expand_mkdocstrings(expand_markdown(body, path.parent, includes), includes)
    body = render_eval_rst(body, path, includes, labels)  # MyST's reStructuredText blocks, as they render
    written = blank_html_comments(body)  # a comment alone does not make a page of headings one with "no text"
    if path.suffix.lower() == ".mdx" or reads_as_mdx(body):  # Docusaurus reads .md files as MDX too
        # MDX has no indented code blocks; Docusaurus admonitions are fenced divs
        body = shorten_long_urls(blank_html_comments(site_markup_to_markdown(mdx_to_markdown(body), labels)))
    else:
        body = _as_rendered(body, labels)
    if not _beyond_headings(body) and _beyond_headings(written):
        # An include, or an API page whose text the site builds from code (mkdocstrings' "::: pkg.mod")
        raise NoText(f"{path.name}: no text of its own (only site-generator markup, such as an include)")
    title = named or _front_matter_title(meta) or markdown_title(body) or file_title(path)
    return [Document(source=str(path), title=title, text=body, kind="markdown", metadata=meta)]


def load_rst(path: Path, data: bytes, includes: Includes | None = None,
             labels: dict[str, str] | None = None, links: dict[str, str | None] | None = None) -> list[Document]:
    """A reStructuredText file (Sphinx docs, Python READMEs): docutils renders it, with Sphinx's roles and
    directives read leniently (:mod:`graphrag.ingest.rst`), and the HTML loader reads the page; with
    ``includes``, its ``include`` and ``literalinclude`` directives filled in first; ``labels`` (the
    project's section titles by label) are what a bare ``:ref:`` to another file shows."""
    from graphrag.ingest.rst import rst_to_html

    text = _decode(data, path)
    # Fields opening the file (":Author: ...", or a PEP's "PEP: 8" header) are the document's metadata.
    meta, text = rst_file_fields(text)
    if not meta:
        meta, text = header_fields(text)
    named = header_title(meta)
    if includes is not None:
        text = expand_autodoc_rst(expand_rst(text, path.parent, includes), includes)
    try:
        page = rst_to_html(text, labels, links)
    except InvalidInput as exc:
        raise LoadError(f"{path.name}: {exc}") from None
    except RecursionError:
        raise LoadError(f"{path.name}: unreadable reStructuredText (nested too deeply)") from None
    except Exception as exc:  # noqa: BLE001 - docutils' own errors, and plain ones from odd input
        raise LoadError(f"{path.name}: unreadable reStructuredText ({type(exc).__name__}: "
                        f"{' '.join(str(exc).split())[:200]})") from None
    docs = [replace(d, metadata={**d.metadata, **meta}) for d in load_html(path, page.encode())]
    if named:  # a PEP's page opens with its title over the sections, which nest under it
        docs = [replace(d, title=named, text=f"# {named}\n\n{d.text}") for d in docs]
    elif "<title></title>" in page:  # no one top heading (a changelog): the file names it
        docs = [replace(d, title=file_title(path)) for d in docs]
    return docs


def load_asciidoc(path: Path, data: bytes, includes: Includes | None = None) -> list[Document]:
    """An AsciiDoc file (Antora sites, Spring, Neo4j, Hibernate docs) read as the Markdown its rendered page
    shows (:mod:`graphrag.ingest.asciidoc`); its header's description, keywords and author as metadata;
    with ``includes``, its ``include::`` lines filled in first."""
    from graphrag.ingest.asciidoc import asciidoc_markdown

    text = _decode(data, path)
    if includes is not None:
        text = expand_asciidoc(text, path.parent, includes)
    try:
        body, meta = asciidoc_markdown(text)
        body = shorten_long_urls(body)
    except Exception as exc:  # noqa: BLE001 - a file the reader cannot take is that file's error, not a 500
        log.warning("AsciiDoc reader failed on %s", path.name, exc_info=True)
        raise LoadError(f"{path.name}: unreadable AsciiDoc ({type(exc).__name__})") from None
    return [Document(source=str(path), title=markdown_title(body) or file_title(path), text=body, kind="markdown",
                     metadata=meta)]


def load_notebook(path: Path, data: bytes) -> list[Document]:
    """A Jupyter notebook: Markdown cells and code cells (fenced, in the kernel's language) as Markdown;
    outputs and raw cells left out (:mod:`graphrag.ingest.notebook`)."""
    from graphrag.ingest.notebook import notebook_markdown

    try:
        body, meta = notebook_markdown(data)
    except InvalidInput as exc:
        raise LoadError(f"{path.name}: {exc}") from None
    body = shorten_long_urls(blank_html_comments(body))
    return [Document(source=str(path), title=markdown_title(body) or file_title(path), text=body, kind="markdown",
                     metadata=meta)]


def _centred_title(text: str) -> str:
    """The title of a text that opens with a block of two-column lines (an RFC's or an Internet-Draft's
    header: "Network Working Group      J. Postel") and centres its title below it; "" for others."""
    lines = text.lstrip("\n").splitlines()[:40]
    block = 0
    while block < len(lines) and (re.search(r"\S\s{3,}\S", lines[block]) or
                                  block and lines[block].strip() and not lines[block].startswith(" ")):
        block += 1
    if block < 2:
        return ""
    title = next((ln for ln in lines[block:] if ln.strip()), "")
    indent = len(title) - len(title.lstrip())
    return " ".join(title.split()) if indent >= 8 and len(title.strip()) <= 80 else ""


def load_text(path: Path, data: bytes) -> list[Document]:
    text = _decode(data, path)
    # A short first line that is not a sentence reads as a title (rules of "=" or "-" and the columns
    # of an RFC header are not one); otherwise the file name.
    first = next((ln.strip() for ln in text.splitlines() if re.search(r"\w", ln)), "")
    first = _centred_title(text) or re.split(r"\s{3,}", first)[0]
    title = first if 0 < len(first) <= 80 and not first.endswith((".", ",", ";", ":")) else file_title(path)
    # A paged text (form feeds, or page footers such as an RFC's "[Page 3]") loses its running headers
    # and footers, and its chunks cite their page as a PDF's do.
    pages = text_pages(text)
    if pages:
        text = blank_furniture(text, pages)
    text = strip_leaders(text, blank=True)
    return [Document(source=str(path), title=title, text=text, kind="text", pages=tuple(pages),
                     metadata={"pages": len(pages)} if pages else {})]


def load_jsonl(path: Path, data: bytes) -> list[Document]:
    """One document per line: ``{"text", "title"?, "source"?, "metadata"?}``; source defaults to path#line."""
    text = _decode(data, path, utf8_only=True)
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


def load_html_page(path: Path, data: bytes) -> list[Document]:
    """An HTML page (:func:`~graphrag.ingest.html_reader.load_html`); a site generator's front matter
    (Jekyll's and Eleventy's pages in HTML) is metadata, its ``title`` the title, and the Liquid tags and
    outputs the site fills in are blanked as in Markdown pages (a site renders only files with front
    matter; the template rule of :func:`_pages` is for the others)."""
    if data.removeprefix(b"\xef\xbb\xbf")[:3] not in (b"---", b"+++"):
        return load_html(path, data)
    meta, body = _front_matter(_decode(data, path), path)
    if not meta:
        return load_html(path, data)
    title = _front_matter_title(meta)
    docs = [replace(d, title=title or d.title, text=site_markup_to_markdown(d.text), metadata={**meta, **d.metadata})
            for d in load_html(path, body.encode("utf-8"))]
    if not any(_beyond_headings(d.text) for d in docs):  # a layout, or a page the site fills from its data
        raise NoText(f"{path.name}: no text of its own (only site-generator markup, such as an include)")
    return docs


LOADERS = {"md": load_markdown, "mdx": load_markdown, "rst": load_rst, "adoc": load_asciidoc, "ipynb": load_notebook, "txt": load_text,
           "html": load_html_page, "pdf": load_pdf, "docx": load_docx, "jsonl": load_jsonl}

# Kinds whose text may be a template read as a page (:mod:`~graphrag.ingest.templates`).
_TEMPLATED = frozenset({"md", "mdx", "rst", "adoc", "txt", "html"})


def _pages(path: Path, kind: str, docs: list[Document]) -> list[Document]:
    """The documents with text; :class:`NoText` for a template (its text mostly template tags), a
    :class:`LoadError` for a file without text."""
    docs = [without_nul(d) for d in docs if d.text.strip()]
    if docs and kind in _TEMPLATED and all(is_template(d.text) for d in docs):
        raise NoText(f"{path.name}: a template (its text is mostly template tags such as {{% %}} and {{{{ }}}}), not a page")
    return docs or _empty(path)


def without_nul(doc: Document) -> Document:
    """``doc`` without NUL characters, which PostgreSQL's text and jsonb cannot hold (the whole
    document failed to store: a PDF font that maps its "ffi" glyph to U+0000, a JSON record's
    "\\u0000"). In text whose offsets are kept (pages, headings) each becomes U+FFFD, elsewhere nothing.
    Text a client sends as such (REST, agent tools) is refused instead: the client can fix it."""
    def clean(value: Any) -> Any:
        if isinstance(value, str):
            return value.replace("\x00", "")
        if isinstance(value, dict):
            return {clean(k): clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    metadata = clean(doc.metadata)
    if "\x00" not in doc.text and "\x00" not in doc.title and metadata == doc.metadata:
        return doc
    text = doc.text.replace("\x00", "\ufffd" if doc.pages or doc.headings else "")
    return replace(doc, text=text, title=doc.title.replace("\x00", ""), metadata=metadata)


# Loaders that fill in include directives (given an :class:`Includes`).
_INCLUDING = frozenset({"md", "mdx", "rst", "adoc"})


def load_file(found: Found, max_bytes: int, read_includes: bool = True,
              included: set[Path] | None = None, shows: dict[Path, list[Path]] | None = None) -> list[Document]:
    """Read and parse one file; :class:`LoadError` says why it cannot be ingested. With ``read_includes``
    and a ``found.project``, the files its include directives name under the project's root are read
    too (added to ``included``, where given; in ``shows``, by the page's path, when the page has no text
    of its own beside them: Sphinx's ``changes.rst`` that only includes ``../CHANGES.rst``); a bare
    ``:ref:`` (reStructuredText) or ``{ref}`` (MyST) to another file of the project shows that section's
    title."""
    try:
        size = found.path.stat().st_size
    except OSError as exc:
        raise LoadError(f"{found.path.name}: cannot read ({exc.strerror})") from None
    if size > max_bytes:
        raise LoadError(f"{found.path.name}: {size} bytes is over the {max_bytes}-byte limit (GRAPHRAG_MAX_FILE_MB)")
    if size == 0:  # nothing to index and nothing lost: skipped in a folder, refused as an upload
        raise NoText(f"{found.path.name}: empty file")
    try:
        data = found.path.read_bytes()
    except OSError as exc:  # unreadable (permissions), a directory, or gone since the listing
        raise LoadError(f"{found.path.name}: cannot read ({exc.strerror or type(exc).__name__})") from None
    extra: dict[str, Any] = {}
    includes = None
    if read_includes and found.root is not None and found.file_type in _INCLUDING:
        extra["includes"] = includes = Includes(found.root, max_bytes)
    if found.project is not None and ((found.file_type == "rst" and b":ref:`" in data) or (
            found.file_type in ("md", "mdx") and b"{ref}`" in data)):
        extra["labels"] = found.project.section_labels()
    if found.project is not None and found.file_type == "rst" and b"`" in data:
        # the Sphinx project's extlinks, for the file's roles and its includes': ":issue:`123`" is "#123"
        if links := found.project.link_roles(found.path):
            extra["links"] = links
    docs = LOADERS[found.file_type](found.path, data, **extra)
    if includes is not None and included is not None:
        included.update(includes.read_files)
    if includes is not None and includes.read_files and shows is not None and not _own_text(found, data):
        shows[found.path.resolve()] = list(includes.read_files)
    if includes is not None and includes.refused:
        log.warning("%s: %d include(s) outside %s not read (%s)", found.path.name, len(includes.refused),
                    found.root, includes.refused[0])
    return _pages(found.path, found.file_type, docs)


def _own_text(found: Found, data: bytes) -> bool:
    """Whether a page has text beside what its include directives bring (read again without them)."""
    try:
        docs = LOADERS[found.file_type](found.path, data)
    except LoadError:  # NoText: nothing but the includes
        return False
    return any(_beyond_headings(d.text) for d in docs)


# Folders that hold the pieces a site's pages include (Antora's "partials/", MyST-Parser's "snippets/").
PARTIAL_FOLDERS = frozenset({"partials", "partial", "snippets", "snippet", "includes", "include", "fragments"})


def is_partial(path: Path, root: Path) -> bool:
    """Whether ``path`` is named as a partial, a file that sites show only inside the pages that include
    it: its name, or a folder's between ``root`` and it, starts with ``_`` (Docusaurus' ``_warning.mdx``,
    ``_snippets/``, Sphinx's ``_includes/``), or a folder is named for such pieces (Antora's
    ``partials/``, ``snippets/``, ``includes/``: :data:`PARTIAL_FOLDERS`). Only files another page
    included are taken for one, so Hugo's ``_index.md`` and Jekyll's ``_posts/`` stay pages."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        parts = (path.name,)
    return any(part.startswith("_") for part in parts) or any(part.lower() in PARTIAL_FOLDERS for part in parts[:-1])


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
    return _pages(path, kind, LOADERS[kind](path, data))


def _empty(path: Path) -> list[Document]:
    """A file that parsed to no text (blank, or an HTML page of scripts and icons): nothing to index."""
    raise NoText(f"{path.name}: no text content")


def load_text_document(text: str, *, source: str, title: str | None = None, kind: str = "markdown",
                       metadata: dict[str, Any] | None = None) -> Document:
    """A document from text handed in directly (REST, agent), parsed like a Markdown file."""
    meta, body = _front_matter(text, Path(source))
    named = ""
    if kind == "markdown" and not meta:
        meta, body = markdown_meta(body)
        named = header_title(meta)
    if kind == "markdown":
        body = _as_rendered(body)
    merged = {**meta, **(metadata or {})}
    return Document(source=source, title=title or named or _front_matter_title(merged) or markdown_title(body) or source,
                    text=body, kind=kind, metadata=_jsonable(merged))
