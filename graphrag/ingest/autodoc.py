"""API reference pages filled in from the project's Python sources: Sphinx's autodoc directives and
mkdocstrings' ``::: package.module`` lines.

A Python project's API reference is written in its code: ``docs/api.rst`` says ``.. autoclass::
Flask`` with ``:members:`` and Sphinx fills in the class's signature, docstring and its methods'; an
MkDocs site says ``::: fastapi.FastAPI``. Read as written, such a page holds headings and names and
none of the reference (Flask's, pytest's and Sphinx's docs have 477 such directives; FastAPI's 22
reference pages were skipped as having no text of their own). For files ingested from a folder, the
names are looked up in the project's modules, read with :mod:`ast` and never imported (no code of
the project runs): a module file under the project root, its ``src/`` or ``lib/``, a name followed
through the module's ``from .app import Flask`` re-exports (six steps at most). Each directive gets
the object's signature and docstring; ``:members:`` (mkdocstrings: always, or its ``members:`` list)
adds the public members that have a docstring, as autodoc does, ``:inherited-members:`` those of base
classes the project defines, ``:exclude-members:`` leaves some out; ``automodule`` gives the
module's docstring, its members those of its public classes and functions (``__all__`` where the
module lists it). A name the project does not define (a re-export from another package) leaves the
directive as before. Module files are read through :class:`~graphrag.ingest.includes.Includes`, so
the project root, the byte budget and the ingest's ``included`` count apply to them as to includes.
"""

from __future__ import annotations

import ast
import inspect
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from graphrag.ingest.includes import RST_OPTION, Includes, RstLiteral, directive_block
from graphrag.ingest.textprep import HEADING_LINE, SETEXT_UNDERLINE, fence_for, lines_outside_fences

log = logging.getLogger(__name__)

MAX_HOPS = 6  # re-exports followed for one name
MAX_MEMBERS = 300  # members shown for one directive
# Text the directives of one document may add: inherited members repeat a base class's docstrings in
# each subclass, so a crafted (or very large) package could multiply its size; Flask's whole API page
# adds 121,000 characters. Past this, directives are left as written (with a warning).
MAX_ADDED_CHARS = 5_000_000
_SOURCE_DIRS = ("", "src", "lib", "python")
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.]*")


@dataclass
class _Module:
    name: str
    package: bool  # an __init__.py: relative imports start from the module itself
    tree: ast.Module
    lines: list[str]


@dataclass
class PyObject:
    """A documented object: its kind (``class``, ``function``, ``method``, ``attribute``, ``module``), the
    name a reader sees, its signature (parameters in parentheses, or ""), docstring and members."""

    kind: str
    name: str
    signature: str
    doc: str
    members: list[PyObject] = field(default_factory=list)
    params: list[tuple[str, str]] = field(default_factory=list)  # (name, doc) from Doc() annotations


class PythonSources:
    """The project's Python modules by dotted name, parsed once per document's ingest."""

    def __init__(self, includes: Includes) -> None:
        self.includes = includes
        self._modules: dict[str, _Module | None] = {}
        self._package_bases: dict[str, list[Path]] = {}
        self.added = 0  # characters the document's directives added so far

    def spend(self, lines: list[str]) -> bool:
        """Count ``lines`` against :data:`MAX_ADDED_CHARS`; False (logged once) when they would pass it."""
        size = sum(len(line) + 1 for line in lines)
        if self.added + size > MAX_ADDED_CHARS:
            if self.added <= MAX_ADDED_CHARS:
                log.warning("API reference directives past %d added characters left as written", MAX_ADDED_CHARS)
                self.added = MAX_ADDED_CHARS + 1
            return False
        self.added += size
        return True

    def module(self, dotted: str) -> _Module | None:
        if dotted not in self._modules:
            self._modules[dotted] = self._read(dotted)
        return self._modules[dotted]

    def _read(self, dotted: str) -> _Module | None:
        if not all(part.isidentifier() for part in dotted.split(".")):
            return None
        relative = Path(*dotted.split("."))
        for base in self._bases(dotted.split(".", 1)[0]):
            # a stub (.pyi) stands for a compiled module: pydantic_core's classes are written only there
            for target, package in ((relative.with_suffix(".py"), False), (relative / "__init__.py", True),
                                    (relative.with_suffix(".pyi"), False), (relative / "__init__.pyi", True)):
                if not (base / target).is_file():
                    continue
                read = self.includes.read(base, str(target))
                if read is None:
                    return None
                try:
                    tree = ast.parse(read[1])
                except (SyntaxError, ValueError, RecursionError, MemoryError):
                    return None
                return _Module(dotted, package, tree, read[1].split("\n"))
        return None

    def _bases(self, top: str) -> list[Path]:
        """The folders a top-level package ``top`` may be found in: the project root, its ``src/``,
        ``lib/`` and ``python/``, else a folder up to three levels down that holds ``top/__init__.py``
        (a monorepo's ``pydantic-core/python/pydantic_core``)."""
        if top not in self._package_bases:
            root = self.includes.root
            bases = [root / folder if folder else root for folder in _SOURCE_DIRS]
            if not any(_is_package(base / top) or (base / f"{top}.py").is_file() for base in bases):
                bases += _package_parents(root, top)
            self._package_bases[top] = bases
        return self._package_bases[top]

    def find(self, dotted: str, hops: int = 0) -> tuple[_Module, ast.AST | None] | None:
        """The module and the definition (None: the module itself) ``dotted`` names."""
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            module = self.module(".".join(parts[:cut]))
            if module is None:
                continue
            if cut == len(parts):
                return module, None
            return self._member(module, parts[cut:], hops)
        return None

    def _member(self, module: _Module, path: list[str], hops: int) -> tuple[_Module, ast.AST | None] | None:
        node = _defined(module.tree.body, path[0])
        if isinstance(node, ast.ImportFrom):  # a re-export: follow it
            if hops >= MAX_HOPS:
                return None
            source = _absolute(module, node)
            original = next(a.name for a in node.names if (a.asname or a.name) == path[0])
            return self.find(".".join([source, original, *path[1:]]), hops + 1) if source else None
        for name in path[1:]:
            if not isinstance(node, ast.ClassDef):
                return None
            found = self._in_class(module, node, name, 0)
            if found is None:
                return None
            module, node = found
        return (module, node) if node is not None else None

    def _in_class(self, module: _Module, cls: ast.ClassDef, name: str, depth: int) -> tuple[_Module, ast.AST] | None:
        """Where class ``cls`` (of ``module``) gets member ``name``: its body, else a base class the
        project defines (``DataArray.sizes`` from a mixin), as ``DataArray.sizes`` shows it."""
        node = _defined(cls.body, name)
        if node is not None:
            return module, node
        if depth >= 3:
            return None
        for base_module, base in self._bases_of(module, cls):
            inherited = self._in_class(base_module, base, name, depth + 1)
            if inherited is not None:
                return inherited
        return None

    def _bases_of(self, module: _Module, cls: ast.ClassDef) -> Iterator[tuple[_Module, ast.ClassDef]]:
        """The base classes of ``cls`` the project defines, each with its module (``Generic[T]`` read
        as ``Generic``)."""
        for base in cls.bases:
            base_name = ast.unparse(base.value if isinstance(base, ast.Subscript) else base)
            if not _IDENTIFIER.fullmatch(base_name):
                continue
            found = self._base(module, base_name)
            if found is not None and isinstance(found[1], ast.ClassDef):
                yield found[0], found[1]

    def describe(self, dotted: str, shown: str, options: Options) -> PyObject | None:
        """What the reference shows for ``dotted`` (``shown``: the name the directive wrote)."""
        try:
            return self._describe(dotted, shown, options)
        except RecursionError:  # an expression nested too deeply for ast.unparse
            return None

    def describe_in(self, current: str, name: str, shown: str, options: Options) -> PyObject | None:
        """:meth:`describe` of ``name`` as Sphinx resolves it: in the ``current`` module (the
        ``.. currentmodule::`` before it) first, else as a full dotted name."""
        for dotted in dict.fromkeys([f"{current}.{name}" if current else name, name]):
            obj = self.describe(dotted, shown, options)
            if obj is not None:
                return obj
        return None

    def _describe(self, dotted: str, shown: str, options: Options) -> PyObject | None:
        found = self.find(dotted)
        if found is None:
            return None
        module, node = found
        if node is None:
            obj = PyObject("module", shown, "", ast.get_docstring(module.tree) or "")
            if options.members:
                obj.members = self._module_members(module, options)
            return obj
        obj = _describe(module, node, shown)
        if isinstance(node, ast.ClassDef) and options.members:
            obj.members = self._class_members(module, node, options, set(), 0)
        return obj

    def _module_members(self, module: _Module, options: Options) -> list[PyObject]:
        if options.only:
            return self._listed_members(module, options)
        listed = _all_names(module.tree)
        out = []
        for node in module.tree.body:
            if not isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            if not options.wants(node.name, listed) or not ast.get_docstring(node):
                continue
            obj = _describe(module, node, node.name)
            if isinstance(node, ast.ClassDef):
                obj.members = self._class_members(module, node, options, set(), 0)
            out.append(obj)
        return out[:MAX_MEMBERS]

    def _listed_members(self, module: _Module, options: Options) -> list[PyObject]:
        """The members a directive lists (mkdocstrings' ``members:``, autodoc's ``:members: a, b``), in
        its order, wherever the module has them from (``from ._core import SchemaValidator``)."""
        out = []
        for name in options.only:
            if name in options.exclude:
                continue
            found = self.find(f"{module.name}.{name}")
            if found is None or found[1] is None or isinstance(found[1], ast.ImportFrom):
                continue
            obj = _describe(found[0], found[1], name)
            if isinstance(found[1], ast.ClassDef):  # the list names the module's members, not the class's
                inner = Options(members=True, inherited=options.inherited, exclude=options.exclude)
                obj.members = self._class_members(found[0], found[1], inner, set(), 0)
            if obj.doc or obj.signature:
                out.append(obj)
        return out[:MAX_MEMBERS]

    def _class_members(self, module: _Module, cls: ast.ClassDef, options: Options, seen: set[str],
                       depth: int) -> list[PyObject]:
        out: list[PyObject] = []
        for name, node in _members(cls):
            if name in seen or not options.wants(name, None):
                continue
            seen.add(name)
            obj = _describe(module, node, name)
            if obj.doc:
                out.append(obj)
        if options.inherited and depth < 3:
            for base_module, base in self._bases_of(module, cls):
                out += self._class_members(base_module, base, options, seen, depth + 1)
        return out[:MAX_MEMBERS]

    def _base(self, module: _Module, name: str) -> tuple[_Module, ast.AST | None] | None:
        """A base class named in ``module``: defined there, imported into it, or a dotted name."""
        return self._member(module, name.split("."), 0) or (self.find(name) if "." in name else None)


@dataclass
class Options:
    """Which members a directive shows."""

    members: bool = False
    inherited: bool = False
    only: tuple[str, ...] = ()  # ":members: a, b", mkdocstrings' members list, in its order
    exclude: frozenset[str] = frozenset()

    def wants(self, name: str, listed: frozenset[str] | None) -> bool:
        if name in self.exclude:
            return False
        if self.only:
            return name in self.only
        if listed is not None:
            return name in listed
        return not name.startswith("_")


def _is_package(folder: Path) -> bool:
    return (folder / "__init__.py").is_file() or (folder / "__init__.pyi").is_file()


# Folders a package search does not enter: tests, docs, environments and build output.
_NOT_SOURCES = frozenset({"tests", "test", "docs", "doc", "node_modules", "site-packages", "build", "dist",
                          "venv", "__pycache__", "target", "examples"})


def _package_parents(root: Path, top: str, depth: int = 3) -> list[Path]:
    """Folders under ``root`` (at most ``depth`` levels down) that hold the package ``top``."""
    found: list[Path] = []
    level = [root]
    for _ in range(depth):
        below: list[Path] = []
        for folder in level:
            try:
                children = sorted(c for c in folder.iterdir() if c.is_dir() and not c.is_symlink())
            except OSError:
                continue
            for child in children:
                if child.name.startswith((".", "_")) or child.name in _NOT_SOURCES:
                    continue
                if child.name == top and _is_package(child) and folder != root:
                    found.append(folder)
                below.append(child)
        level = below[:2000]  # a bound on a very wide tree
    return found


def _defined(body: list[ast.stmt], name: str) -> ast.AST | None:
    """The last statement of ``body`` that binds ``name``: a definition, an assignment, a from-import (a
    property's setter or deleter and an ``@overload`` stub are not: the property or the function is)."""
    found: ast.AST | None = None
    for node in body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            if isinstance(node, ast.ClassDef) or found is None or not _accessor(node):
                found = node
        elif isinstance(node, ast.ImportFrom) and any((a.asname or a.name) == name for a in node.names):
            found = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and name in _targets(node):
            found = node
        elif isinstance(node, ast.If):  # "if TYPE_CHECKING:" or a version test: either branch may define it
            found = _defined(node.body, name) or _defined(node.orelse, name) or found
    return found


def _targets(node: ast.Assign | ast.AnnAssign) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {t.id for t in targets if isinstance(t, ast.Name)} | {
        t.attr for t in targets if isinstance(t, ast.Attribute)}


def _absolute(module: _Module, node: ast.ImportFrom) -> str | None:
    """The module a ``from ... import`` reads from, as an absolute dotted name."""
    if node.level == 0:
        return node.module
    parts = module.name.split(".")
    keep = len(parts) - node.level + (1 if module.package else 0)
    if keep < 0:
        return None
    return ".".join([*parts[:keep], *([node.module] if node.module else [])])


def _all_names(tree: ast.Module) -> frozenset[str] | None:
    """The module's ``__all__`` when it is a literal list or tuple of strings."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and "__all__" in _targets(node) and isinstance(node.value, (ast.List, ast.Tuple)):
            names = [e.value for e in node.value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            return frozenset(names)
    return None


def _members(cls: ast.ClassDef) -> Iterator[tuple[str, ast.AST]]:
    """A class body's methods, properties and documented attributes, in order."""
    body = cls.body
    for i, node in enumerate(body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if _accessor(node):
                continue
            yield node.name, node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)) and i + 1 < len(body) and _string(body[i + 1]):
            for name in sorted(_targets(node)):
                yield name, node


def _accessor(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A property's setter or deleter, or an ``@overload`` stub: not what the reference shows."""
    return any(_decorator(d) in ("setter", "deleter", "overload") for d in node.decorator_list)


def _decorator(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _string(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
        return node.value.value
    return None


def _describe(module: _Module, node: ast.AST, shown: str) -> PyObject:
    if isinstance(node, ast.ClassDef):
        init = next((n for n in node.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                     and n.name == "__init__"), None)
        signature, params = _parameters(init, method=True) if init else ("", [])
        return PyObject("class", shown, signature, ast.get_docstring(node) or "", params=params)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        decorators = {_decorator(d) for d in node.decorator_list}
        if "property" in decorators or "cached_property" in decorators:
            return PyObject("attribute", shown, "", ast.get_docstring(node) or "")
        method = bool(node.args.args) and node.args.args[0].arg in ("self", "cls")
        kind = "method" if method else "function"
        signature, params = _parameters(node, method)
        return PyObject(kind, shown, signature, ast.get_docstring(node) or "", params=params)
    return PyObject("attribute", shown, "", _attribute_doc(module, node))


def _attribute_doc(module: _Module, node: ast.AST) -> str:
    """An attribute's docstring: the string after its assignment, or its ``#:`` comment lines above."""
    for body in _bodies(module.tree):
        for i, stmt in enumerate(body):
            if stmt is node and i + 1 < len(body) and (text := _string(body[i + 1])) is not None:
                return inspect.cleandoc(text)
    line = getattr(node, "lineno", 0) - 2
    comments: list[str] = []
    while 0 <= line < len(module.lines) and module.lines[line].lstrip().startswith("#:"):
        comments.insert(0, module.lines[line].lstrip()[2:].strip())
        line -= 1
    return "\n".join(comments)


def _bodies(tree: ast.Module) -> Iterator[list[ast.stmt]]:
    yield tree.body
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            yield node.body


def _parameters(node: ast.FunctionDef | ast.AsyncFunctionDef | None,
                method: bool) -> tuple[str, list[tuple[str, str]]]:
    """The signature (without ``self``/``cls`` for a method) and the parameters documented in their
    annotations: ``Annotated[bool, Doc("...")]`` (PEP 727, FastAPI's way) shows as ``bool`` and gives
    ``("debug", "...")``."""
    if node is None:
        return "()", []
    documented: list[tuple[str, str]] = []

    def simple(arg: ast.arg) -> ast.arg:
        annotation = arg.annotation
        if (isinstance(annotation, ast.Subscript) and _decorator(annotation.value) == "Annotated"
                and isinstance(annotation.slice, ast.Tuple) and annotation.slice.elts):
            for extra in annotation.slice.elts[1:]:
                if (isinstance(extra, ast.Call) and _decorator(extra.func) == "Doc" and extra.args
                        and isinstance(extra.args[0], ast.Constant) and isinstance(extra.args[0].value, str)):
                    documented.append((arg.arg, inspect.cleandoc(extra.args[0].value)))
            annotation = annotation.slice.elts[0]
        return ast.arg(arg=arg.arg, annotation=annotation)

    args = node.args
    positional = [*args.posonlyargs, *args.args]
    drop = 1 if method and positional else 0
    posonly = [simple(a) for a in args.posonlyargs][drop:]
    plain = [simple(a) for a in args.args][max(0, drop - len(args.posonlyargs)):]
    shown = ast.arguments(posonlyargs=posonly, args=plain,
                          vararg=simple(args.vararg) if args.vararg else None,
                          kwonlyargs=[simple(a) for a in args.kwonlyargs], kw_defaults=args.kw_defaults,
                          kwarg=simple(args.kwarg) if args.kwarg else None, defaults=args.defaults)
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    return f"({ast.unparse(shown)}){returns}", documented


# --- Sphinx autodoc ----------------------------------------------------------------------------------

_AUTO = re.compile(r"^([ \t]*)\.\.[ \t]+(?:py:)?auto(module|class|function|method|exception|data|attribute|"
                   r"decorator|property)::[ \t]+([A-Za-z_][\w.]{0,300})[ \t]*\r?$")
_CURRENT = re.compile(r"^[ \t]*\.\.[ \t]+(?:py:)?(?:module|currentmodule)::[ \t]+([A-Za-z_][\w.]{0,300})[ \t]*\r?$")
_NESTED = {"class": "class", "function": "function", "method": "method", "attribute": "attribute",
           "module": "module"}


def _names(value: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(n.strip() for n in value.split(",") if n.strip()))


def _rst_options(options: dict[str, str]) -> Options:
    members = "members" in options
    return Options(members=members, inherited="inherited-members" in options,
                   only=_names(options.get("members", "")), exclude=frozenset(_names(options.get("exclude-members", ""))))


_RST_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}[ \t]*$")


def _rst_sections(doc: str) -> list[str]:
    """A docstring's lines with its section titles ("Parameters" over "----------", NumPy's style) as
    rubrics: a section title inside a directive is an error to docutils."""
    lines = doc.split("\n")
    for i in range(len(lines) - 1):
        title = lines[i].strip()
        if title and not lines[i][:1].isspace() and _RST_UNDERLINE.match(lines[i + 1]) and \
                len(lines[i + 1].strip()) >= len(title):
            lines[i], lines[i + 1] = f".. rubric:: {title}", ""
    return lines


def _rst_object(obj: PyObject, directive: str, indent: str) -> list[str]:
    inner = indent + "   "
    out = [f"{indent}.. {directive}:: {obj.name}{obj.signature}", ""]
    if obj.doc:
        out += [inner + line if line.strip() else "" for line in _rst_sections(obj.doc)] + [""]
    for name, doc in obj.params:
        first, *rest = doc.split("\n") or [""]
        out += [f"{inner}:param {name}: {first}", *(f"{inner}   {line}" if line.strip() else "" for line in rest)]
    if obj.params:
        out.append("")
    for member in obj.members:
        out += _rst_object(member, _NESTED.get(member.kind, "attribute"), inner)
    return out


def expand_autodoc_rst(text: str, includes: Includes) -> str:
    """reStructuredText with its autodoc directives filled in from the project's Python sources (see the
    module's text); a name not found keeps its directive as written."""
    if ".. auto" not in text and ".. py:auto" not in text:
        return text
    sources = PythonSources(includes)
    lines = text.split("\n")
    out: list[str] = []
    current = ""
    literal = RstLiteral()
    i = 0
    while i < len(lines):
        line = lines[i]
        outside = literal.outside(line)
        match = _AUTO.match(line) if outside and "auto" in line else None
        if match is None and outside and (summary := _AUTOSUMMARY.match(line)) is not None:
            shown, end = _autosummary(lines, i, summary.group(1), current, sources)
            if shown is not None:
                out += shown
                i = end
                continue
        if match is None:
            if outside and (m := _CURRENT.match(line)) is not None:
                current = m.group(1)
            elif outside:
                literal.note(line)
            out.append(line)
            i += 1
            continue
        indent, kind, name = match.groups()
        options, end = directive_block(lines, i, RST_OPTION, indent)
        obj = sources.describe_in(current, name, name, _rst_options(options))
        if kind == "module":
            current = name
        shown = _rst_object(obj, f"auto{kind}", indent) if obj is not None else []
        if obj is None or not sources.spend(shown):
            out.append(line)
            i += 1
            continue
        out += shown
        i = end  # the directive's own content (after its options) follows, as Sphinx shows it
    return "\n".join(out)


_AUTOSUMMARY = re.compile(r"^([ \t]*)\.\.[ \t]+autosummary::[ \t]*\r?$")
# The kinds of directive the pages autosummary generates (its default templates) show an object with.
_DIRECTIVE = {"class": "autoclass", "function": "autofunction", "method": "automethod",
              "attribute": "autoattribute", "module": "automodule"}


def _autosummary(lines: list[str], at: int, indent: str, current: str,
                 sources: PythonSources) -> tuple[list[str] | None, int]:
    """An ``autosummary`` table as its page shows it: each name with its signature (unless
    ``:nosignatures:``) and the first sentence of its docstring; with ``:toctree:``, Sphinx generates a
    page for each, so the object's whole reference (signature and docstring, as the default templates
    show it) follows the table. ``(None, at)`` when no name is found in the project's sources, so
    that the directive is read as written; the index after the directive's content."""
    options, end = directive_block(lines, at, RST_OPTION, indent)
    names: list[str] = []
    while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > len(indent)):
        entry = lines[end].strip()
        if entry and not entry.startswith(".."):
            names.append(entry)
        end += 1
    found: list[tuple[str, PyObject | None]] = []
    for entry in names:
        dotted = entry.lstrip("~").split()[0]
        shown = dotted.rsplit(".", 1)[-1] if entry.startswith("~") else dotted
        found.append((shown, sources.describe_in(current, dotted, shown, Options())))
    if not any(obj is not None for _, obj in found):
        return None, at
    out: list[str] = []
    for shown, obj in found:
        signature = "" if obj is None or "nosignatures" in options else obj.signature
        summary = _first_sentence(obj.doc) if obj is not None else ""
        out.append(f"{indent}- ``{shown}{signature}``" + (f": {summary}" if summary else ""))
    out.append("")
    if "toctree" in options:
        for _, obj in found:
            if obj is not None:
                out += _rst_object(obj, _DIRECTIVE.get(obj.kind, "autoattribute"), indent)
    if not sources.spend(out):
        return None, at
    return out, end


def _first_sentence(doc: str) -> str:
    """A docstring's summary as autosummary takes it: its first paragraph up to the first full stop."""
    paragraph = " ".join(doc.strip().split("\n\n", 1)[0].split()) if doc.strip() else ""
    if re.match(r"[-=~^]{3,}", doc.strip().split("\n", 1)[-1].strip()) and "\n" in doc.strip():
        return ""  # a docstring that opens with a section ("Parameters" over dashes) has no summary
    m = re.search(r"^.*?\.(?=\s|$)", paragraph)
    return (m.group(0) if m else paragraph).replace("``", "`")


# --- mkdocstrings ------------------------------------------------------------------------------------

_MKDOCSTRINGS = re.compile(r"^:::[ \t]+([A-Za-z_][\w.]{0,300})[ \t]*\r?$")


def _markdown_object(obj: PyObject, level: int, owner: str = "") -> list[str]:
    name = f"{owner}.{obj.name}" if owner and obj.kind != "module" else obj.name
    out = [f"{'#' * level} `{name}`", ""]
    if obj.signature:
        signature = f"{obj.name.rsplit('.', 1)[-1]}{obj.signature}"
        fence = fence_for([signature])
        out += [f"{fence}python", signature, fence, ""]
    if obj.doc:
        out += [_nested_headings(obj.doc, level), ""]
    if obj.params:
        out += ["**Parameters**", ""]
        for param, doc in obj.params:
            first, *rest = doc.split("\n") or [""]
            out += [f"- `{param}`: {first}", *("  " + line if line.strip() else "" for line in rest)]
        out.append("")
    for member in obj.members:
        out += _markdown_object(member, min(level + 1, 6), obj.name.rsplit(".", 1)[-1])
    return out


def _nested_headings(doc: str, level: int) -> str:
    """A Markdown docstring with its headings ("## Example") moved below the object's heading ``level``."""
    lines = doc.split("\n")
    outside = list(lines_outside_fences(lines))
    text = set(outside)
    for i in outside:
        if (m := HEADING_LINE.match(lines[i])) is not None:
            lines[i] = f"{'#' * min(6, level + len(m.group(1)))} {m.group(2)}"
        elif (i + 1 in text and lines[i].strip() and not lines[i].startswith((" ", "\t"))
              and (u := SETEXT_UNDERLINE.match(lines[i + 1])) is not None):  # "Usage" over "====="
            lines[i] = f"{'#' * min(6, level + (1 if u.group(1)[0] == '=' else 2))} {lines[i].strip()}"
            lines[i + 1] = ""
    return "\n".join(lines)


def _mkdocstrings_options(block: list[str]) -> Options:
    """mkdocstrings' options under ``:::`` (YAML: ``options: {members: [...] | false, inherited_members}``)."""
    try:
        data = yaml.safe_load("\n".join(block)) if block else None
    except yaml.YAMLError:
        data = None
    settings = data.get("options") if isinstance(data, dict) else None
    settings = settings if isinstance(settings, dict) else {}
    members = settings.get("members", True)
    only = tuple(dict.fromkeys(str(m) for m in members)) if isinstance(members, list) else ()
    return Options(members=members is not False, inherited=bool(settings.get("inherited_members")), only=only)


def expand_mkdocstrings(text: str, includes: Includes) -> str:
    """Markdown with its mkdocstrings lines (``::: package.Class`` and their indented options) filled in
    from the project's Python sources: a heading per object and member, its signature as code, its
    docstring; a name not found keeps its line (the site-markup pass blanks it)."""
    if ":::" not in text:
        return text
    sources = PythonSources(includes)
    lines = text.split("\n")
    outside = set(lines_outside_fences(lines))  # in a code block, a ":::" line is an example
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        match = _MKDOCSTRINGS.match(line) if i in outside and line.startswith(":::") else None
        if match is None:
            out.append(line)
            i += 1
            continue
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or lines[end][:1] in " \t") and (
                lines[end].strip() or (end + 1 < len(lines) and lines[end + 1][:1] in " \t")):
            end += 1
        dotted = match.group(1)
        obj = sources.describe(dotted, dotted, _mkdocstrings_options(lines[i + 1:end]))
        shown = _markdown_object(obj, 2) if obj is not None else []
        if obj is None or not sources.spend(shown):
            out.append(line)
            i += 1
            continue
        out += shown
        i = end
    return "\n".join(out)
