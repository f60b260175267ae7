"""reStructuredText (Sphinx projects' docs, Python READMEs) to HTML with docutils, for the HTML loader.

Plain docutils knows none of Sphinx's roles and directives, and drops what it does not know: every
``:class:`Session``` would read as its markup and every ``.. versionadded::`` block vanish. So the
roles and directives a document uses are looked up first, and the unknown ones registered for that
parse only (docutils keeps them in registries of its own, per process; they are restored after each
parse, so a ``.. role::`` in one document never changes another):

- roles: code-ish ones (``:class:``, ``:func:``, ``:py:meth:``, ...) become inline code of the target's
  shown part (``~a.b.C`` -> ``C``, ``Title <label>`` -> ``Title``); the rest plain text; ``:pep:`` and
  ``:rfc:`` take a title (``:pep:`pattern matching <634>```);
- directives: code blocks stay code whatever their options (``code-block`` with ``:caption:``,
  ``sourcecode``, ``doctest``, ``math`` as LaTeX); ones whose content comes from elsewhere or is site
  machinery (``toctree``, ``literalinclude`` left unread, ``index``, ``highlight``) are dropped; API descriptions
  (``.. function:: connect(host)``, ``.. autoclass:: a.B``, Sphinx's ``.. class::``) give their
  signature as code, then their content; ``autosummary`` its names as a list of code; ``only`` its
  content where Sphinx's HTML build shows it (``.. only:: latex`` is dropped), ``ifconfig`` its content;
  ``seealso`` its argument and content under the title "See also"; any other (``versionadded``, ``tab``)
  its argument and content.

docutils reads no file and passes no raw HTML through (``include``, ``raw``, ``csv-table`` with a file
and images embedded with ``:loading: embed`` are off): an upload names no file on the server. Files
ingested from a folder have their ``include`` and ``literalinclude`` directives filled in before this
(:mod:`graphrag.ingest.includes`).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from typing import Any

from graphrag.errors import InvalidInput
from graphrag.ingest.load_base import image_text

# Names bounded in length and parts: unbounded, every ":" of a long ":a.:a.:a." run started a scan to its end.
_ROLE = re.compile(r"(?<![\w`]):((?:[A-Za-z][\w.+-]{0,63}:){0,3}[A-Za-z][\w.+-]{0,63}):`")
_DIRECTIVE = re.compile(r"^[ \t]*\.\.[ \t]+((?:[A-Za-z][\w.+-]{0,63}:){0,3}[A-Za-z][\w.+-]{0,63})::", re.M)
# Roles whose text is code: Python/C/C++/JS domain objects, and options, environment variables, files.
_CODE_ROLES = frozenset({
    "class", "func", "meth", "attr", "mod", "obj", "data", "const", "exc", "type", "member", "var", "macro",
    "struct", "union", "enum", "enumerator", "expr", "texpr", "envvar", "option", "command", "program", "file",
    "samp", "makevar", "keyword", "setting", "confval", "event", "directive", "role", "paramref", "meta"})
_PYTHON_ROLES = frozenset({"class", "func", "meth", "attr", "mod", "obj", "data", "const", "exc", "type"})
_DROPPED_DIRECTIVES = frozenset({
    "toctree", "index", "literalinclude", "include", "highlight", "currentmodule", "module", "default-role",
    "default-domain", "sectionauthor", "moduleauthor", "codeauthor", "spelling:word-list", "tabularcolumns",
    "graphviz", "inheritance-diagram", "testsetup", "testcleanup", "jinja", "raw", "meta", "highlightlang"})
# Code blocks, with the language a block has when its directive names none.
_CODE_DIRECTIVES = {
    "code-block": "", "sourcecode": "", "code": "", "ipython": "python", "doctest": "python", "testcode": "python",
    "testoutput": "", "prompt": "", "jupyter-execute": "python", "code-cell": "", "console": "console",
    "plot": "python", "math": "latex"}
_DESCRIPTIONS = frozenset({
    "function", "class", "method", "attribute", "data", "exception", "decorator", "decoratormethod",
    "staticmethod", "classmethod", "property", "type", "member", "macro", "struct", "var", "enum", "envvar",
    "option", "describe", "object", "program", "cmdoption", "confval", "setting", "event", "directive", "role",
    "automodule", "autoclass", "autofunction", "automethod", "autoattribute", "autodata", "autoexception",
    "autodecorator", "autoproperty", "autoprogram", "automodapi", "autoapimodule", "autotypeddict"})
_HIDDEN_ARGUMENT = frozenset({"only", "ifconfig", "tab-set", "container"})
# Labels over a section title: ".. _label:" lines (".. _`a label`:" quoted; blank lines between), then the
# title over its underline (an overline above it too).
_SECTION_LABEL = re.compile(
    r"(?P<labels>(?:^\.\.[ \t]+_(?:`[^`\n]{1,200}`|[^:`\n]{1,200}):[ \t]*\n(?:[ \t]*\n)*)+)"
    r"(?:([=\-`:'\"~^_*+#<>])\2{2,}[ \t]*\n)?(?P<title>[^\s\n][^\n]{0,300})\n([=\-`:'\"~^_*+#<>])\4{2,}[ \t]*$", re.M)
_LABEL = re.compile(r"^\.\.[ \t]+_(?:`([^`\n]{1,200})`|([^:`\n]{1,200})):", re.M)  # "_`a b`:" quotes a name
# The tags of Sphinx's HTML build, which ``.. only::`` expressions test ("not latex", "html and draft").
_HTML_BUILD_TAGS = frozenset({"html", "format_html", "builder_html"})
_ONLY_TOKEN = re.compile(r"[()]|[^\s()]+")
# docutils has directives of these names, but Sphinx documents mean Sphinx's ("class" is a Python
# class there; docutils' own is "rst-class"), or use options docutils rejects (":caption:").
_OVERRIDDEN = frozenset({"code-block", "sourcecode", "code", "class", "math", "highlight"})
# Sphinx substitutions from the project's configuration, which a lone file does not have.
_CONFIG_SUBSTITUTIONS = re.compile(r"(?<!`)\|(version|release|today)\|(?!`)")
_DEFINED_SUBSTITUTIONS = re.compile(r"^[ \t]*\.\.[ \t]+\|(version|release|today)\|", re.M)
_SETTINGS = {
    "report_level": 5, "halt_level": 5, "file_insertion_enabled": False, "raw_enabled": False,
    "image_loading": "link", "_disable_config": True, "output_encoding": "unicode", "embed_stylesheet": False,
    "stylesheet_path": "", "syntax_highlight": "none", "doctitle_xform": True, "sectsubtitle_xform": False,
    "warning_stream": False, "input_encoding": "unicode", "toc_backlinks": "none", "footnote_backlinks": False,
    "math_output": "LaTeX", "character_level_inline_markup": False, "line_length_limit": 100_000,
}
# docutils slows down faster than the text grows (1 MB: 5 to 35 s, by how many link targets it holds;
# 2 MB: 12 to 130 s), and renders one file at a time here: past this a file is not rendered. Runs of
# blanks do not count: the padding of a wide simple table costs little (pytest's plugin list, 1.38 MB
# with its columns padded, 0.58 MB without, renders in 5 s), up to four times the limit in all.
MAX_RST_CHARS = 1_000_000
_BLANK_RUN = re.compile(r"[ \t]{2,}")
# docutils' role and directive registries are per process; one parse at a time registers and reads them.
_LOCK = threading.Lock()


def _base(name: str) -> str:
    return name.rsplit(":", 1)[-1].lower()


def _shown(text: str, python: bool = False) -> str:
    """The part of a role's text a reader sees: ``Title <target>`` -> ``Title``; ``~a.b.C`` -> ``C``;
    ``!name`` -> ``name``; for a Python object (``python``), ``.Sphinx.emit`` -> ``Sphinx.emit`` (the
    dot only says where to look for it)."""
    text = " ".join(text.split())
    m = re.fullmatch(r"(.+?)\s*<[^<>]*>", text)
    if m:
        return m.group(1)
    text = text.lstrip("!")
    if python:
        text = text.lstrip(".")
    if text.startswith("~"):
        text = re.split(r"[.:]", text[1:])[-1]
    return text


def _role(kind: str, titles: dict[str, str] | None = None, caption: str = "%s") -> Any:
    """A role that shows its text as code (``kind`` "code"), as text, or as "PEP 8" / "RFC 2616" (an
    anchor after the number left out); ``titles`` (label -> section title) are what a bare
    ``:ref:`label``` shows, as Sphinx shows it; ``caption`` how a link role shows a bare target."""
    from docutils import nodes

    def role(name: str, rawtext: str, text: str, lineno: int, inliner: Any,
             options: Any = None, content: Any = None) -> tuple[list[Any], list[Any]]:
        shown = _shown(text, python=_base(name) in _PYTHON_ROLES)
        if titles and shown == " ".join(text.split()):
            shown = titles.get(shown.lower(), shown)
        number = re.fullmatch(r"\s*(\d+)(?:#\S*)?\s*", shown) if kind in ("PEP", "RFC") else None
        if number is not None:
            shown = f"{kind} {int(number.group(1))}"
        elif caption != "%s" and shown == " ".join(text.split()):  # no title of its own: the caption
            shown = caption.replace("%s", shown)
        node = nodes.literal(rawtext, shown) if kind == "code" else nodes.Text(shown)
        return [node], []

    return role


class _AnyOptions(dict[str, Any]):
    """An option spec that takes every option (Sphinx directives have many; their values are not text).
    It is never empty: docutils reads an empty spec as "no options" and the options as the argument."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: str) -> Any:
        from docutils.parsers.rst import directives

        return directives.unchanged

    def __bool__(self) -> bool:
        return True


def _in_html_build(expression: str) -> bool:
    """Whether Sphinx's HTML build shows an ``.. only::`` block: its expression of tags, ``and``, ``or``,
    ``not`` and parentheses, with the HTML build's tags set and any other unset (as Sphinx reads an
    unknown tag). An expression that does not parse shows the block."""
    tokens = _ONLY_TOKEN.findall(expression)
    at = 0

    def term() -> bool:
        nonlocal at
        if at >= len(tokens) or tokens[at] in (")", "and", "or"):
            raise ValueError(expression)
        at += 1
        if tokens[at - 1] == "not":
            return not term()
        if tokens[at - 1] == "(":
            value = either()
            if at >= len(tokens) or tokens[at] != ")":
                raise ValueError(expression)
            at += 1
            return value
        return tokens[at - 1] in _HTML_BUILD_TAGS

    def joined(word: str, operand: Callable[[], bool]) -> list[bool]:
        """The values of operands joined by ``word`` ("and", "or"), each read (none is skipped)."""
        nonlocal at
        values = [operand()]
        while at < len(tokens) and tokens[at] == word:
            at += 1
            values.append(operand())
        return values

    def either() -> bool:
        return any(joined("or", lambda: all(joined("and", term))))

    try:
        shown = either()
    except ValueError:
        return True
    return shown if at == len(tokens) else True


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
            if base in ("highlight", "highlightlang") and argument:
                # The language of the "::" blocks that follow: a marker the doctree pass reads.
                marker = nodes.comment("", "")
                marker["highlight"] = argument.split()[0].lower()
                return [marker]
            if base in _DROPPED_DIRECTIVES or (base == "only" and not _in_html_build(argument)):
                return []
            if base in _CODE_DIRECTIVES:
                code = "\n".join(self.content) if self.content else (argument if base == "math" else "")
                language = (argument.split()[0].lower() if argument and base != "math" else "") or _CODE_DIRECTIVES[base]
                block = nodes.literal_block(code, code)
                block["classes"] += [f"language-{language}"] if language else []
                caption = self.options.get("caption")
                return ([nodes.paragraph("", caption)] if caption else []) + ([block] if code.strip() else [])
            if base == "autosummary":
                names = [line.strip() for line in self.content if line.strip() and not line.strip().startswith(":")]
                items = [nodes.list_item("", nodes.paragraph("", "", nodes.literal(n, _shown(n)))) for n in names]
                return [nodes.bullet_list("", *items)] if items else []
            out: list[Any] = []
            if base in _DESCRIPTIONS and argument:
                # One signature per line, a backslash at a line's end continuing it (as Sphinx reads them).
                lines = re.sub(r"\\\n", "", self.arguments[0]).split("\n")
                for signature in (" ".join(line.split()) for line in lines if line.strip()):
                    out.append(nodes.paragraph("", "", nodes.literal(signature, signature)))
                # ":type: str", ":default: 'x'" say what the described thing is; flags (":noindex:") do not.
                for key, value in self.options.items():
                    if isinstance(value, str) and value.strip():
                        inline, _ = self.state.inline_text(f"{key}: {' '.join(value.split())}", self.lineno)
                        out.append(nodes.paragraph("", "", *inline))
            elif argument and base not in _HIDDEN_ARGUMENT:
                if base.startswith(("versionadded", "versionchanged", "versionremoved", "deprecated")):
                    argument = f"{base.replace('version', 'version ').capitalize()}: {argument}"
                inline, _ = self.state.inline_text(argument, self.lineno)  # links and roles in it
                out.append(nodes.paragraph("", "", *inline))
            if self.content:
                holder = nodes.container()
                self.state.nested_parse(self.content, self.content_offset, holder)
                out.extend(holder.children)
            if base == "seealso":  # an aside titled as Sphinx titles it
                return [nodes.admonition("", nodes.title("", "See also"), *out)]
            return out

    return Lenient


def section_labels(text: str) -> dict[str, str]:
    """The titles of the sections ``text`` labels (``.. _label:`` over a section title), by label in
    lower case: what a bare ``:ref:`label``` in the same file shows."""
    titles: dict[str, str] = {}
    for m in _SECTION_LABEL.finditer(text):
        title = m.group("title").strip()
        for quoted, plain in _LABEL.findall(m.group("labels")):
            titles.setdefault(" ".join((quoted or plain).split()).lower(), title)
    return titles


def _register(role_names: set[str], directive_names: set[str], titles: dict[str, str] | None = None,
              links: Mapping[str, str | None] | None = None) -> None:
    """Register the roles and directives a text uses that docutils does not know (or, for a few,
    knows differently from Sphinx); a bare ``:ref:`` shows the title of a section ``titles`` has."""
    from docutils.parsers.rst import directives, languages, roles
    from docutils.utils import Reporter

    quiet = Reporter("", 5, 5)
    language = languages.get_language("en", quiet)
    for name in role_names:
        base = _base(name)
        if base in ("pep", "rfc"):
            roles.register_local_role(name, _role(base.upper()))
            continue
        if base == "ref" and titles:
            roles.register_local_role(name, _role("text", titles))
            continue
        if links and name in links:
            roles.register_local_role(name, _role("text", caption=links[name] or "%s"))
            continue
        known, _ = roles.role(name, language, 0, quiet)
        if known is None:
            code = base in _CODE_ROLES or name.startswith(("py:", "c:", "cpp:", "js:"))
            roles.register_local_role(name, _role("code" if code else "text"))
    for name in directive_names:
        canonical = language.directives.get(name, name)
        if name in _OVERRIDDEN or (name not in directives._directives
                                   and canonical not in directives._directive_registry):
            directives.register_directive(name, _directive(name))


def _highlight(doctree: Any) -> None:
    """Give "::" literal blocks the language of the ``.. highlight::`` before them."""
    from docutils import nodes

    language = ""
    for node in doctree.findall(lambda n: isinstance(n, (nodes.comment, nodes.literal_block))):
        if isinstance(node, nodes.comment):
            language = node.get("highlight", language)
        elif language and not node["classes"]:
            node["classes"].append(f"language-{language}")


# Inline literals are <span class="docutils literal">, with <span class="pre"> runs inside where the
# literal has spaces or hyphens; as <code> the HTML loader keeps them as code.
_LITERAL = re.compile(r'<span class="docutils literal">((?:[^<]|<span class="pre">[^<]*</span>)*)</span>')
# ids and classes say nothing about the text here, and some would read as page furniture to the HTML
# loader (a "Cookies" section's id "cookies", a sidebar's class); a code block's classes name its language,
# and an admonition title's class makes it a block's title there.
_START_TAG = re.compile(r"<([a-z][a-z0-9]*)\b([^<>]*)>")
_ID_OR_CLASS = re.compile(r'\s(?:id|class)="[^"]*"')


def _without_ids(m: re.Match[str]) -> str:
    if m.group(1) in ("pre", "code") or "=" not in m.group(2):
        return m.group(0)
    # An admonition's title keeps its class: the HTML loader shows it as a block's title.
    kept = ' class="admonition-title"' if 'class="admonition-title"' in m.group(2) else ""
    return f"<{m.group(1)}{_ID_OR_CLASS.sub('', m.group(2))}{kept}>"


# Sphinx's info fields in a description (":param host: ...", ":rtype: int"): shown as Sphinx shows them,
# the parameter's name, not "param host" (which read as a phrase, "param value", to the extractor).
_INFO_FIELDS = {"param": "", "parameter": "", "arg": "", "argument": "", "key": "", "keyword": "", "kwarg": "",
                "kwparam": "", "var": "", "ivar": "", "cvar": "", "type": " (type)", "vartype": " (type)",
                "raises": "Raises ", "raise": "Raises ", "except": "Raises ", "exception": "Raises "}
_INFO_ALONE = {"returns": "Returns", "return": "Returns", "rtype": "Return type", "yields": "Yields",
               "yield": "Yields", "ytype": "Yield type"}


def _info_field(name: str) -> str | None:
    """How Sphinx shows an info field's name: ``param host`` -> ``host``, ``type host`` -> ``host (type)``,
    ``raises ValueError`` -> ``Raises ValueError``, ``rtype`` -> ``Return type``; None for other fields."""
    words = name.split()
    if len(words) == 1:
        return _INFO_ALONE.get(words[0].lower())
    kind = words[0].lower()
    if kind not in _INFO_FIELDS:
        return None
    subject = words[-1]  # ":param str host:" names its type first
    shown = _INFO_FIELDS[kind]
    return f"{shown}{subject}" if shown.endswith(" ") else f"{subject}{shown}"


def rst_to_html(text: str, labels: Mapping[str, str] | None = None,
                links: Mapping[str, str | None] | None = None) -> str:
    """``text`` (reStructuredText) as an HTML5 page whose ``<main>`` is the document; InvalidInput when
    it is too large to render. A bare ``:ref:`label``` shows the title of the section the label is over,
    in this text or else in ``labels`` (its project's, by label in lower case); a link role of
    ``links`` (its project's ``extlinks``, :meth:`~graphrag.ingest.project.Project.link_roles`) shows
    its caption (``:issue:`123``` as "#123")."""
    from docutils import nodes
    from docutils.core import publish_doctree, publish_from_doctree
    from docutils.parsers.rst import directives, roles
    from docutils.writers.html5_polyglot import Writer

    if len(text) > 4 * MAX_RST_CHARS:
        raise InvalidInput(f"{len(text)} characters of reStructuredText is over the {4 * MAX_RST_CHARS} "
                           "that are rendered")
    if len(text) > MAX_RST_CHARS:
        size = len(text) - sum(len(m.group(0)) - 1 for m in _BLANK_RUN.finditer(text))
        if size > MAX_RST_CHARS:
            raise InvalidInput(f"{size} characters of reStructuredText (a run of blanks counted as one) is "
                               f"over the {MAX_RST_CHARS} that are rendered")
    text = _FILE_FIELDS.sub(lambda m: "\n" * m.group(0).count("\n"), text.replace("\r\n", "\n"))
    text = _TARGET_DIRECTIVE.sub(_blank_target, text)
    defined = set(_DEFINED_SUBSTITUTIONS.findall(text))
    text = _CONFIG_SUBSTITUTIONS.sub(lambda m: m.group(0) if m.group(1) in defined else "", text)
    role_names = set(_ROLE.findall(text))
    directive_names = {n.lower() for n in _DIRECTIVE.findall(text)}
    with _LOCK:
        saved = (dict(roles._roles), dict(directives._directives))
        try:
            titles = {**(labels or {}), **section_labels(text)} if ":ref:`" in text else None
            _register(role_names, directive_names, titles, links)
            doctree = publish_doctree(text, settings_overrides=_SETTINGS)
            for image in list(doctree.findall(nodes.image)):
                image.attributes.pop("loading", None)  # ":loading: embed" would read the image's file
                # An image's ":alt:" text, as a Markdown page keeps its images' (the HTML loader drops images).
                alt = image_text(str(image.get("alt") or ""), str(image.get("uri") or ""))
                if alt:
                    image["classes"] = []  # styling ("invert-in-dark-mode"); docutils will not drop it silently
                    inline = isinstance(image.parent, nodes.TextElement)
                    image.replace_self(nodes.Text(alt) if inline else nodes.paragraph(text=alt))
            for classifier in doctree.findall(nodes.classifier):  # "height : float": the ":" is a style's
                classifier.insert(0, nodes.Text(": "))
            for name in doctree.findall(nodes.field_name):
                shown = _info_field(name.astext())
                if shown is not None:
                    name.children = [nodes.Text(shown)]
            _highlight(doctree)
            page = str(publish_from_doctree(doctree, writer=Writer(), settings_overrides=_SETTINGS))
        finally:
            roles._roles.clear()
            roles._roles.update(saved[0])
            directives._directives.clear()
            directives._directives.update(saved[1])
    # docutils writes a code block's language as lang="python"; the HTML loader reads language-* classes.
    page = re.sub(r'<pre class="([^"]*)" lang="([\w+#.-]+)">', r'<pre class="\1 language-\2">', page)
    page = _LITERAL.sub(lambda m: "<code>" + re.sub(r"</?span[^>]*>", "", m.group(1)) + "</code>", page)
    page = _START_TAG.sub(_without_ids, page)
    # A file without one top heading has no title; docutils names it after its source, "<string>".
    return page.replace("<title>&lt;string&gt;</title>", "<title></title>")


# A directive with no content right over a section titled by its argument (".. setting:: DEBUG" over
# "DEBUG" and its underline, Django's and Scrapy's settings): a cross-reference target, which the page
# does not show; read as a description, the name stood a second time above the title and, in the text,
# at the end of the section before.
_TARGET_DIRECTIVE = re.compile(
    r"^\.\.[ \t]+[\w:-]+::[ \t]+(?P<arg>[^\n]{1,200}?)[ \t]*\n(?P<gap>(?:[ \t]*\n)+)"
    r"(?=(?P<title>[^\n]{1,200})\n(?P<rule>[=\-~^\"'`#*+:.])(?P=rule){2,}[ \t]*$)", re.M)


def _blank_target(m: re.Match[str]) -> str:
    same = m.group("title").strip().strip("`").strip() == m.group("arg").strip().strip("`").strip()
    return "\n" + m.group("gap") if same else m.group(0)


# Sphinx reads a field list opening the file as the file's metadata (":orphan:", ":tocdepth: 2").
_FILE_FIELDS = re.compile(r"\A(?:[ \t]*\n)*(?::[\w:-]+:(?:[ \t][^\n]*)?\n)+")
