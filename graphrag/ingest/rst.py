"""reStructuredText (Sphinx projects' docs, Python READMEs) to HTML with docutils, for the HTML loader.

Plain docutils knows none of Sphinx's roles and directives, and drops what it does not know: every
``:class:`Session``` would read as its markup and every ``.. versionadded::`` block vanish. So the
roles and directives a document uses are looked up first, and the unknown ones registered for that
parse (docutils keeps them in a registry of its own, per process):

- roles: code-ish ones (``:class:``, ``:func:``, ``:py:meth:``, ...) become inline code of the target's
  shown part (``~a.b.C`` -> ``C``, ``Title <label>`` -> ``Title``); the rest plain text;
- directives: code blocks stay code (``sourcecode``, ``ipython``); ones whose content comes from
  elsewhere or is site machinery (``toctree``, ``autoclass``, ``literalinclude``, ``index``) are dropped;
  API descriptions (``.. function:: connect(host)``) give their signature as code, then their content;
  any other (``versionadded``, ``seealso``, ``tab``, ``only``) gives its argument and its content.

Files are never read and raw HTML never passed through (``include``, ``raw``, ``csv-table`` with a file
are off): an upload names no file on the server.
"""

from __future__ import annotations

import re
import threading
from typing import Any

_ROLE = re.compile(r"(?<![\w`]):((?:[A-Za-z][\w.+-]*:)?[A-Za-z][\w.+-]*):`")
_DIRECTIVE = re.compile(r"^[ \t]*\.\.[ \t]+((?:[A-Za-z][\w.+-]*:)?[A-Za-z][\w.+-]*)::", re.M)
# Roles whose text is code: Python/C/C++/JS domain objects, and options, environment variables, files.
_CODE_ROLES = frozenset({
    "class", "func", "meth", "attr", "mod", "obj", "data", "const", "exc", "type", "member", "var", "macro",
    "struct", "union", "enum", "enumerator", "expr", "texpr", "envvar", "option", "command", "program", "file",
    "samp", "makevar", "keyword", "setting", "confval", "event", "directive", "role", "paramref", "meta"})
_DROPPED_DIRECTIVES = frozenset({
    "toctree", "index", "literalinclude", "include", "highlight", "currentmodule", "module", "automodule",
    "autoclass", "autofunction", "automethod", "autoattribute", "autodata", "autoexception", "autosummary",
    "autoprogram", "automodapi", "autoapimodule", "graphviz", "inheritance-diagram", "plot", "tabularcolumns",
    "default-role", "default-domain", "sectionauthor", "moduleauthor", "codeauthor", "spelling:word-list",
    "testsetup", "testcleanup", "jinja", "raw", "meta", "only-html"})
_CODE_DIRECTIVES = frozenset({"sourcecode", "code-block", "ipython", "doctest", "testcode", "testoutput",
                              "prompt", "jupyter-execute", "code-cell", "console"})
_DESCRIPTIONS = frozenset({
    "function", "class", "method", "attribute", "data", "exception", "decorator", "decoratormethod",
    "staticmethod", "classmethod", "property", "type", "member", "macro", "struct", "var", "enum", "envvar",
    "option", "describe", "object", "program", "cmdoption", "confval", "setting", "event", "directive", "role"})
_SETTINGS = {
    "report_level": 5, "halt_level": 5, "file_insertion_enabled": False, "raw_enabled": False,
    "_disable_config": True, "output_encoding": "unicode", "embed_stylesheet": False, "stylesheet_path": "",
    "syntax_highlight": "none", "doctitle_xform": True, "sectsubtitle_xform": False, "warning_stream": False,
    "input_encoding": "unicode", "character_level_inline_markup": False, "line_length_limit": 100_000,
}
# docutils' role and directive registries are per process; one parse at a time registers and reads them.
_LOCK = threading.Lock()


def _base(name: str) -> str:
    return name.rsplit(":", 1)[-1]


def _shown(text: str) -> str:
    """The part of a role's text a reader sees: ``Title <target>`` -> ``Title``; ``~a.b.C`` -> ``C``;
    ``!name`` -> ``name``."""
    text = " ".join(text.split())
    m = re.fullmatch(r"(.+?)\s*<[^<>]*>", text)
    if m:
        return m.group(1)
    text = text.lstrip("!")
    if text.startswith("~"):
        text = re.split(r"[.:]", text[1:])[-1]
    return text


def _role(code: bool) -> Any:
    from docutils import nodes

    def role(name: str, rawtext: str, text: str, lineno: int, inliner: Any,
             options: Any = None, content: Any = None) -> tuple[list[Any], list[Any]]:
        shown = _shown(text)
        node = nodes.literal(rawtext, shown) if code else nodes.Text(shown)
        return [node], []

    return role


class _AnyOptions(dict[str, Any]):
    """An option spec that takes every option (Sphinx directives have many; their values are not text)."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Any:
        from docutils.parsers.rst import directives

        return directives.unchanged


def _directive(name: str) -> Any:
    from docutils import nodes
    from docutils.parsers.rst import Directive

    base = _base(name)

    class Lenient(Directive):
        required_arguments = 0
        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True
        option_spec = _AnyOptions()

        def run(self) -> list[Any]:
            argument = " ".join(self.arguments[0].split()) if self.arguments else ""
            if base in _DROPPED_DIRECTIVES or base.startswith("auto"):
                return []
            if base in _CODE_DIRECTIVES:
                block = nodes.literal_block("\n".join(self.content), "\n".join(self.content))
                if argument:
                    block["classes"] += ["code", argument.split()[0].lower()]
                return [block]
            out: list[Any] = []
            if base in _DESCRIPTIONS and argument:
                out.append(nodes.paragraph("", "", nodes.literal(argument, argument)))
            elif argument:
                if base.startswith(("versionadded", "versionchanged", "versionremoved", "deprecated")):
                    label = base.replace("version", "version ").capitalize()
                    argument = f"{label}: {argument}"
                inline, _ = self.state.inline_text(argument, self.lineno)  # links and roles in it
                out.append(nodes.paragraph("", "", *inline))
            if self.content:
                holder = nodes.container()
                self.state.nested_parse(self.content, self.content_offset, holder)
                out.extend(holder.children)
            return out

    return Lenient


def _register(text: str) -> None:
    """Register the roles and directives ``text`` uses that docutils does not know."""
    from docutils.parsers.rst import directives, languages, roles
    from docutils.utils import Reporter

    language = languages.get_language("en", Reporter("", 5, 5))
    for name in set(_ROLE.findall(text)):
        known, _ = roles.role(name, language, 0, Reporter("", 5, 5))
        if known is None:
            roles.register_local_role(name, _role(_base(name) in _CODE_ROLES or name.startswith(("py:", "c:", "cpp:", "js:"))))
    registered = getattr(directives, "_directives", {})
    for name in {n.lower() for n in _DIRECTIVE.findall(text)}:
        canonical = language.directives.get(name, name)
        if name not in registered and canonical not in directives._directive_registry:
            directives.register_directive(name, _directive(name))


# Sphinx reads a field list opening the file as the file's metadata (":orphan:", ":tocdepth: 2").
_FILE_FIELDS = re.compile(r"\A(?:[ \t]*\n)*(?::[\w:-]+:(?:[ \t][^\n]*)?\n)+")


def rst_to_html(text: str) -> str:
    """``text`` (reStructuredText) as an HTML5 page whose ``<main>`` is the document."""
    from docutils.core import publish_string
    from docutils.writers.html5_polyglot import Writer

    text = _FILE_FIELDS.sub(lambda m: "\n" * m.group(0).count("\n"), text.replace("\r\n", "\n"))
    with _LOCK:
        _register(text)
        page = str(publish_string(text, writer=Writer(), settings_overrides=_SETTINGS))
    # Inline literals are <span class="docutils literal">; as <code> the HTML loader keeps them as code.
    return _LITERAL.sub(r"<code>\1</code>", page)


_LITERAL = re.compile(r'<span class="docutils literal">([^<]*)</span>')
