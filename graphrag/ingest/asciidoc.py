"""AsciiDoc (``.adoc``, ``.asciidoc``: Antora sites, Spring, Neo4j, Hibernate, Quarkus docs) read as Markdown.

One pass over the lines turns what AsciiDoc writes into what the Markdown path reads: section titles
into ``#`` headings, listing and literal blocks into fenced code (the ``[source,lang]`` language kept,
callout marks ``<1>`` out), tables (``|===``, CSV and DSV, cell specs, spans, ``a|`` cells) into pipe
tables, lists, admonitions (``NOTE:``), block titles, links, cross references (``<<id,text>>``,
``xref:``), inline macros (``kbd:[]``, ``footnote:[]``, ...) and attribute references (``{name}``,
set by ``:name: value`` entries) into the text a reader of the rendered page sees.

The reader reads nothing outside the file: ``include::`` directives left in its text are dropped (an
uploaded page must not name a server file; files ingested from a folder have theirs filled in first by
:mod:`graphrag.ingest.includes`), ``ifdef``/``ifndef`` are decided by the file's own attributes and ``ifeval`` keeps its
lines. Comments, passthrough HTML and images stay out. A reference to an attribute the file does not
define (one a site sets in its configuration) is dropped from prose and kept as written in code.

Why not a library: Asciidoctor is Ruby, and the Python ``asciidoc`` package (GPL) follows the older
syntax; what the index needs is the text, which a line scan gives in linear time.
"""

from __future__ import annotations

import csv
import html
import re
from dataclasses import dataclass, field
from typing import Any

from graphrag.ingest.load_base import image_text
from graphrag.ingest.textprep import fence_for, pipe_table

# Delimited blocks nested deeper than this are read as text (a hostile file cannot grow the stack).
_MAX_NESTING = 50
# A table's column count past this is a broken ``cols`` attribute, not a table.
_MAX_COLUMNS = 50
_MAX_ROWSPAN = 1000
# Attribute values are set from earlier values (":b: {a}{a}"): each is cut at this length, and references
# stop expanding once they have added this many characters to a document.
_MAX_VALUE_CHARS = 10_000
_MAX_EXPANSION = 5_000_000

_ATTRIBUTE_ENTRY = re.compile(r"^:(!?)(\w[\w-]*)(!?):(?:[ \t]+(.*\S))?[ \t]*$")
_CONDITIONAL = re.compile(r"^(ifdef|ifndef|ifeval|endif)::([^\[]*)\[(.*)\][ \t]*$")
_INCLUDE = re.compile(r"^include::\S*\[.*\][ \t]*$")
_HEADING = re.compile(r"^(={1,6}|#{1,6})[ \t]+(\S(?:.*\S)?)[ \t]*$")  # closing marks ("== T ==") cut after
_BLOCK_TITLE = re.compile(r"^\.(?![.\s])(.+)$")
_BLOCK_ATTRIBUTES = re.compile(r"^\[(?=[\w\"'.#%,{\]])([^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*)\][ \t]*$")
_ANCHOR_LINE = re.compile(r"^\[\[([\w:.-]+)(?:,[^\]]*)?\]\][ \t]*$")
_DELIMITER = re.compile(r"^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|--|[|!,:]={3,})[ \t]*$")
_FENCE = re.compile(r"^(`{3,})[ \t]*([\w+#.-]*)")
_UNORDERED = re.compile(r"^[ \t]*(\*{1,5}|-)[ \t]+(\S.*)$")
_ORDERED = re.compile(r"^[ \t]*(\.{1,5}|\d{1,9}\.)[ \t]+(\S.*)$")
_DESCRIPTION = re.compile(r"^(?![ \t])(\S(?:.*?\S)?)(:{2,4}|;;)(?:[ \t]+(.*))?$")
_ATTRIBUTE_ITEM = re.compile(r"(?:[^,\"']|\"[^\"]*\"?|'[^']*'?)+|(?<=,)(?=,|$)|^(?=,)")
_CALLOUT_ITEM = re.compile(r"^<(\d{1,3}|\.)>[ \t]+(.*)$")
_CALLOUTS = re.compile(r"(?<![ \t])[ \t]*+(?:(?://|#|--|;;?|\(\*)[ \t]*+)?(?:<!--(?:\d{1,3}|\.)-->|(?:<(?:\d{1,3}|\.)>[ \t]*+)+)"
                       r"(?:\*\))?[ \t]*+$")
_ADMONITION = re.compile(r"^(NOTE|TIP|IMPORTANT|WARNING|CAUTION):[ \t]+(.*)$")
_ADMONITIONS = {"NOTE", "TIP", "IMPORTANT", "WARNING", "CAUTION"}
_BREAK = re.compile(r"^(?:'{3,}|<<<|(?:-[ \t]*){3,}|(?:\*[ \t]*){3,})$")
# Block macros (images, video, a table of contents, extensions' ``include-code::``) show no text of their own.
_BLOCK_MACRO = re.compile(r"^[a-z][\w-]*::[^\s\[]*\[.*\][ \t]*$")
_IMAGE_MACRO = re.compile(r"^image::([^\s\[]*)\[(.*)\][ \t]*$")
_HARD_BREAK = re.compile(r"[ \t]\+$", re.M)

# Inline syntax, in the order it is read.
# Spans are bounded in length (a passthrough, code span or label of 1,000 characters at most) and the
# texts they cannot cross are left out of them, so an opener that never closes costs a bounded scan.
_PASSTHROUGH = re.compile(r"\+\+\+((?:[^+\n]|\+(?!\+\+)){1,1000}?)\+\+\+|\+\+((?:[^+\n]|\+(?!\+)){1,1000}?)\+\+"
                          r"|(?<![\w+])\+(?=\S)([^+\n]{0,1000}?\S)\+(?![\w+])|pass:[a-z,]{0,20}\[([^\[\]\n]{0,1000})\]")
_CODE = re.compile(r"(?<![\w`])``(?=\S)((?:[^`]|`(?!`)){1,1000}?)``(?!`)"
                   r"|(?<![\w`])`(?=[^\s`])([^`]{0,1000}?[^\s`]|[^\s`])`(?![\w`])")
_ATTRIBUTE_REF = re.compile(r"(\\?)\{(\w[\w-]*)\}")
# A label may hold one level of brackets and escaped ones ("xref:r.adoc[RETURN ... [AS]]", "[f(x\]]").
_LABEL = r"((?:[^\[\]\\]|\\.|\[[^\[\]\n]{0,100}\]){0,1000}+)"
# Targets are bounded too (500 characters), so repeated "link:" or "{a}" without a "[" costs a bounded scan each.
_XREF = re.compile(r"<<([^<>,\n]+)(?:,([^<>\n]*))?>>|xref:([^\s\[]{1,500}+)\[" + _LABEL + r"\]")
_URL_MACRO = re.compile(r"(?:link:|mailto:)?((?:https?|ftp|irc|file)://[^\s\[<>]{1,500}+|(?<=link:)[^\s\[]{0,500}+"
                        r"|(?<=mailto:)[^\s\[]{1,500}+)"
                        r"\[" + _LABEL + r"\]")
# Footnotes have no word boundary before them: "databasesfootnote:cdb[...]" is "databases[1]".
_INLINE_MACRO = re.compile(r"(?:\b(kbd|btn|menu|icon|image|anchor|indexterm|indexterm2|stem|latexmath|asciimath)|(footnote|footnoteref))"
                           r":([^\s\[]{0,500}+)\[((?:[^\[\]\\]|\\.|\[[^\[\]\n]{0,200}+\]){0,2000}+)\]")
# A macro of an extension (``javadoc:org.x.Y[]``, ``linkgit:git-log[1]``, ``configprop:a.b[]``, ``label:new[]``):
# its target is what the page shows.
_OTHER_MACRO = re.compile(r"(?<![\w/:])([a-z][a-z0-9-]{1,30}):(?!//)([^\s\[\]:]{1,500}+)\[" + _LABEL + r"\]")
# A link whose address is an attribute the file does not define: its text.
_ATTRIBUTE_LINK = re.compile(r"(?:link:)?\{(\w[\w-]*)\}([^\s\[]{0,500}+)\[" + _LABEL + r"\]")
# A backslash keeps what follows as written: a cross reference, a macro, a link, a reference, a mark.
_ESCAPED = re.compile(r"\\(<<[^<>\n]{0,200}>>|[a-z][\w-]{0,30}:[^\s\[]{0,500}\[[^\]\n]{0,1000}\]|(?:https?|ftp|irc|file)://[^\s\[<>]{1,500}+"
                      r"|\{\w[\w-]*\}|\[\[|[*_`#+^~]+)")
# A role on formatted text ("[.path]_syntax.html_"): the text stays, the role goes.
_ROLE = re.compile(r"\[\.[\w.-]{1,100}\](?=[_*`#])")
_INDEX_TERMS = re.compile(r"\({3}[^()]*\){3}")
_INDEX_TERM = re.compile(r"\({2}([^()]+)\){2}")
# A bibliography entry's anchor, shown as its label: "[[[gof,Gang of Four]]] Design Patterns" reads
# "[Gang of Four] Design Patterns" (an inline anchor's "[[id]]" shows nothing).
_BIBLIOGRAPHY_ANCHOR = re.compile(r"\[\[\[([\w:.-]{1,200}+)(?:,([^\[\]\n]{1,200}))?\]\]\]")
_INLINE_ANCHOR = re.compile(r"\[\[[\w:.-]{1,200}+(?:,[^\[\]\n]{0,200})?\]\]|\[#[\w:.-]{1,200}+\]")
_MARKED = re.compile(r"(?:\[[^\[\]\n]{0,100}+\])?##([^\n]{1,1000}?)##"
                     r"|(?<![\w#])(?:\[[^\[\]\n]{0,100}+\])?#(?=\S)([^#\n]{0,1000}?\S)#(?![\w#])")
_CURVED = re.compile(r"([\"'])`([^`\n]{1,1000})`\1")
_STASHED = re.compile(r"\x00(\d+)\x00")
_TAGS = re.compile(r"<[^<>\n]*>")
_SCRIPT = re.compile(r"<(script|style)\b", re.I)

# Built-in attributes that stand for a character.
_CHARACTERS = {"nbsp": "\u00a0", "empty": "", "blank": "", "sp": " ", "space": " ", "zwsp": "", "wj": "",
               "plus": "+", "amp": "&", "lt": "<", "gt": ">", "startsb": "[", "endsb": "]", "vbar": "|",
               "caret": "^", "asterisk": "*", "tilde": "~", "apos": "'", "quot": '"', "backslash": "\\",
               "backtick": "`", "two-colons": "::", "two-semicolons": ";;", "cpp": "C++", "pp": "++", "deg": "°",
               "lsquo": "\u2018", "rsquo": "\u2019", "ldquo": "\u201c", "rdquo": "\u201d", "brvbar": "\u00a6",
               "cxx": "C++", "nbhy": "\u2011"}
# Header attributes kept as document metadata.
_METADATA = ("description", "keywords", "author", "email", "revnumber", "revdate", "revremark")


@dataclass
class _State:
    attributes: dict[str, str] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)  # section id -> title, for <<id>>
    footnotes: list[str] = field(default_factory=list)
    footnote_ids: dict[str, int] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    expanded: int = 0  # characters attribute references have added


def asciidoc_markdown(text: str) -> tuple[str, dict[str, Any]]:
    """``(markdown, metadata)`` for an AsciiDoc file's text: the Markdown a reader of the rendered page
    would see, and its header's description, keywords, author and revision."""
    state = _State()
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = _preprocess(text.split("\n"))
    state.titles = _section_titles(lines)
    out: list[str] = []
    _Converter(lines, state, out).run()
    if state.footnotes:
        out += [""] + [f"[{i}] {note}" for i, note in enumerate(state.footnotes, 1)]
    body = re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip("\n")
    return body + "\n", state.metadata


def _preprocess(lines: list[str]) -> list[str]:
    """The lines the parser reads: ``include::`` dropped, conditionals decided, an attribute value continued
    over lines (`` \\`` at a line's end) joined; attribute entries met on the way are noted for a later
    ``ifdef`` (the parser sets them itself, where it meets them)."""
    attributes: dict[str, str] = {}  # not the parser's: a reference before its entry stays unresolved
    lines = _joined_values(lines)
    kept: list[str] = []
    skipping: list[bool] = []  # one per open conditional: True where its lines are dropped
    verbatim: str | None = None
    for line in lines:
        stripped = line.rstrip()
        # Conditionals and includes are read everywhere, code blocks too, as Asciidoctor's preprocessor does.
        conditional = _CONDITIONAL.match(stripped) if stripped.startswith(("if", "endif")) else None
        if conditional is not None:
            kind, names, inline = conditional.groups()
            if kind == "endif":
                if skipping:
                    skipping.pop()
                continue
            keep = True if kind == "ifeval" else _defined(names, attributes) == (kind == "ifdef")
            if kind != "ifeval" and inline:  # one-line form: ifdef::attr[text]
                if keep and not any(skipping):
                    kept.append(inline)
                continue
            skipping.append(not keep)
            continue
        if any(skipping):
            continue
        if _INCLUDE.match(stripped):
            continue
        if verbatim is None and (entry := _ATTRIBUTE_ENTRY.match(stripped)) is not None:
            unset, name, unset_after, value = entry.groups()
            if unset or unset_after:
                attributes.pop(name, None)
            else:
                attributes[name] = value or ""
        delimiter = _DELIMITER.match(stripped)
        if delimiter is not None and delimiter.group(1)[0] in "-.+/" and delimiter.group(1) != "--":
            verbatim = None if verbatim == stripped else (stripped if verbatim is None else verbatim)
        kept.append(line)
    return kept


def _joined_values(lines: list[str]) -> list[str]:
    """Attribute entries whose value goes on over lines (each but the last ending in `` \\``) as one line."""
    if not any(line.endswith(" \\") for line in lines):
        return lines
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith(":") and line.rstrip().endswith(" \\") and _ATTRIBUTE_ENTRY.match(line.rstrip()[:-2]):
            parts = [line.rstrip()[:-2].rstrip()]
            i += 1
            while i < len(lines):
                more = lines[i].strip()
                i += 1
                if more.endswith(" \\"):
                    parts.append(more[:-2].rstrip())
                    continue
                parts.append(more)
                break
            out.append(" ".join(p for p in parts if p))
            continue
        out.append(line)
        i += 1
    return out


def _defined(names: str, attributes: dict[str, str]) -> bool:
    """``ifdef`` of ``a,b`` (any of them) or ``a+b`` (all)."""
    if "+" in names:
        return all(n in attributes for n in names.split("+") if n)
    return any(n in attributes for n in names.split(",") if n)


def _auto_id(title: str) -> str:
    """The id Asciidoctor gives a section by default: ``_`` and the title's words joined by ``_``."""
    return "_" + re.sub(r"[^\w]+", "_", title.lower()).strip("_")


_UNDERLINES = "=-~^+"
_TWO_LINE_TITLE = re.compile(r"^(?=.*\w)([^.\s\[/|<:*=-](?:.*\S)?)[ \t]*$")


def _two_line_title(line: str, underline: str) -> re.Match[str] | None:
    """A title over a line of ``=``, ``-``, ``~``, ``^`` or ``+`` as long as it (give or take one): the
    older two-line section titles (git's manual pages). The match's group 1 is the level's marks, 2 the title."""
    underline = underline.rstrip()
    if len(underline) < 2 or underline[0] not in _UNDERLINES or underline.strip(underline[0]):
        return None
    title = _TWO_LINE_TITLE.match(line)
    if title is None or abs(len(title.group(1)) - len(underline)) > 1:
        return None
    marks = "=" * (_UNDERLINES.index(underline[0]) + 1)
    return re.match(r"(=+) (.*)", f"{marks} {title.group(1)}")


def _section_titles(lines: list[str]) -> dict[str, str]:
    """Section ids (explicit ``[[id]]``/``[#id]`` or automatic) to their titles, for ``<<id>>``."""
    titles: dict[str, str] = {}
    previous = ""
    for i, line in enumerate(lines):
        heading = _HEADING.match(line) or _two_line_title(line, lines[i + 1] if i + 1 < len(lines) else "")
        if heading is not None and heading.group(1)[0] == "=":
            title = _INLINE_ANCHOR.sub("", _title_of(heading)).strip()
            titles.setdefault(_auto_id(title), title)
            explicit = re.match(r"^\[(?:\[([\w:.-]+)|#([\w:.-]+))", previous)
            if explicit is not None:
                titles[explicit.group(1) or explicit.group(2)] = title
            inline = re.match(r"^\[\[([\w:.-]+)", _title_of(heading))
            if inline is not None:
                titles[inline.group(1)] = title
        previous = line.strip()
    return titles


@dataclass
class _Block:
    """The attribute list and title waiting for the next block."""

    style: str = ""
    positional: list[str] = field(default_factory=list)
    named: dict[str, str] = field(default_factory=dict)
    options: set[str] = field(default_factory=set)
    title: str = ""


def _block_attributes(text: str) -> _Block:
    """``[source,java,subs="attributes+"]``, ``[NOTE]``, ``[cols="1,2",options="header"]``, ``[%header]``."""
    block = _Block()
    for i, item in enumerate(m.group(0) for m in _ATTRIBUTE_ITEM.finditer(text)):
        name, eq, value = item.partition("=")
        if eq and re.fullmatch(r"[\w-]+", name.strip()):
            key, value = name.strip(), value.strip().strip("\"'")
            block.named[key] = value
            if key in ("options", "opts"):
                block.options.update(v.strip() for v in value.split(","))
            continue
        item = item.strip()
        if i == 0:
            shorthand = re.split(r"(?=[#.%])", item)
            block.style = shorthand[0]
            block.options.update(s[1:] for s in shorthand[1:] if s.startswith("%"))
            # Neo4j's docs name a tab by a role: "[.include-with-cypher]" is the block of the "cypher" tab.
            block.title = next((s[len(".include-with-"):] for s in shorthand[1:] if s.startswith(".include-with-")), "")
        block.positional.append(item)
    return block


def _title_of(heading: re.Match[str]) -> str:
    """A section title without the closing marks of the symmetric form (``== Title ==``)."""
    marks, title = heading.group(1), heading.group(2)
    if title.endswith(marks) and title[:-len(marks)].endswith((" ", "\t")):
        title = title[:-len(marks)].rstrip()
    return title


def _callouts_out(line: str) -> str:
    if ">" not in line[-200:]:
        return line
    return line[:-200] + _CALLOUTS.sub("", line[-200:])  # marks end a line: its tail is enough


class _Converter:
    """The block scan: a stack of open compound blocks, verbatim blocks and tables read to their end."""

    def __init__(self, lines: list[str], state: _State, out: list[str]) -> None:
        self.lines = lines
        self.state = state
        self.out = out
        self.pending = _Block()
        # Open example, sidebar, quote and open blocks: each one's delimiter and what it shows after its
        # content (a quote's attribution).
        self.stack: list[tuple[str, str]] = []
        self.stash: list[str] = []
        self.term_open = False  # the last line was a description term waiting for its text
        self.markers: list[str] = []  # the list markers open, outermost first
        self.started = False  # past the document header: content seen
        self.titled = False  # the document title (a level-0 section) seen

    # -- inline ------------------------------------------------------------------------------------
    def attribute(self, name: str, code: bool) -> str | None:
        if name in self.state.attributes:
            value = self.state.attributes[name]
            self.state.expanded += len(value)
            if self.state.expanded > _MAX_EXPANSION:  # a reference bomb: the rest are dropped
                return ""
            return value
        if name in _CHARACTERS:
            return _CHARACTERS[name]
        return None if code else ""

    def substitute(self, text: str, code: bool = False) -> str:
        """Attribute references replaced; an unknown one dropped from prose, kept in code."""
        if "{" not in text:
            return text

        if not code and "}" in text:
            text = _ATTRIBUTE_LINK.sub(lambda m: m.group(0) if self.attribute(m.group(1), True) is not None
                                       else self.url_label(m.group(3)) or m.group(2).rsplit("/", 1)[-1], text)

        def ref(m: re.Match[str]) -> str:
            if m.group(1):
                return m.group(0)[1:]
            value = self.attribute(m.group(2), code)
            return m.group(0) if value is None else value

        return _ATTRIBUTE_REF.sub(ref, text)

    def inline(self, text: str) -> str:
        """One line of AsciiDoc prose as Markdown prose."""
        stash: list[str] = []
        self.stash = stash  # footnotes read their text with the spans set aside in it

        def keep(value: str) -> str:
            stash.append(value)
            return f"\x00{len(stash) - 1}\x00"

        text = text.replace("\x00", " ")
        if "\\" in text:
            text = _ESCAPED.sub(lambda m: keep(m.group(1)), text)
        text = _PASSTHROUGH.sub(lambda m: keep(next(g for g in m.groups() if g is not None)), text)
        if "[." in text:
            text = _ROLE.sub("", text)

        def code(m: re.Match[str]) -> str:
            content = m.group(1) if m.group(1) is not None else m.group(2)
            content = self.substitute(content, code=True)  # a passthrough inside stays as written
            if "[" in content or "<<" in content:  # cross references and links work in monospace text too
                content = self.macros(content, code=True)
            content = _STASHED.sub(lambda s: stash[int(s.group(1))], content)
            if "&" in content:
                content = html.unescape(content)
            ticks = "``" if "`" in content else "`"
            return keep(f"{ticks}{content}{ticks}")

        text = _CURVED.sub(lambda m: ("\u201c{}\u201d" if m.group(1) == '"' else "\u2018{}\u2019").format(m.group(2)), text)
        text = _CODE.sub(code, text)
        text = self.macros(self.substitute(text))
        text = _INDEX_TERMS.sub("", text)
        text = _INDEX_TERM.sub(r"\1", text)
        text = _BIBLIOGRAPHY_ANCHOR.sub(lambda m: f"[{(m.group(2) or m.group(1)).strip()}]", text)
        text = _INLINE_ANCHOR.sub("", text)
        text = _MARKED.sub(lambda m: m.group(1) or m.group(2), text)
        text = _HARD_BREAK.sub("", text)
        if "&" in text:
            text = html.unescape(text)  # character references ("&#10004;", "&mdash;") as the page shows them
        return self.unstash(text, stash)

    def unstash(self, text: str, stash: list[str]) -> str:
        for _ in range(3):  # a stashed span can hold a stashed passthrough or escape
            if "\x00" not in text:
                break
            text = _STASHED.sub(lambda s: stash[int(s.group(1))], text)
        return text

    def macros(self, text: str, code: bool = False) -> str:
        """Cross references, links and inline macros as their text (in code, extensions' macros stay:
        ``group:artifact[:version]`` is no macro)."""
        text = _XREF.sub(self.xref, text)
        text = _URL_MACRO.sub(self.url, text)
        text = _INLINE_MACRO.sub(self.macro, text)
        return text if code else _OTHER_MACRO.sub(_other_macro, text)

    def xref(self, m: re.Match[str]) -> str:
        if m.group(3) is not None:  # xref:other.adoc#id[text]
            label = self.url_label(m.group(4))  # "Javadoc,role=link-external,window=_blank" shows "Javadoc"
            if label:
                return label
            target = m.group(3)
            page, _, anchor = target.partition("#")
            if anchor:
                return self.state.titles.get(anchor, _humane(anchor))
            names = [n for n in re.split(r"[:/]", page.removesuffix(".adoc")) if n]
            if len(names) > 1 and names[-1] == "index":  # "cli:index.adoc" is the cli module's page
                names.pop()
            return _humane(names[-1]) if names else ""
        target, label = m.group(1).strip(), (m.group(2) or "").strip()
        if label:
            return label
        page, _, anchor = target.partition("#")
        if anchor or page.endswith(".adoc"):  # another page's section: its words
            return self.state.titles.get(anchor, _humane((anchor or page).removesuffix(".adoc")))
        return self.state.titles.get(target, f"[{target}]")  # an id this page does not hold, as Asciidoctor shows it

    @staticmethod
    def url_label(label: str) -> str:
        """A link's text without its attributes (``Text,window=_blank``) and new-window mark (``Text^``)."""
        label = re.split(r",\s*(?=\w+=)", label)[0].strip().strip('"').rstrip("^").strip()
        return label.replace("\\]", "]")

    def url(self, m: re.Match[str]) -> str:
        target, label = m.group(1), self.url_label(m.group(2))
        if not target:
            return label
        if m.group(0).startswith("mailto:"):
            target = "mailto:" + target
        return f"[{label}]({target})" if label else target

    def macro(self, m: re.Match[str]) -> str:
        name, target, content = m.group(1) or m.group(2), m.group(3), m.group(4).replace("\\]", "]")
        if name in ("kbd", "btn"):
            return content
        if name == "menu":
            return " > ".join([target, *(p.strip() for p in content.split(">") if p.strip())])
        if name in ("stem", "latexmath", "asciimath"):
            return f"`{content}`" if content else ""
        if name == "indexterm2":
            return content
        if name in ("footnote", "footnoteref"):
            if name == "footnoteref":
                target, _, content = content.partition(",")
            if target and target in self.state.footnote_ids:  # a footnote used again by its id
                return f"[{self.state.footnote_ids[target]}]"
            if not content.strip():
                return ""
            self.state.footnotes.append(" ".join(self.unstash(content, self.stash).split()))
            if target:
                self.state.footnote_ids[target] = len(self.state.footnotes)
            return f"[{len(self.state.footnotes)}]"
        return ""  # icons, inline images, anchors, index terms

    # -- blocks ------------------------------------------------------------------------------------
    def emit(self, *lines: str) -> None:
        self.out.extend(lines)

    def take_title(self) -> None:
        if self.pending.title:
            self.emit("", self.inline(self.pending.title), "")
        self.pending = _Block()

    def run(self) -> None:
        lines, n = self.lines, len(self.lines)
        i = 0
        while i < n:
            i = self.step(i, lines[i], n)

    def step(self, i: int, line: str, n: int) -> int:
        stripped = line.strip()
        raw = line.rstrip()
        if not stripped:
            self.emit("")
            return i + 1
        term_open, self.term_open = self.term_open, False
        if raw.startswith("//") and not raw.startswith("////"):
            return i + 1  # comment line
        if _ATTRIBUTE_ENTRY.match(raw):
            self.header_attribute(raw)
            return i + 1
        fence = _FENCE.match(raw)
        if fence is not None:
            self.started = True
            return self.fenced(i, fence)
        delimiter = _DELIMITER.match(raw)
        if delimiter is not None:
            self.started = True
            return self.delimited(i, delimiter.group(1))
        if _ANCHOR_LINE.match(raw):
            return i + 1
        attributes = _BLOCK_ATTRIBUTES.match(raw)
        if attributes is not None and not raw.startswith("[["):
            waiting = self.pending.title
            self.pending = _block_attributes(attributes.group(1))
            self.pending.title = waiting or self.pending.title
            return i + 1
        block_title = _BLOCK_TITLE.match(raw)
        if block_title is not None and not _ORDERED.match(raw):
            self.pending.title = block_title.group(1).strip()
            return i + 1
        heading = _HEADING.match(raw) or _two_line_title(raw, self.lines[i + 1] if i + 1 < n else "")
        if heading is not None:
            return self.heading(i, heading) + (0 if heading.re is _HEADING else 1)
        if _BREAK.match(stripped) or _BLOCK_MACRO.match(raw):
            image = _IMAGE_MACRO.match(raw)
            if image is not None:  # a figure: its title (the caption) and its alt text
                attrs = _block_attributes(image.group(2))
                alt = attrs.named.get("alt") or (attrs.positional[0] if attrs.positional else "")
                shown = image_text(alt.strip("\"'"), image.group(1))
                if self.pending.title or shown:
                    self.take_title()
                    self.emit(*([shown, ""] if shown else []))
            self.pending = _Block()
            return i + 1
        if stripped == "+":  # list continuation: the next block belongs to the item
            self.emit("")
            return i + 1
        self.started = True
        style = self.pending.style
        if style in ("source", "listing", "literal") or (not style and self.pending.positional[1:2]):
            return self.verbatim(i, None, self.paragraph_end(i))
        if style in ("pass", "stem", "comment"):
            end = self.paragraph_end(i)
            if style != "comment":
                self.passthrough_text(self.lines[i:end])
            self.pending = _Block()
            return end
        if line[:1] in " \t" and not _UNORDERED.match(line) and not _ORDERED.match(line):
            end = self.paragraph_end(i)
            if term_open:  # a description term's text, indented under it after a blank line (git's manuals)
                self.paragraph([ln.strip() for ln in self.lines[i:end]], style)
                return end
            return self.verbatim(i, None, end)  # an indented paragraph is literal
        end = self.paragraph_end(i)
        attribution = self.attribution()
        self.paragraph(self.lines[i:end], style)
        if attribution:
            self.emit("", attribution)
        return end

    def attribution(self) -> str:
        """Who a quote or verse block is by, and where from, as Asciidoctor shows it under the block:
        ``[quote,Carl Sandburg,Fog]`` -> "— Carl Sandburg, Fog"; "" for other blocks."""
        block = self.pending
        if block.style not in ("quote", "verse"):
            return ""
        by = block.named.get("attribution") or (block.positional[1] if len(block.positional) > 1 else "")
        cite = block.named.get("citetitle") or (block.positional[2] if len(block.positional) > 2 else "")
        parts = [self.inline(p.strip().strip("\"'")) for p in (by, cite) if p.strip().strip("\"'")]
        return "— " + ", ".join(parts) if parts else ""

    def paragraph_end(self, i: int) -> int:
        """Where the paragraph opening at line ``i`` ends: a blank line, a delimiter, a list continuation."""
        j = i + 1
        while j < len(self.lines):
            raw = self.lines[j].rstrip()
            if not raw.strip() or raw.strip() == "+" or _DELIMITER.match(raw) or _FENCE.match(raw):
                break
            if _BLOCK_ATTRIBUTES.match(raw) and not raw.startswith("[["):
                break
            if _BLOCK_TITLE.match(raw) and j + 1 < len(self.lines) and (
                    _BLOCK_ATTRIBUTES.match(self.lines[j + 1].rstrip()) or _DELIMITER.match(self.lines[j + 1].rstrip())):
                break  # a block's title written right under a paragraph
            j += 1
        return j

    def header_attribute(self, raw: str) -> None:
        entry = _ATTRIBUTE_ENTRY.match(raw)
        assert entry is not None
        unset, name, unset_after, value = entry.groups()
        if unset or unset_after:
            self.state.attributes.pop(name, None)
            return
        value = self.substitute(value or "")[:_MAX_VALUE_CHARS]
        self.state.attributes[name] = value
        if name in _METADATA and value and not self.started:
            self.state.metadata[name] = value

    def heading(self, i: int, heading: re.Match[str]) -> int:
        level = len(heading.group(1))
        title = self.inline(_INLINE_ANCHOR.sub("", _title_of(heading))).strip()
        if heading.group(1)[0] == "=":
            level = min(level, 6)
        self.pending = _Block()
        self.markers = []
        self.emit("", "#" * level + " " + title, "")
        if level == 1 and not self.started and not self.titled:  # the header: author and revision lines follow
            self.titled = True
            self.state.attributes.setdefault("doctitle", title)
            return self.author_lines(i + 1)
        self.started = True
        return i + 1

    def author_lines(self, i: int) -> int:
        """The author line (``Name <email>; Other``) and revision line (``v1.2, 2024-05-01: remark``) of the
        header, as metadata and as the attributes they set (``{author}``, ``{revnumber}``)."""
        attributes, metadata = self.state.attributes, self.state.metadata
        for key in ("author", "revision"):
            if i >= len(self.lines):
                break
            raw = self.lines[i].strip()
            if not raw or raw.startswith((":", "//", "[", ".")) or _DELIMITER.match(raw):
                break
            if key == "author":
                name, _, email = raw.partition(";")[0].partition("<")
                email = email.partition(">")[0].strip()
                if name.strip():
                    attributes.setdefault("author", name.strip())
                    metadata.setdefault("author", name.strip())
                if email:
                    attributes.setdefault("email", email)
                    metadata.setdefault("email", email)
            else:
                metadata.setdefault("revision", raw)
                head, _, remark = raw.partition(":")
                number, _, date = head.partition(",")
                for name, value in (("revnumber", number.strip().removeprefix("v")), ("revdate", date.strip()),
                                    ("revremark", remark.strip())):
                    if value:
                        attributes.setdefault(name, value)
            i += 1
        return i

    def fenced(self, i: int, fence: re.Match[str]) -> int:
        marks = fence.group(1)
        j = i + 1
        while j < len(self.lines) and not re.fullmatch(f"`{{{len(marks)},}}", self.lines[j].strip()):
            j += 1
        language = fence.group(2) or self.pending_language()
        self.take_title()
        body = [_callouts_out(ln) for ln in self.lines[i + 1:j]]
        mark = fence_for(body)
        self.emit("", mark + language, *body, mark, "")
        return j + 1

    def pending_language(self) -> str:
        block = self.pending
        language = block.named.get("language", "")
        if not language and len(block.positional) > 1 and block.style in ("source", ""):
            language = block.positional[1]
        return re.sub(r"[^\w+#.-]", "", language)

    def verbatim(self, i: int, delimiter: str | None, end: int | None = None) -> int:
        """A listing or literal block (delimited, or a styled or indented paragraph) as fenced code."""
        if delimiter is not None:
            end = i + 1
            while end < len(self.lines) and self.lines[end].rstrip() != delimiter:
                end += 1
            body = self.lines[i + 1:end]
            after = end + 1
        else:
            assert end is not None
            body = self.lines[i:end]
            after = end
        language = self.pending_language()
        subs = self.pending.named.get("subs", "")
        title = self.pending.title
        self.pending = _Block(title=title)
        self.take_title()
        body = [_callouts_out(ln) for ln in body]
        if "attributes" in subs:
            body = [self.substitute(ln, code=True) for ln in body]
        if delimiter is None:  # an indented paragraph: its common indentation out
            indent = min((len(ln) - len(ln.lstrip()) for ln in body if ln.strip()), default=0)
            body = [ln[indent:] for ln in body]
        if any(ln.strip() for ln in body):  # a listing filled by an include (left out) is empty
            mark = fence_for(body)
            self.emit("", mark + language, *body, mark, "")
        return after

    def delimited(self, i: int, delimiter: str) -> int:
        if self.stack and delimiter == self.stack[-1][0]:
            closing = self.stack.pop()[1]
            self.emit("", *([closing, ""] if closing else []))
            return i + 1
        kind = delimiter[0]
        style = self.pending.style
        if kind in "|!,:":
            return self.table(i, delimiter)
        if kind in "-." and delimiter != "--":
            if style in ("pass", "comment"):
                return self.skip(i, delimiter, keep_text=style == "pass")
            return self.verbatim(i, delimiter)
        if kind == "/":
            return self.skip(i, delimiter, keep_text=False)
        if kind == "+":
            return self.skip(i, delimiter, keep_text=True)
        if len(self.stack) >= _MAX_NESTING:
            self.emit(self.inline(delimiter))
            return i + 1
        # Example, sidebar, quote and open blocks hold ordinary content; an admonition style names it.
        self.stack.append((delimiter, self.attribution()))
        title = self.pending.title
        self.pending = _Block()
        self.emit("")
        if title:
            self.emit(self.inline(title), "")
        if style in _ADMONITIONS:
            self.emit(style.capitalize() + ":")
        return i + 1

    def skip(self, i: int, delimiter: str, keep_text: bool) -> int:
        """A comment block (dropped) or a passthrough block (its text without tags)."""
        end = i + 1
        while end < len(self.lines) and self.lines[end].rstrip() != delimiter:
            end += 1
        self.pending = _Block()
        if keep_text:
            self.passthrough_text(self.lines[i + 1:end])
        return end + 1

    def passthrough_text(self, lines: list[str]) -> None:
        """A passthrough's text as the page shows it: scripts and style sheets out, then the tags."""
        text = "\n".join(lines)
        kept: list[str] = []
        at = 0
        while (m := _SCRIPT.search(text, at)) is not None:
            kept.append(text[at:m.start()])
            close = text.lower().find(f"</{m.group(1).lower()}", m.end())
            at = len(text) if close < 0 else close
        kept.append(text[at:])
        self.prose_lines([_TAGS.sub(" ", ln) for ln in "".join(kept).split("\n")])

    def prose_lines(self, lines: list[str]) -> None:
        text = " ".join(" ".join(lines).split())
        if text:
            self.emit("", text, "")

    def paragraph(self, lines: list[str], style: str) -> None:
        """A paragraph, or the items of a list written without blank lines between them. Each item's
        lines are read together, so a macro or code span may run across them."""
        self.take_title()
        lines = [ln.rstrip() for ln in lines if not ln.startswith("//")]  # comment lines inside it
        if not lines:
            return
        first = lines[0].strip()
        admonition = _ADMONITION.match(first)
        if style in _ADMONITIONS:
            lines = [f"{style.capitalize()}: {first}", *lines[1:]]
        elif admonition is not None:
            lines = [f"{admonition.group(1).capitalize()}: {admonition.group(2)}", *lines[1:]]
        items: list[tuple[str, list[str]]] = []
        if not (_UNORDERED.match(lines[0]) or _ORDERED.match(lines[0])):
            self.markers = []  # a paragraph outside a list ends it
        for raw in lines:
            start = self.item_start(raw)
            if start is not None or not items:
                prefix, text = start if start is not None else ("", raw.strip())
                items.append((prefix, [text]))
            else:
                items[-1][1].append(raw.strip())
        for prefix, texts in items:
            converted = self.inline("\n".join(texts)).split("\n")
            head = prefix + converted[0] if prefix else _escape_line(converted[0])
            self.emit(head.rstrip(), *(_escape_line(c) for c in converted[1:]))
        last_prefix, last_texts = items[-1]
        self.term_open = last_prefix.startswith("- ") and last_prefix.endswith(": ") and not "".join(last_texts).strip()

    def item_start(self, raw: str) -> tuple[str, str] | None:
        """``(Markdown marker, text)`` where a list item, callout item or description item starts."""
        item = _UNORDERED.match(raw) or _ORDERED.match(raw)
        if item is not None:
            return self.nested(item.group(1)), item.group(2)
        callout = _CALLOUT_ITEM.match(raw)
        if callout is not None:
            return f"({callout.group(1)}) ", callout.group(2)
        description = _DESCRIPTION.match(raw) if "::" in raw or ";;" in raw else None
        if description is not None and description.group(1).count("[") <= description.group(1).count("]"):
            return f"- {self.inline(description.group(1)).strip()}: ", description.group(3) or ""
        return None

    def nested(self, marker: str) -> str:
        """The Markdown marker, indented, for a list item: as in Asciidoctor, a marker not seen yet in the
        list opens a list inside the item before it (``*`` then ``-``, ``.`` then ``**``), one seen
        before closes the lists opened since."""
        marker = "1." if marker[0].isdigit() else marker
        if marker in self.markers:
            del self.markers[self.markers.index(marker) + 1:]
        else:
            self.markers.append(marker)
        indent = sum(3 if m[0] in ".1" else 2 for m in self.markers[:-1])
        return " " * indent + ("1. " if marker[0] in ".1" else "- ")

    # -- tables ------------------------------------------------------------------------------------
    def table(self, i: int, delimiter: str) -> int:
        end = i + 1
        while end < len(self.lines) and self.lines[end].rstrip() != delimiter:
            end += 1
        block = self.pending
        self.pending = _Block()
        body = self.lines[i + 1:end]
        rows = self.table_rows(body, delimiter[0], block)
        if block.title:
            self.emit("", self.inline(block.title))
        if rows:
            self.emit("", pipe_table(rows), "")
        return end + 1

    def table_rows(self, body: list[str], kind: str, block: _Block) -> list[list[str]]:
        fmt = block.named.get("format", {",": "csv", ":": "dsv"}.get(kind, "psv"))
        if fmt in ("csv", "tsv", "dsv"):
            separator = block.named.get("separator") or {"csv": ",", "tsv": "\t", "dsv": ":"}[fmt]
            records = [ln for ln in body if ln.strip()]
            if fmt == "dsv":
                return [[self.cell(c) for c in rec.split(separator)] for rec in records][:10_000]
            try:
                return [[self.cell(c) for c in rec] for rec in csv.reader(records, delimiter=separator[:1] or ",")]
            except csv.Error:
                return [[self.cell(rec)] for rec in records]
        separator = block.named.get("separator", "!" if kind == "!" else "|")[:1] or "|"
        column_styles = _column_styles(block.named.get("cols", ""))
        columns = len(column_styles)
        cells = _psv_cells(body, separator)
        if not cells:
            return []
        if columns == 0:  # the first line's cells, as Asciidoctor counts them
            columns = sum(across * repeat for line, _text, across, _down, repeat, _style in cells if line == 0) or 1
        columns = min(columns, _MAX_COLUMNS)
        rows: list[list[str]] = []
        row: list[str] = []
        spanned: dict[int, tuple[str, int]] = {}

        def fill() -> None:
            while len(row) in spanned and len(row) < columns:
                column = len(row)
                text, left = spanned.pop(column)
                row.append(text)
                if left > 1:
                    spanned[column] = (text, left - 1)

        for _line, content, across, down, repeat, style in cells:
            fill()
            if len(row) >= columns:
                rows.append(row)
                row = []
                fill()
            if not style and len(row) < len(column_styles):  # the column's style (cols="1,2a") if the cell has none
                style = column_styles[len(row)]
            text = self.cell(content, style)
            for _ in range(min(repeat, columns)):  # "3*|x": x in three cells; never more than a row's worth
                fill()
                if len(row) >= columns:
                    rows.append(row)
                    row = []
                    fill()
                if down > 1:
                    for k in range(across):
                        spanned[len(row) + k] = (text if k == 0 else "", down - 1)
                row.append(text)
                row.extend([""] * (across - 1))
                if len(row) >= columns:
                    rows.append(row)
                    row = []
        fill()
        if row:
            rows.append(row)
        return rows

    def cell(self, text: str, style: str = "") -> str:
        """A table cell on one line, pipes escaped: its lines' prose joined; a literal cell's lines as
        written; in an AsciiDoc cell (``a|``) code blocks as inline code, block attributes, delimiters
        and comments out, a nested table's cells (``!``) in a row."""
        lines = [ln.strip() for ln in text.split("\n")]
        if style == "l":
            return " ".join(ln for ln in lines if ln).replace("|", "\\|")
        parts: list[str] = []
        verbatim: str | None = None
        code: list[str] = []
        for line in lines:
            if verbatim is not None:
                if line == verbatim:
                    parts.append(_inline_code(" ".join(code)))
                    verbatim, code = None, []
                elif line:
                    code.append(_callouts_out(line))
                continue
            if style == "a":
                if re.fullmatch(r"-{4,}|\.{4,}|`{3,}\w*", line):
                    verbatim, code = ("```" if line.startswith("`") else line), []
                    continue
                if _BLOCK_ATTRIBUTES.match(line) or line.startswith("!==="):
                    continue
                if "!" in line:  # a nested table's row
                    line = " ".join(c.strip() for c in re.split(r"(?<!\\)!", line) if c.strip())
            if not line or line == "+" or line.startswith("//") or _DELIMITER.match(line):
                continue
            parts.append(self.inline(_list_marker_out(line)))
        if code:
            parts.append(_inline_code(" ".join(code)))
        cell = " ".join(p for p in parts if p.strip())
        if not cell.strip() and (references := _ATTRIBUTE_REF.findall(text)):
            # Only references to attributes the site sets ("{check-mark}"): their names say what it shows.
            cell = " ".join(_humane(name) for escaped, name in references if not escaped)
        return cell.replace("|", "\\|")


_CELL_SPEC = re.compile(r"(?:(\d{1,4})\*)?(?:(\d{1,4})?(?:\.(\d{1,4}))?\+)?(?:[<^>])?(?:\.[<^>])?([adehlmsv]?)$")


def _psv_cells(body: list[str], separator: str) -> list[tuple[int, str, int, int, int, str]]:
    """A table's cells: ``(line index of the cell's start, content, columns spanned, rows spanned, repeat,
    style)``, the style a letter (``a`` AsciiDoc content, ``l`` literal) or empty.
    A cell runs from its separator to the next one (across lines); the spec before a separator
    (``2+``, ``.3+``, ``3*``, ``a``, ``^.>``) belongs to the cell after it."""
    cells: list[tuple[int, str, int, int, int, str]] = []
    current: list[str] | None = None
    spec: tuple[int, int, int, str] = (1, 1, 1, "")
    start_line = 0
    first_line: int | None = None
    for index, line in enumerate(body):
        if not line.strip():
            if current is not None:
                current.append("")
            continue
        if first_line is None:
            first_line = index
        pos = 0
        for m in re.finditer(r"(?<!\\)" + re.escape(separator), line):
            before = line[pos:m.start()]
            cut = _CELL_SPEC.search(before)
            # A spec follows white space, or opens the line: "|a|all" is two cells, "a" and "all".
            at_start = cut is not None and cut.start() == 0 and pos == 0
            spec_text = cut.group(0) if cut is not None and (at_start or (cut.start() > 0 and before[cut.start() - 1] in " \t")) else ""
            text = before[:len(before) - len(spec_text)]
            if current is not None:
                current.append(text)
                cells.append((start_line, _unescape("\n".join(current), separator), *spec))
            elif text.strip():  # text before a table's first separator: a cell, as Asciidoctor recovers it
                cells.append((0, _unescape(text, separator), 1, 1, 1, ""))
            groups = cut.groups() if spec_text and cut is not None else (None, None, None, "")
            repeat = min(int(groups[0]), 1000) if groups[0] else 1
            across = min(int(groups[1]), _MAX_COLUMNS) if groups[1] else 1
            down = min(int(groups[2]), _MAX_ROWSPAN) if groups[2] else 1
            spec = (across, down, repeat, groups[3] or "")
            current = []
            start_line = 0 if index == first_line else 1
            pos = m.end()
        if current is not None:
            current.append(line[pos:])
    if current is not None:
        cells.append((start_line, _unescape("\n".join(current), separator), *spec))
    return cells


def _unescape(text: str, separator: str) -> str:
    return text.replace("\\" + separator, separator).strip()


def _column_styles(cols: str) -> list[str]:
    """Each column's style from ``cols="1,2a,3"``, ``cols="3*"``, ``cols="2*a,1"`` (a letter, or empty);
    an empty list if not given."""
    cols = cols.strip()
    if not cols:
        return []
    if re.fullmatch(r"\d{1,3}", cols):
        return [""] * min(int(cols), _MAX_COLUMNS)
    styles: list[str] = []
    for spec in re.split(r"[,;]", cols)[:_MAX_COLUMNS]:
        multiplier = re.match(r"\s*(\d{1,3})\*", spec)
        style = re.search(r"([adehlmsv])\s*$", spec)
        styles += [style.group(1) if style else ""] * (int(multiplier.group(1)) if multiplier else 1)
    return styles[:_MAX_COLUMNS]


def _inline_code(code: str) -> str:
    ticks = "``" if "`" in code else "`"
    return f"{ticks}{code}{ticks}" if code.strip() else ""


def _list_marker_out(text: str) -> str:
    m = _UNORDERED.match(text) or _ORDERED.match(text)
    return m.group(2) if m is not None else text


def _other_macro(m: re.Match[str]) -> str:
    """What an extension's inline macro shows: a Javadoc link its class's simple name (``@Name`` for
    ``format=annotation``), a manual page ``git-log(1)``, a property or other dotted name as code."""
    name, target, content = m.groups()
    if name == "javadoc":
        simple = re.split(r"[.$]", target.split("#", 1)[0])[-1]
        return f"`@{simple}`" if "annotation" in content else f"`{simple}`"
    if name == "linkgit":
        return f"{target}({content})" if content.isdigit() else target
    if content.strip() and "=" not in content:  # label:new[Introduced in 5.8]: the text it shows
        return content.replace("\\]", "]").strip()
    return f"`{target}`" if re.search(r"\w[._$]\w", target) else target


def _humane(name: str) -> str:
    """An id or page name as words: ``_getting_started`` -> ``getting started``."""
    return " ".join(re.split(r"[_\-]+", name)).strip() or name


# A prose line that Markdown would read as structure.
_MARKDOWN_START = re.compile(r"^(?:#|[-+*][ \t]|\d{1,9}[.)][ \t]|={3,}[ \t]*$|-{3,}[ \t]*$|`{3,}|~{3,}|<!--)")


def _escape_line(line: str) -> str:
    return "\\" + line if _MARKDOWN_START.match(line) else line
