"""Include directives filled in from the files they name, as the site build does.

Documentation keeps much of what its pages show in other files: the Rust book's listings
(``{{#rustdoc_include ../listings/ch02/src/main.rs:print}}``), Sphinx's ``.. literalinclude::`` and
``.. include::``, MyST's ``{literalinclude}``, pymdownx snippets (``--8<-- "docs/snippet.md"``),
FastAPI's code includes (``{* ../../docs_src/app.py ln[1:11] hl[7] *}``), Docusaurus' MDX partials (``import Warning from
'./_warning.mdx'`` and ``<Warning />``), Jekyll's ``{% include_relative %}`` and AsciiDoc's
``include::example.java[tag=main]``. Read alone, such a page loses every example it shows.

When files are ingested from a folder, each directive is replaced by the part of the file it names,
before the page's own reader sees the text (code becomes a code block in the page's markup). Only
files under the ingest's root are read: the repository holding the ingested path (the nearest folder
above it with a ``.git``), else the path's own folder, so a page can show its own project's files and
nothing else on the machine (``../../../../etc/passwd`` is refused). Uploads and texts sent through
the API name no files and read none: their directives are left to the readers, which drop them.
``GRAPHRAG_READ_INCLUDES=false`` turns this off for folders too.

A directive whose file is missing, outside the root, binary or over the file size limit is left as it
was (the reader drops it, as before) and logged. Included text is read for directives of its own, to a
depth of :data:`MAX_DEPTH`; a document reads at most :data:`MAX_INCLUDES` files, and no more bytes in
all than the size limit of one file.
"""

from __future__ import annotations

import ast
import logging
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from graphrag.ingest.encoding import NotText, decode_text
from graphrag.ingest.textprep import (
    DirectiveFences,
    bold_title,
    fence_for,
    lines_outside_fences,
)

log = logging.getLogger(__name__)

#: Nested includes followed (a file including itself stops here).
MAX_DEPTH = 6
#: Files one document may read.
MAX_INCLUDES = 500

# Code block languages by file extension (what the site's highlighter would be told).
_LANGUAGES = {
    ".py": "python", ".pyi": "python", ".rs": "rust", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".ts": "typescript", ".tsx": "tsx", ".jsx": "jsx", ".java": "java", ".kt": "kotlin", ".go": "go", ".c": "c",
    ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".hpp": "cpp", ".cs": "csharp", ".rb": "ruby", ".php": "php",
    ".sh": "bash", ".bash": "bash", ".zsh": "bash", ".ps1": "powershell", ".sql": "sql", ".toml": "toml",
    ".yaml": "yaml", ".yml": "yaml", ".json": "json", ".xml": "xml", ".html": "html", ".css": "css",
    ".md": "markdown", ".rst": "rst", ".ini": "ini", ".cfg": "ini", ".txt": "text", ".scala": "scala",
    ".swift": "swift", ".lua": "lua", ".r": "r", ".jl": "julia", ".hs": "haskell", ".ex": "elixir", ".exs": "elixir",
    ".dockerfile": "dockerfile", ".proto": "protobuf", ".graphql": "graphql", ".cypher": "cypher", ".vue": "vue",
}

# A site's own folder (mdBook, MkDocs), where no repository is cloned.
_SITE_MARKERS = ("book.toml", "mkdocs.yml", "mkdocs.yaml")


def project_root(path: Path) -> Path:
    """The folder whose files the documents under ``path`` may include: the repository holding it (the
    nearest folder at or above it with a ``.git``), else the nearest with a site's configuration
    (``book.toml``, ``mkdocs.yml``), else ``path`` itself (a file's own folder)."""
    path = path.resolve()
    start = path if path.is_dir() else path.parent
    folders = (start, *start.parents)
    for markers in ((".git",), _SITE_MARKERS):
        for folder in folders:
            if any((folder / marker).exists() for marker in markers):
                return folder
    return start


def language_of(path: Path) -> str:
    """The code block language for a file, by its extension ("" where unknown)."""
    if path.name.lower() == "dockerfile":
        return "dockerfile"
    return _LANGUAGES.get(path.suffix.lower(), "")


@dataclass
class Includes:
    """Reads the files one document's directives name, under ``root`` only (see the module's text)."""

    root: Path
    max_bytes: int
    read_files: list[Path] = field(default_factory=list)
    read_bytes: int = 0  # all files read so far: at most max_bytes in all, as one file may be
    refused: list[str] = field(default_factory=list)  # targets outside the root

    def __post_init__(self) -> None:
        self.root = self.root.resolve()  # files are compared by their resolved paths
    def read(self, base: Path, target: str) -> tuple[Path, str] | None:
        """The file ``target`` names, relative to the folder ``base``, and its text; None (logged) when it
        cannot or may not be read."""
        target = target.strip()
        if not target or "://" in target or target.startswith(("<", "~")) or "\x00" in target:
            return None
        try:
            resolved = (base / target).resolve(strict=True)
        except (OSError, RuntimeError):
            log.info("include %r from %s: no such file", target, base)
            return None
        if not resolved.is_relative_to(self.root):
            self.refused.append(target)
            return None
        if len(self.read_files) >= MAX_INCLUDES:
            log.warning("include %r from %s: more than %d includes in one document", target, base, MAX_INCLUDES)
            return None
        try:
            if not resolved.is_file() or self.read_bytes + resolved.stat().st_size > self.max_bytes:
                log.info("include %r from %s: not a file, or over the size limit", target, base)
                return None
            data = resolved.read_bytes()
            self.read_bytes += len(data)
            text, _ = decode_text(data)
        except (OSError, NotText) as exc:
            log.info("include %r from %s: not read (%s)", target, base, exc)
            return None
        self.read_files.append(resolved)
        return resolved, text.replace("\r\n", "\n")

    def first(self, bases: list[Path], target: str) -> tuple[Path, str] | None:
        """:meth:`read` from the first of ``bases`` that holds ``target``."""
        for base in bases:
            if (base / target.strip()).exists():
                return self.read(base, target)
        return self.read(bases[0], target) if bases else None


# Line patterns end in "\r?$": a file written with Windows line endings keeps them in its lines.

# --- selecting lines --------------------------------------------------------------------------------


def select_lines(text: str, spec: str) -> str | None:
    """The lines of ``text`` a 1-based ``spec`` names: ``"3"``, ``"2-5"``, ``"7-"`` (to the end), ``"-4"``,
    several joined by ``,`` (Sphinx's ``:lines:``); None when the spec does not read."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    picked: list[str] = []
    for part in spec.replace(" ", "").split(","):
        match = re.fullmatch(r"(\d*)(-?)(\d*)", part)
        if not part or match is None or not (match.group(1) or match.group(3)):
            return None
        first = int(match.group(1) or 1)
        last = int(match.group(3)) if match.group(3) else (len(lines) if match.group(2) else first)
        if first < 1 or last < first:
            return None
        picked += lines[first - 1:last]
        if len(picked) > 2 * len(lines):  # a spec that repeats the file over and over ("1-,1-,1-,...")
            return None
    return "\n".join(picked) + "\n" if picked else None


def between_markers(text: str, start: str | None, end: str | None, *, inclusive: bool = False) -> str:
    """``text`` after the first line holding ``start`` and before the next holding ``end`` (Sphinx's
    ``:start-after:``/``:end-before:``; with ``inclusive``, ``:start-at:``/``:end-at:``)."""
    lines = text.split("\n")
    begin = 0
    if start:
        at = next((i for i, ln in enumerate(lines) if start in ln), None)
        if at is None:
            return text
        begin = at if inclusive else at + 1
    stop = len(lines)
    if end:
        at = next((i for i in range(begin + (1 if inclusive and start else 0), len(lines)) if end in lines[i]), None)
        if at is not None:
            stop = at + 1 if inclusive else at
    return "\n".join(lines[begin:stop]).rstrip("\n") + "\n"


def between_substrings(text: str, start: str | None, end: str | None) -> str:
    """``text`` after the first ``start`` and before the next ``end`` (docutils' ``include`` options,
    which match text, not lines)."""
    if start and (at := text.find(start)) >= 0:
        text = text[at + len(start):]
    if end and (at := text.find(end)) >= 0:
        text = text[:at]
    return text


def python_object(text: str, name: str) -> str | None:
    """The source of the class or function ``name`` (``Class.method`` for a method) in Python ``text``,
    decorators included (Sphinx's ``:pyobject:``)."""
    try:
        tree: ast.AST = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    node: ast.AST | None = tree
    for part in name.split("."):
        body = getattr(node, "body", [])
        node = next((n for n in body if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == part), None)
        if node is None:
            return None
    assert isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
    first = min([node.lineno] + [d.lineno for d in node.decorator_list])
    lines = text.split("\n")[first - 1:node.end_lineno]
    return textwrap.dedent("\n".join(lines)) + "\n"


def _tagged(text: str, names: list[str], start: re.Pattern[str], end: re.Pattern[str]) -> str | None:
    """The lines between ``start`` and ``end`` markers of the given names, marker lines left out; None
    when no region of those names is found."""
    out: list[str] = []
    inside: set[str] = set()
    found = False
    for line in text.split("\n"):
        opened, closed = start.search(line), end.search(line)
        if opened:
            if opened.group(1) in names:
                inside.add(opened.group(1))
                found = True
            continue
        if closed:
            inside.discard(closed.group(1))
            continue
        if inside:
            out.append(line)
    return textwrap.dedent("\n".join(out)).rstrip("\n") + "\n" if found else None


def _without(text: str, *markers: re.Pattern[str]) -> str:
    """``text`` without the lines holding one of ``markers`` (anchors, tags, section marks)."""
    return "\n".join(ln for ln in text.split("\n") if not any(m.search(ln) for m in markers))


def _indented(text: str, indent: str) -> str:
    return "\n".join(indent + ln if ln.strip() else "" for ln in text.rstrip("\n").split("\n"))


def _fenced(code: str, language: str, indent: str = "", title: str = "") -> str:
    """A Markdown fenced code block (a fence no line of the code closes), under its title in bold."""
    fence = fence_for(code.split("\n"))
    head = f"{indent}{bold_title(title, markdown=True)}\n\n" if title else ""
    return f"{head}{indent}{fence}{language}\n{_indented(code, indent)}\n{indent}{fence}"


# --- mdBook ------------------------------------------------------------------------------------------

# Bounded, so a line of many openings that never close (an upload made to be slow) reads in linear time.
_MDBOOK = re.compile(r"(\\?)\{\{#(include|rustdoc_include|playground)[ \t]+([^}\s]{1,500})[^}\n]{0,200}\}\}")
_ANCHOR = re.compile(r"ANCHOR:[ \t]*([\w-]+)")
_ANCHOR_END = re.compile(r"ANCHOR_END:[ \t]*([\w-]+)")


def _mdbook_part(text: str, spec: str) -> str | None:
    """The part of an included file an mdBook spec names: ``""`` (all), ``"name"`` (an anchor), ``"2"``,
    ``"2:"``, ``":10"``, ``"2:10"`` (lines, 1-based)."""
    if not spec:
        return _without(text, _ANCHOR, _ANCHOR_END)
    if re.fullmatch(r"\d*:?\d*", spec):
        first, _, last = spec.partition(":")
        lines = _without(text, _ANCHOR, _ANCHOR_END).split("\n")
        a = int(first) if first else 1
        b = (int(last) if last else len(lines)) if ":" in spec else a
        return "\n".join(lines[a - 1:b]) + "\n" if a >= 1 and b >= a else None
    return _tagged(text, [spec], _ANCHOR, _ANCHOR_END)


def _expand_mdbook(text: str, base: Path, includes: Includes, depth: int) -> str:
    def fill(match: re.Match[str]) -> str:
        if match.group(1):  # "\{{#include x}}" shows the directive itself
            return match.group(0)[1:]
        target, _, spec = match.group(3).partition(":")
        read = includes.read(base, target)
        part = _mdbook_part(read[1], spec) if read else None
        if read is None or part is None:
            return match.group(0)
        if match.group(2) == "playground":  # shown as a runnable block of Rust
            return _fenced(part, language_of(read[0]))
        if read[0].suffix.lower() in (".md", ".markdown"):
            part = expand_markdown(part, read[0].parent, includes, depth + 1)
        return part.rstrip("\n")

    return _MDBOOK.sub(fill, text) if "{{#" in text else text


# --- MkDocs: pymdownx snippets and FastAPI's code includes -------------------------------------------

_SNIPPET_LINE = re.compile(r"""^([ \t]*)(;?)--8<--[ \t]+(?:"([^"\n]+)"|'([^'\n]+)'|(\S+))[ \t]*\r?$""")
_SNIPPET_FENCE = re.compile(r"^([ \t]*)--8<--[ \t]*\r?$")
_SECTION_START = re.compile(r"--8<--[ \t]*\[start:([\w-]+)\]")
_SECTION_END = re.compile(r"--8<--[ \t]*\[end:([\w-]+)\]")
_CODE_INCLUDE = re.compile(r"^([ \t]*)\{\*[ \t]+(\S+)((?:[ \t]+\w+\[[^\]\n]*\])*)[ \t]*\*\}[ \t]*\r?$")
_CODE_INCLUDE_OPTION = re.compile(r"(\w+)\[([^\]\n]*)\]")


def _folder_with(base: Path, root: Path, *names: str) -> Path:
    """The nearest folder from ``base`` up to ``root`` that holds one of ``names``; ``root`` if none does."""
    for folder in (base, *base.parents):
        if any((folder / name).exists() for name in names):
            return folder
        if folder == root:
            break
    return root


def _mkdocs_folder(base: Path, root: Path) -> Path:
    """The folder of the MkDocs site ``base`` is in (its ``mkdocs.yml``), where snippets are looked up."""
    return _folder_with(base, root, "mkdocs.yml", "mkdocs.yaml")


def _snippet(spec: str, base: Path, includes: Includes, depth: int) -> str | None:
    """A snippet's text: ``file``, ``file:3:5`` (lines; several as ``file:1:3,8:9``) or ``file:name`` (a
    section between ``--8<-- [start:name]`` and ``[end:name]``), its section marks left out."""
    match = re.fullmatch(r"(.+?)((?::\d*:\d*(?:,\d*:\d*)*)|(?::-?\d+)|(?::[\w-]+))?", spec)
    if match is None:
        return None
    target, selector = match.group(1), (match.group(2) or "")[1:]
    read = includes.first([_mkdocs_folder(base, includes.root), base], target)
    if read is None:
        return None
    text = read[1]
    if selector and re.fullmatch(r"[\d:,-]+", selector):
        lines = text.split("\n")
        picked: list[str] = []
        for part in selector.split(","):
            first, _, last = part.partition(":")
            a = int(first) if first.lstrip("-").isdigit() else 1
            b = int(last) if last.isdigit() else len(lines)
            picked += lines[max(a, 1) - 1:b]
            if len(picked) > 2 * len(lines):  # repeated over and over: not a snippet a site shows
                return None
        text = "\n".join(picked)
    elif selector:
        section = _tagged(text, [selector], _SECTION_START, _SECTION_END)
        if section is None:
            return None
        text = section
    text = _without(text, _SECTION_START, _SECTION_END)
    return expand_markdown(text, read[0].parent, includes, depth + 1) if read[0].suffix.lower() in (
        ".md", ".markdown", ".txt", ".mdx") else text


def _code_include(line: str, base: Path, includes: Includes) -> str | None:
    """FastAPI's ``{* path ln[1:11] hl[7] title[...] *}`` as a fenced code block of the lines shown (the
    path is relative to the site's folder, as the build reads it, or else to the page's)."""
    match = _CODE_INCLUDE.match(line)
    if match is None:
        return None
    read = includes.first([_mkdocs_folder(base, includes.root), base], match.group(2))
    if read is None:
        return None
    options = dict(_CODE_INCLUDE_OPTION.findall(match.group(3)))
    code = read[1]
    if options.get("ln"):
        code = select_lines(code, options["ln"].replace(":", "-")) or code
    return _fenced(code, language_of(read[0]), match.group(1), options.get("title", "").strip())


def _expand_mkdocs(text: str, base: Path, includes: Includes, depth: int) -> str:
    if "--8<--" not in text and "{*" not in text:
        return text
    out: list[str] = []
    block: list[str] | None = None  # a "--8<--" fence's file names, while inside one
    fence_line = ""
    for line in text.split("\n"):
        if block is not None:
            if _SNIPPET_FENCE.match(line):
                parts = [_snippet(name.strip(), base, includes, depth) for name in block
                         if name.strip() and not name.strip().startswith(";")]
                if all(p is not None for p in parts):
                    indent = fence_line[:len(fence_line) - len(fence_line.lstrip())]
                    out.append("\n".join(_indented(p, indent) for p in parts if p))
                else:
                    out += [fence_line, *block, line]
                block = None
            else:
                block.append(line)
            continue
        if _SNIPPET_FENCE.match(line):
            block, fence_line = [], line
            continue
        if "--8<--" in line and (snip := _SNIPPET_LINE.match(line)) is not None:
            if snip.group(2):  # ";--8<--" is the directive escaped: shown as written
                out.append(line.replace(";--8<--", "--8<--", 1))
                continue
            part = _snippet(snip.group(3) or snip.group(4) or snip.group(5), base, includes, depth)
            out.append(_indented(part, snip.group(1)) if part is not None else line)
            continue
        if "{*" in line and (code := _code_include(line, base, includes)) is not None:
            out.append(code)
            continue
        out.append(line)
    if block is not None:  # an opening fence nothing closes is text
        out += [fence_line, *block]
    return "\n".join(out)


# --- Sphinx: reStructuredText and MyST ----------------------------------------------------------------

_RST_DIRECTIVE = re.compile(r"^([ \t]*)\.\.[ \t]+(literalinclude|include)::[ \t]+(\S.*?)[ \t]*\r?$")
RST_OPTION = re.compile(r"^[ \t]+:([\w-]+):(?:[ \t]+(.*?))?[ \t]*\r?$")
# Where literal text starts in reStructuredText: a paragraph ending in "::", or a code directive; the lines
# indented under it are shown as written (a directive there is an example, not a directive).
_RST_CODE = re.compile(r"^([ \t]*)\.\.[ \t]+(?:code-block|code|sourcecode|highlight|parsed-literal|doctest|testcode|"
                       r"rst:directive|prompt|ipython)::")
_MYST_DIRECTIVE = re.compile(r"^([ \t]*)(`{3,}|:{3,})\{(literalinclude|include)\}[ \t]+(\S.*?)[ \t]*\r?$")
_MYST_OPTION = re.compile(r"^[ \t]*:([\w-]+):(?:[ \t]+(.*?))?[ \t]*\r?$")


def _sphinx_source(base: Path, root: Path) -> Path:
    """The Sphinx source folder (where ``conf.py`` is) above ``base``: ``/x`` in a directive is relative to it."""
    return _folder_with(base, root, "conf.py")


def _literal(read: tuple[Path, str], options: dict[str, str]) -> str:
    """The code a ``literalinclude`` shows, its options applied in Sphinx's order (object, start, end,
    lines, dedent, prepend, append)."""
    code = read[1]
    if options.get("pyobject"):
        code = python_object(code, options["pyobject"]) or code
    if any(k in options for k in ("start-after", "start-at", "end-before", "end-at")):
        inclusive_start = "start-at" in options
        code = between_markers(code, options.get("start-at") or options.get("start-after"), None,
                               inclusive=inclusive_start)
        if "end-at" in options or "end-before" in options:
            code = between_markers(code, None, options.get("end-at") or options.get("end-before"),
                                   inclusive="end-at" in options)
    if options.get("lines"):
        code = select_lines(code, options["lines"]) or code
    if "dedent" in options:
        width = options["dedent"]
        code = textwrap.dedent(code) if not width.isdigit() else "\n".join(ln[int(width):] for ln in code.split("\n"))
    if options.get("prepend"):
        code = options["prepend"] + "\n" + code
    if options.get("append"):
        code = code.rstrip("\n") + "\n" + options["append"] + "\n"
    return code


def _included_text(read: tuple[Path, str], options: dict[str, str]) -> str:
    """The text an ``include`` inserts: docutils' ``start-line``/``end-line`` and ``start-after``/
    ``end-before`` applied."""
    text = read[1]
    if options.get("start-line", "").lstrip("-").isdigit() or options.get("end-line", "").lstrip("-").isdigit():
        lines = text.split("\n")
        start = int(options.get("start-line") or 0)
        end = int(options["end-line"]) if options.get("end-line") else len(lines)
        text = "\n".join(lines[start:end])
    return between_substrings(text, options.get("start-after"), options.get("end-before"))


def _directive_file(target: str, base: Path, includes: Includes) -> tuple[Path, str] | None:
    """The file a Sphinx directive names: relative to the page's folder, or with a leading ``/`` to the
    Sphinx source folder."""
    folder = _sphinx_source(base, includes.root) if target.startswith("/") else base
    return includes.read(folder, target.lstrip("/"))


def _as_code(read: tuple[Path, str], kind: str, options: dict[str, str]) -> tuple[str, str] | None:
    """The code and its language a ``literalinclude`` shows (or an ``include`` with ``:literal:`` or
    ``:code:``); None for an ``include`` of text."""
    if kind != "literalinclude" and "literal" not in options and "code" not in options:
        return None
    code = _literal(read, options) if kind == "literalinclude" else _included_text(read, options)
    return code, options.get("language") or options.get("code") or language_of(read[0])


def directive_block(lines: list[str], at: int, option: re.Pattern[str], indent: str,
                     closing: str | None = None) -> tuple[dict[str, str], int]:
    """The options under the directive at ``at`` and the index after its block: its option lines (and a
    MyST fence's closing line)."""
    options: dict[str, str] = {}
    end = at + 1
    while end < len(lines) and (m := option.match(lines[end])) is not None and (
            closing is not None or len(lines[end]) - len(lines[end].lstrip()) > len(indent)):
        options[m.group(1)] = (m.group(2) or "").strip()
        end += 1
    if closing is not None:
        while end < len(lines) and lines[end].strip() != closing:
            end += 1
        end = min(end + 1, len(lines))
    return options, end


class RstLiteral:
    """Where reStructuredText's literal text is, read line by line: after a paragraph ending in "::" or a
    code directive, the lines indented deeper are shown as written (a directive there is an example).
    A directive's own line ends in "::" too (".. note::"), and its content is read as usual."""

    def __init__(self) -> None:
        self.indent: int | None = None  # the indentation of the line that opened literal text, while in it

    def outside(self, line: str) -> bool:
        """Whether ``line`` is outside literal text; then :meth:`note` it, unless it is a directive handled."""
        if self.indent is not None and line.strip() and len(line) - len(line.lstrip()) <= self.indent:
            self.indent = None
        return self.indent is None

    def note(self, line: str) -> None:
        """A line outside literal text: does it open some?"""
        if line.strip() and (_RST_CODE.match(line) or (
                line.rstrip().endswith("::") and not line.lstrip().startswith(".."))):
            self.indent = len(line) - len(line.lstrip())


def expand_rst(text: str, base: Path, includes: Includes, depth: int = 0) -> str:
    """reStructuredText with its ``.. include::`` and ``.. literalinclude::`` directives filled in:
    included text at the directive's indentation (``:literal:`` or ``:code:`` as a code block), code as
    a ``code-block`` with the file's language and the directive's caption."""
    if depth > MAX_DEPTH or ("include::" not in text):
        return text
    lines = text.split("\n")
    out: list[str] = []
    literal = RstLiteral()
    i = 0
    while i < len(lines):
        line = lines[i]
        outside = literal.outside(line)
        match = _RST_DIRECTIVE.match(line) if outside and "include::" in line else None
        if match is None:
            if outside:
                literal.note(line)
            out.append(line)
            i += 1
            continue
        indent, kind, target = match.groups()
        options, end = directive_block(lines, i, RST_OPTION, indent)
        read = _directive_file(target, base, includes)
        shown = _as_code(read, kind, options) if read is not None else None
        if read is None:
            out += lines[i:end]
        elif shown is not None:
            code, language = shown
            head = [f"{indent}.. code-block:: {language}".rstrip()]
            if options.get("caption"):
                head.append(f"{indent}   :caption: {options['caption']}")
            out += [*head, "", _indented(code, indent + "   ") or f"{indent}   ", ""]
        else:
            part = _included_text(read, options)
            if read[0].suffix.lower() in (".rst", ".rest", ".txt", ".inc"):
                part = expand_rst(part, read[0].parent, includes, depth + 1)
            out += [_indented(part, indent), ""]
        i = end
    return "\n".join(out)


def _expand_myst(text: str, base: Path, includes: Includes, depth: int) -> str:
    if "include}" not in text:
        return text
    lines = text.split("\n")
    out: list[str] = []
    fences = DirectiveFences()  # a directive inside a code block is shown as written
    i = 0
    while i < len(lines):
        match = _MYST_DIRECTIVE.match(lines[i]) if fences.fence is None and "include}" in lines[i] else None
        if match is None:
            fences.in_code(lines[i])
            out.append(lines[i])
            i += 1
            continue
        indent, marker, kind, target = match.groups()
        options, end = directive_block(lines, i, _MYST_OPTION, indent, closing=marker)
        read = _directive_file(target, base, includes)
        shown = _as_code(read, kind, options) if read is not None else None
        if read is None:
            out += lines[i:end]
        elif shown is not None:
            out.append(_fenced(shown[0], shown[1], indent, options.get("caption", "")))
        else:
            part = _included_text(read, options)
            out.append(_indented(expand_markdown(part, read[0].parent, includes, depth + 1), indent))
        i = end
    return "\n".join(out)


# --- Jekyll: include_relative ------------------------------------------------------------------------

_JEKYLL_RELATIVE = re.compile(r"\{%-?[ \t]*include_relative[ \t]+(\S{1,500}?)(?:[ \t][^%\n]{0,500})?-?%\}")


def _expand_jekyll(text: str, base: Path, includes: Includes, depth: int) -> str:
    """Jekyll's ``{% include_relative file.md %}`` as the file's text (``{% include %}`` names a template of
    the site's ``_includes`` folder, filled with the page's variables, and is left to the reader)."""
    if "include_relative" not in text:
        return text

    def fill(match: re.Match[str]) -> str:
        read = includes.read(base, match.group(1).strip("\"'"))
        if read is None:
            return match.group(0)
        if read[0].suffix.lower() in (".md", ".markdown"):
            return expand_markdown(read[1], read[0].parent, includes, depth + 1).rstrip("\n")
        return read[1].rstrip("\n")

    # Liquid runs everywhere but in {% raw %} blocks, where the tag is an example.
    parts = _LIQUID_RAW.split(text)
    return "".join(part if i % 2 else _JEKYLL_RELATIVE.sub(fill, part) for i, part in enumerate(parts))


_LIQUID_RAW = re.compile(r"(\{%-?[ \t]*raw[ \t]*-?%\}.*?\{%-?[ \t]*endraw[ \t]*-?%\})", re.S)


# --- Quarto: {{< include _file.qmd >}} ---------------------------------------------------------------

_QUARTO_INCLUDE = re.compile(r"""^[ \t]*\{\{<[ \t]*include[ \t]+(["']?)([^\s"'<>]{1,500})\1[ \t]*>\}\}[ \t]*\r?$""")


def _expand_quarto(text: str, base: Path, includes: Includes, depth: int) -> str:
    """Quarto's ``{{< include _content.qmd >}}`` on a line of its own as the file's text (outside code
    blocks, where it is an example); a path starting with ``/`` is relative to the Quarto project (the
    folder of its ``_quarto.yml``)."""
    if "{{<" not in text or "include" not in text:
        return text
    lines = text.split("\n")
    for i in lines_outside_fences(lines):
        match = _QUARTO_INCLUDE.match(lines[i]) if "include" in lines[i] else None
        if match is None:
            continue
        target, folder = match.group(2), base
        if target.startswith("/"):
            folder, target = _folder_with(base, includes.root, "_quarto.yml", "_quarto.yaml"), target.lstrip("/")
        read = includes.read(folder, target)
        if read is not None:
            lines[i] = expand_markdown(read[1], read[0].parent, includes, depth + 1).rstrip("\n")
    return "\n".join(lines)


# --- MDX: partials imported and used as components ----------------------------------------------------

_MDX_IMPORT = re.compile(r"""^import[ \t]+([A-Z]\w*)[ \t]+from[ \t]+['"](\.{1,2}/[^'"\n]+\.mdx?)['"];?[ \t]*\r?$""")
_MDX_USE = re.compile(r"^([ \t]*)<([A-Z]\w*)(?:[ \t][^<>\n]*)?/>[ \t]*\r?$")


def _expand_mdx(text: str, base: Path, includes: Includes, depth: int) -> str:
    """A Docusaurus partial (``import Warning from './_warning.mdx';`` then ``<Warning />`` on a line of
    its own) as its text, outside code blocks; the import line is left to the MDX reader."""
    if "import" not in text or "/>" not in text:
        return text
    lines = text.split("\n")
    in_order = list(lines_outside_fences(lines))
    outside = set(in_order)
    partials: dict[str, str] = {}
    for number in in_order:
        if lines[number].startswith("import") and (m := _MDX_IMPORT.match(lines[number])) is not None:
            partials[m.group(1)] = m.group(2).replace("\\", "")  # prettier escapes "_" in paths: "./\_x.mdx"
    if not partials:
        return text
    out: list[str] = []
    for number, line in enumerate(lines):
        use = _MDX_USE.match(line) if number in outside and "/>" in line else None
        read = includes.read(base, partials[use.group(2)]) if use and use.group(2) in partials else None
        if use is None or read is None:
            out.append(line)
            continue
        part = _FRONT_MATTER.sub("", read[1], count=1)
        out.append(_indented(expand_markdown(part, read[0].parent, includes, depth + 1), use.group(1)))
    return "\n".join(out)


_FRONT_MATTER = re.compile(r"\A---[ \t]*\n.*?\n---[ \t]*\n", re.S)


def expand_markdown(text: str, base: Path, includes: Includes, depth: int = 0) -> str:
    """Markdown with its includes filled in: mdBook's ``{{#include}}``, ``{{#rustdoc_include}}`` and
    ``{{#playground}}``, pymdownx snippets, FastAPI's code includes, MyST's ``{include}`` and
    ``{literalinclude}``, MDX partials, Jekyll's ``include_relative``, Quarto's ``{{< include >}}``."""
    if depth > MAX_DEPTH:
        return text
    for expand in _MARKDOWN_STEPS:
        text = expand(text, base, includes, depth)
    return text


_MARKDOWN_STEPS: tuple[Callable[[str, Path, Includes, int], str], ...] = (
    _expand_mdbook, _expand_mkdocs, _expand_myst, _expand_mdx, _expand_jekyll, _expand_quarto)


# --- AsciiDoc ----------------------------------------------------------------------------------------

_ADOC_INCLUDE = re.compile(r"^(\\?)include::([^\[\s]+)\[(.*)\][ \t]*\r?$")
_ADOC_TAG = re.compile(r"\btag::([\w-]+)\[\]")
_ADOC_TAG_END = re.compile(r"\bend::([\w-]+)\[\]")


def _adoc_attributes(raw: str) -> dict[str, str]:
    return {k.strip(): v.strip().strip('"') for k, _, v in (p.partition("=") for p in re.split(r",(?=\s*\w+=)", raw))
            if k.strip()}


def _adoc_part(text: str, attributes: dict[str, str]) -> str | None:
    """The part ``lines=`` (``1..5;8``, ``-1`` for the end) or ``tag=``/``tags=`` name; with tags, the tag
    lines are left out (``tags=**``: every line but them), as Asciidoctor does."""
    if attributes.get("lines"):
        spec = re.sub(r"\.\.-1\b", "-", attributes["lines"].replace(";", ",").replace('"', "")).replace("..", "-")
        return select_lines(text, spec)
    names = [n for n in re.split(r"[;,]", attributes.get("tags") or attributes.get("tag") or "") if n]
    if not names:
        return text
    if any(n.startswith(("!", "*")) for n in names):  # wildcards and negations: all lines, tags left out
        return _without(text, _ADOC_TAG, _ADOC_TAG_END)
    return _tagged(text, names, _ADOC_TAG, _ADOC_TAG_END)


# Antora's resource ids: "example$app.rb", "partial$attrs.adoc", "html-backend:example$x.html" (a module
# of the same component; another component's, "comp:module:family$x", is not looked up).
_ANTORA_ID = re.compile(r"^(?:([\w-]+):)?(example|partial|page|image|attachment)\$(.+)$")


def _antora_folder(target: str, base: Path) -> tuple[Path, str] | None:
    """The folder and path an Antora resource id names from a page under ``modules/<module>/<family>s/``."""
    match = _ANTORA_ID.match(target)
    if match is None:
        return None
    module, family, path = match.groups()
    for folder in (base, *base.parents):
        if folder.parent.name == "modules":  # base is inside modules/<module>/...
            return folder.parent / (module or folder.name) / f"{family}s", path
    return None


# An attribute entry (":sourcedir: ../src/main/java"; ":name!:" and ":!name:" unset it) and a reference to one.
_ADOC_ENTRY = re.compile(r"^:(!?)(\w[\w-]{0,100})(!?):(?:[ \t]+([^\r\n]{0,1000}?))?[ \t]*\r?$")
_ADOC_REFERENCE = re.compile(r"\{(\w[\w-]{0,100})\}")


def _adoc_entry(line: str, attributes: dict[str, str]) -> None:
    """Note an attribute entry met on ``line`` in ``attributes`` (its value's references resolved as far
    as they go)."""
    entry = _ADOC_ENTRY.match(line) if line.startswith(":") else None
    if entry is None:
        return
    name = entry.group(2).lower()
    if entry.group(1) or entry.group(3):
        attributes.pop(name, None)
    else:
        value = entry.group(4) or ""
        attributes[name] = _ADOC_REFERENCE.sub(lambda m: attributes.get(m.group(1).lower(), m.group(0)), value)


def _adoc_target(target: str, attributes: dict[str, str]) -> str | None:
    """An include's target with its attribute references resolved; None while one names an attribute
    not defined so far (one the build sets, such as Spring REST Docs' ``{snippets}``)."""
    if "{" not in target:
        return target
    missing = False

    def value(m: re.Match[str]) -> str:
        nonlocal missing
        found = attributes.get(m.group(1).lower())
        missing = missing or found is None
        return found or ""

    resolved = _ADOC_REFERENCE.sub(value, target)
    return None if missing or "{" in resolved else resolved


def expand_asciidoc(text: str, base: Path, includes: Includes, depth: int = 0,
                    attributes: dict[str, str] | None = None) -> str:
    """AsciiDoc with its ``include::file[]`` lines filled in (``lines=``, ``tag=``, ``tags=``, ``indent=``;
    Antora's ``example$``, ``partial$`` ids in the page's own module or another of its component); an
    escaped ``\\include::`` stays as written. A target may name attributes the document (or a file it
    included before) defines, and ``{docdir}``: ``include::{sourcedir}/App.java[]``."""
    if depth > MAX_DEPTH:
        return text
    if attributes is None:
        attributes = {"docdir": str(base)}
    if "include::" not in text:  # an included file's entries still count after it ("attributes.adoc")
        for line in text.split("\n") if ":" in text else ():
            _adoc_entry(line, attributes)
        return text
    out: list[str] = []
    for line in text.split("\n"):
        _adoc_entry(line, attributes)
        match = _ADOC_INCLUDE.match(line) if line.startswith(("include::", "\\include::")) else None
        if match is None or match.group(1):
            out.append(line)
            continue
        target, folder = _adoc_target(match.group(2), attributes), base
        if target is not None and "$" in target and (antora := _antora_folder(target, base)) is not None:
            folder, target = antora
        read = includes.read(folder, target) if target is not None else None
        options = _adoc_attributes(match.group(3))
        part = _adoc_part(read[1], options) if read else None
        if read is None or part is None:
            out.append(line)
            continue
        if options.get("indent", "").isdigit():
            part = _indented(textwrap.dedent(part), " " * int(options["indent"]))
        if read[0].suffix.lower() in (".adoc", ".asciidoc", ".asc"):
            part = expand_asciidoc(part, read[0].parent, includes, depth + 1, attributes)
        out.append(part.rstrip("\n"))
    return "\n".join(out)
