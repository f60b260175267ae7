"""HTML pages as Markdown: the main content (navigation, headers, footers, scripts and site furniture
left out), headings, lists, code blocks with their language, and tables as pipe tables (BeautifulSoup)."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graphrag.ingest.encoding import has_bom
from graphrag.ingest.html_content import (HEADINGS, NO_PROSE, Prose, find_prose, is_hidden, opens_with_heading,
                                          story_article)
from graphrag.ingest.load_base import (LIST_INDENT_LEVELS, LoadError, file_title, image_text, join_blocks,
                                       render_block, small_count)
from graphrag.ingest.textprep import markdown_title, pipe_table, reads_as_bold_title
from graphrag.models import Document


# Limits on hostile HTML. bs4 keeps about 1 KB per element, so the element cap bounds memory (~0.5 GB);
# a legitimate page has far fewer (a very long Wikipedia article: ~50,000).
HTML_MAX_ELEMENTS = 500_000


# Elements whose text is one block of the output; a <p>/<blockquote> inside an owner is part of its text.
_HTML_BLOCKS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6", "p", "li", "pre", "blockquote", "dt", "dd",
                          "figcaption", "summary"})


# An admonition's title, shown in bold like the Markdown loaders' block titles (see _block_title).
_BLOCK_TITLE_CLASSES = frozenset({"admonition-title", "markdown-alert-title", "alert-title"})
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


# A tab list's labels are read over each tab's panel instead (see _tab_label).
_HTML_SKIP_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "dialog",
                              "alertdialog", "menu", "menubar", "toolbar", "tooltip", "doc-backlink", "tablist"})


# class/id words that name page furniture (a readability-style rule, applied to containers only: an inline
# <a class="header"> wrapping a heading's text stays). The second set only outside a main landmark, where a
# "header" is the site's banner rather than the article's own title block.
_HTML_CHROME = frozenset({"nav", "navbar", "navigation", "menu", "menubar", "sidebar", "sidenav", "breadcrumb",
                          "breadcrumbs", "toc", "pagination", "pager", "cookie", "cookies", "share", "sharing",
                          "social", "skip", "topbar", "bottombar", "comment", "comments", "disqus", "consent",
                          "gdpr", "related", "sponsored", "advertisement", "newsletter", "outbrain", "taboola",
                          "promo"})


_HTML_CHROME_OUTSIDE_MAIN = frozenset({"header", "footer", "banner", "masthead", "copyright"})


# A page without a landmark is read from the element holding this share of its prose (its story).
_PAGE_PROSE = 0.8


_HTML_CONTAINERS = frozenset({"div", "section", "ul", "ol", "dl", "aside", "header", "table"})


# Whole class names that mark furniture on any element, inline ones included: text only screen readers
# get, line-number gutters of highlighted code, heading self-links, footnote back-links, "skip to content"
# and "back to top" links, copy buttons, rustdoc's version-and-source corner and its "Expand description",
# pdoc's "View Source" toggle (the source it shows stays), mdBook's hidden lines of a code example
# ("boring": the `fn main() {` around it, shown only on request), MediaWiki's "[edit]" links and "Retrieved
# from" line, and what a page marks as not to be printed (MediaWiki's navigation boxes, Bootstrap's bars).
_HTML_FURNITURE_CLASSES = frozenset({
    "sr-only", "visually-hidden", "visuallyhidden", "screen-reader-text", "screen-reader-only",
    "linenos", "linenodiv", "lineno", "linenumber", "line-number", "line-numbers", "rouge-gutter",
    "headerlink", "hash-link", "anchor-link", "anchorjs-link", "header-anchor", "heading-anchor",
    "footnote-backref", "fn-backref", "skip-link", "skip-to-content", "skip-to-main", "back-to-top",
    "copybtn", "copy-button", "md-clipboard", "rightside", "hideme", "since", "view-source-button",
    "boring", "popup-hidden", "is-hidden", "mw-editsection", "printfooter", "mw-jump-link", "noprint", "no-print",
    "d-print-none", "hidden-print"})


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


def load_html(path: Path, data: bytes) -> list[Document]:
    """An HTML page's main content as Markdown-like text: headings, lists, code blocks and pipe tables.

    The article is the page's main landmark (``<main>``, ``role="main"``, or its one ``<article>``);
    navigation, banners, footers, sidebars, hidden help popups and scripts are dropped. A page whose
    landmark holds no text (a search page filled in by script) has no text content.
    """
    from bs4 import BeautifulSoup, XMLParsedAsHTMLWarning

    if b"\x00" in data and not has_bom(data):  # UTF-16 with its byte-order mark is text (the parser reads the mark)
        raise LoadError(f"{path.name}: binary content (NUL bytes) in an HTML file")
    elements = data.count(b"<") - data.count(b"</")  # an upper bound on start tags, counted before parsing
    if elements > HTML_MAX_ELEMENTS:
        raise LoadError(f"{path.name}: about {elements} HTML elements is over the {HTML_MAX_ELEMENTS} limit")
    # lxml, not the stdlib "html.parser": on Python < 3.13.4 html.parser is quadratic on crafted input
    # (60 KB of "<a " took ~50 s), and it nests every unclosed <p>/<li>, where lxml closes them as
    # browsers do. lxml is always installed (python-docx needs it).
    with warnings.catch_warnings():
        # XHTML (an SEC filing's inline XBRL) read as HTML is what we want; the warning is noise on stderr.
        warnings.simplefilter("ignore", XMLParsedAsHTMLWarning)
        soup = BeautifulSoup(data, "lxml", from_encoding=_utf8_or_none(data))
    title_tag = soup.find("title")
    page_title = title_tag.get_text(" ", strip=True).translate(_INVISIBLE) if title_tag else ""
    # The element holding the page's prose and its ancestors are the article whatever their class names
    # say ("l-sidebar-fixed l-article-body", "article-body pagination-first").
    prose = find_prose(soup)
    root, landmark = _main_content(soup, prose)
    if prose.core is not None and not prose.holds(root):  # the densest prose is outside the landmark (a popup)
        prose = find_prose(root)
    _split_bold_lead_ins(root)
    blocks = _html_blocks(root, landmark, prose=prose)
    if not blocks and root is not soup and root.name == "article":  # an empty article: read the landmark around it
        blocks = _html_blocks(soup, False, prose=prose)
    body = join_blocks([render_block(kind, text) for kind, text in blocks])
    if not body.strip() and not landmark:
        body = soup.get_text("\n", strip=True)
    tags, meta = _meta_tags(soup)
    title = _html_title(page_title, blocks, tags) or markdown_title(body) or file_title(path)
    return [Document(source=str(path), title=title, text=body, kind="markdown", metadata=meta)]


def _utf8_or_none(data: bytes) -> str | None:
    """"utf-8" for a page whose bytes are UTF-8 (without a byte-order mark), whatever its ``<meta charset>``
    says; None leaves the choice to the page's declaration. A page saved or converted to UTF-8 often
    keeps its old declaration (``charset=gb2312``), and read as that it decodes to nothing; bytes in a
    legacy encoding are almost never valid UTF-8 beyond ASCII, where both read the same."""
    if has_bom(data):
        return None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "utf-8"


def _html_title(page_title: str, blocks: list[tuple[str, str]], tags: dict[str, str]) -> str:
    """The article's own <h1>; else the page ``<title>`` less its site's name: the part of it that the
    first heading or the page's ``og:title`` is ("Quickstart" of "Quickstart | Flask"), or all but the
    part that is its ``og:site_name`` ("Zuckerberg offers peek at Facebook's acquisition strategies -
    CNET"); else the whole ``<title>``. (An <h1> outside the article may be the site's banner.)"""
    headings = [text for kind, text in blocks if kind in ("h1", "h2", "h3", "h4", "h5", "h6") and text]
    h1 = next((text for kind, text in blocks if kind == "h1" and text), "")
    if h1:
        return h1
    parts = _TITLE_SEPARATORS.split(page_title)
    if len(parts) < 2:
        return page_title
    if headings and headings[0] in parts:
        return headings[0]
    site = tags.get("og:site_name") or tags.get("application-name") or ""
    own = tags.get("og:title") or tags.get("twitter:title") or ""
    if own and own in parts and own.casefold() != site.casefold():
        return own
    if site and site.casefold() in (parts[0].casefold(), parts[-1].casefold()):
        separators = _TITLE_SEPARATORS.findall(page_title)
        if site.casefold() == parts[-1].casefold():
            return page_title[:page_title.rfind(separators[-1])]
        return page_title[page_title.find(separators[0]) + len(separators[0]):]
    return page_title


def _meta_tags(soup: Any) -> tuple[dict[str, str], dict[str, str]]:
    """The page's ``<meta>`` tags, read once: for the title, each ``property`` (Open Graph's) and then
    ``name`` (Twitter's, ``application-name``) with its first content, white space collapsed; and the
    document's metadata, its ``author``, ``description`` and ``keywords`` as written."""
    by_property: dict[str, str] = {}
    by_name: dict[str, str] = {}
    meta: dict[str, str] = {}
    for m in soup.find_all("meta"):
        content = m.get("content")
        if not isinstance(content, str):
            continue
        shown = " ".join(content.translate(_INVISIBLE).split())
        for key, found in ((m.get("property"), by_property), (m.get("name"), by_name)):
            if isinstance(key, str) and key not in found:
                found[key] = shown
        name = m.get("name")
        if name in ("author", "description", "keywords") and content:
            meta[name] = content
    return {**by_name, **by_property}, meta


def _main_content(soup: Any, prose: Prose) -> tuple[Any, bool]:
    """The element holding the page's article, and whether it is a main landmark (else the whole page).

    The main landmark (the narrowest, where one is inside another); where the page's prose
    (:func:`~graphrag.ingest.html_content.find_prose`) lies in another of several landmarks, that one.
    Inside it (or the page), the article: the one ``<article>``, or of several the one that holds the
    prose (:func:`~graphrag.ingest.html_content.story_article`; an article that holds none, a photo box
    or a teaser, is not the page's). A page with neither reads from the element that holds four fifths
    of its prose, if one below the body does (a news page's story without the site's lists around it).
    """
    from bs4.element import Tag

    def is_main(tag: Any) -> bool:
        return isinstance(tag, Tag) and (tag.name == "main" or tag.get("role") == "main")

    def holds_core(node: Any) -> bool:
        return prose.core is None or prose.holds(node)

    def article_in(node: Any, landmark: bool) -> tuple[Any, bool]:
        articles = node.find_all("article")
        if len(articles) == 1 and holds_core(articles[0]):
            return articles[0], True
        story = story_article(prose, articles)
        if story is not None:
            return story, True
        if not landmark and prose.core is not None:
            up = next((e for e in [prose.core, *prose.core.parents] if prose.share(e) >= _PAGE_PROSE), None)
            while up is not None and up.name == "section" and opens_with_heading(up):
                up = up.parent  # a section of a document: its sections beside it are the document too
            if up is not None and up.name not in ("body", "html", "[document]"):
                return up, False
        return node, landmark

    mains = soup.find_all(is_main)
    if not mains:
        return article_in(soup, False)
    root = next((m for m in reversed(mains) if prose.core is not None and holds_core(m)), None)
    if root is None:
        root = mains[0]
        while (inner := root.find(is_main)) is not None:  # a role="main" article inside <main>: the narrower one
            root = inner
    return article_in(root, True)


def _classes(node: Any) -> list[str]:
    value = node.attrs.get("class") or ()
    return [value] if isinstance(value, str) else list(value)


def _skip_html(node: Any, landmark: bool, in_article: bool, prose: Prose = NO_PROSE) -> bool:
    """Whether an element is page furniture rather than article text (its whole subtree is dropped).

    The elements that hold the page's ``prose`` are never furniture by their tag or class names; a
    block of links beside the prose is (:meth:`~graphrag.ingest.html_content.Prose.beside`).
    """
    name = node.name
    if name in _HTML_SKIP:
        return True
    attrs = node.attrs
    if not attrs:
        return name in ("header", "aside") and not (landmark or in_article) and not prose.holds(node)
    role = attrs.get("role")
    # Sphinx's "toc-backref" is a heading's own text as a link back to the contents, not a footnote's "↩".
    if role in _HTML_SKIP_ROLES and not (role == "doc-backlink" and node.parent is not None
                                         and node.parent.name in HEADINGS):
        return True
    if is_hidden(node):
        return True
    if name in ("header", "aside") and not (landmark or in_article) and not prose.holds(node):
        return True
    classes = _classes(node)
    if not _HTML_FURNITURE_CLASSES.isdisjoint(classes):
        return True
    if name == "a":  # a heading's self-link: "¶", "#", or an empty one labelled "Direct link to ..."
        href = attrs.get("href")
        if "src" in classes:  # rustdoc's "Source" link
            return True
        if isinstance(href, str) and href.lstrip().lower().startswith("javascript:"):
            return True  # a control that runs a script ("Tests", "Show more"), not a link to text
        if not (isinstance(href, str) and href.startswith("#")):
            return False
        label = attrs.get("aria-label")
        if isinstance(label, str) and label.lower().startswith(_HEADING_LINK_LABELS):
            return True
        # A block holding nothing but links, one of them to itself: a permalink (the Rust Reference's
        # "[items.fn.intro]" rule ids). A heading that links to itself (mdBook's) keeps its text.
        parent = node.parent
        if (parent is not None and parent.name in ("div", "section") and href[1:] == parent.attrs.get("id")
                and _no_space(parent.get_text()) == "".join(_no_space(a.get_text()) for a in parent.find_all("a"))):
            return True
        text = node.get_text().translate(_INVISIBLE).strip() if len(node.contents) <= 1 else None
        return text is not None and (text in _HEADING_LINK_MARKS or (not text and "anchor" in classes))
    if name in _HTML_CONTAINERS and not prose.holds(node):
        if prose.beside(node):
            return True
        words: set[str] = set()
        # A section's id is its heading's slug ("set-cookie-options", "navigation"): it says nothing
        # about furniture.
        for item in [*classes, "" if opens_with_heading(node) else str(attrs.get("id") or "")]:
            words.update(re.split(r"[-_\s]+", item.lower()))
        if words & _HTML_CHROME or (not landmark and not in_article and words & _HTML_CHROME_OUTSIDE_MAIN):
            return True
    return False



def _tab_label(panel: Any) -> str:
    """The label of a tab's panel: the text of the tab that ``aria-labelledby`` names ("Fish"), else
    of the tab at the panel's place in the tab list before it (Docusaurus names none), or ""."""
    labelled = panel.get("aria-labelledby")
    if isinstance(labelled, str) and labelled.strip():
        tab = panel.find_previous(attrs={"id": labelled.split()[0]})
    else:
        tablist = panel.find_previous(attrs={"role": "tablist"})
        tabs = tablist.find_all(attrs={"role": "tab"}) if tablist is not None else []
        place = len(panel.find_previous_siblings(attrs={"role": "tabpanel"}))
        tab = tabs[place] if place < len(tabs) else None
    return " ".join(tab.get_text(" ").split())[:100] if tab is not None else ""


def _no_space(text: str) -> str:
    return "".join(text.split())


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


def _html_blocks(root: Any, landmark: bool, cell: bool = False, prose: Prose = NO_PROSE) -> list[tuple[str, str]]:
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

    def add_text(text: str, current: _Block | None) -> None:
        """Inline text into the open block, or into a block of loose text."""
        if current is not None:
            target(current).parts.append(text)
        elif loose[0] is not None:  # white space between inline elements still separates words
            loose[0].parts.append(text)
        elif text.strip():
            opened = loose[0] = _Block("p")
            out.append(opened)
            opened.parts.append(text)

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
            if _skip_html(node, landmark, frame.in_article, prose):
                continue
            if name in _HTML_BREAKS:
                loose[0] = None
                if current is not None:
                    target(current).parts.append("\n" if in_pre and name == "br" else "" if in_pre else " ")
                if (name == "br" and not in_pre and current is not None and current.kind in ("p", "blockquote")
                        and _second_break(node)):
                    start(_Block("p"), current)  # "<br><br>" ends a paragraph: the text after it is the next one
                    continue
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
            if name == "img" and not in_pre:  # its alt text, as the page's Markdown source keeps it
                alt = node.get("alt")
                shown = image_text(alt, str(node.get("src") or "")) if isinstance(alt, str) else ""
                if shown:
                    add_text(shown, current)
                continue
            if not in_pre and node.get("role") == "tabpanel" and (label := _tab_label(node)):
                start(_Block("title"), current)  # each tab's text under its tab's label
                out[-1].parts.append(label)
            child = _Frame(iter(node.contents), current, in_pre or name == "pre", frame.in_owner or name in _HTML_OWNERS,
                           frame.in_article or name in ("article", "section"), frame.list, frame.indent)
            if name in ("ul", "ol") and not in_pre:
                number = small_count(node.get("start"), 1, 10**6) - 1 if name == "ol" else 0
                child.list = [name == "ol", number, frame.indent]
            # An admonition's title is a block of its own, in a quote too (mdBook's alerts are quotes).
            owned = frame.in_owner and name in ("p", "blockquote") and not (
                node.parent is not None and node.parent.name == "blockquote" and _block_title(node))
            if not in_pre and name in _HTML_BLOCKS and not owned:
                kind = name
                if name == "pre":
                    kind = "pre " + _code_language(node)
                elif name == "li":
                    kind, child.indent = _list_item(frame.list)
                elif _block_title(node):
                    kind = "title"
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
            add_text(str(node).translate(_INVISIBLE), current)
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


def _second_break(br: Any) -> bool:
    """Whether a ``<br>`` follows another one with nothing but white space between them."""
    before = br.previous_sibling
    while before is not None and before.name is None and not str(before).strip():
        before = before.previous_sibling
    return before is not None and before.name == "br"


def _block_title(node: Any) -> bool:
    """Whether ``node`` is the title of an admonition or a block: Python-Markdown's and Sphinx's
    (docutils') ``<p class="admonition-title">``, GitHub's ``<p class="markdown-alert-title">``, or a
    short paragraph wholly in bold (``<p><strong>Expected output</strong></p>``, a Markdown ``**Setup**``
    line as HTML; a longer one, or one that ends as a sentence, is a sentence set in bold: "Many thanks
    to ...", "Do not enable debug mode in production.")."""
    return not _BLOCK_TITLE_CLASSES.isdisjoint(_classes(node)) or (
        node.name == "p" and len(_bold_lead(node)) == 1 and reads_as_bold_title(node.get_text()))


def _bold_lead(p: Any) -> list[Any]:
    """The children of ``p`` (text of blanks aside) when it opens with a ``<strong>``/``<b>`` holding
    text, else none: one child when the bold is all of it."""
    from bs4 import NavigableString, Tag

    kids = [c for c in p.contents if not (isinstance(c, NavigableString) and not c.strip())]
    if not kids or not isinstance(kids[0], Tag) or kids[0].name not in ("strong", "b") or not kids[0].get_text().strip():
        return []
    return kids


def _split_bold_lead_ins(root: Any) -> None:
    """Give a paragraph's bold first line its own paragraph, where a line break ends it (the Rust
    Reference's ``<p><strong>Syntax</strong><br>`` over each grammar): a title, as a line wholly in
    bold is in Markdown."""
    from bs4 import Tag

    for p in root.find_all("p"):
        kids = _bold_lead(p)
        if len(kids) < 3 or not (isinstance(kids[1], Tag) and kids[1].name == "br"):
            continue
        rest = p.__copy__()
        rest.clear()
        for child in list(p.contents[p.contents.index(kids[1]) + 1:]):
            rest.append(child.extract())
        kids[1].extract()
        rest.attrs = {}
        p.insert_after(rest)


def _list_item(lst: list[Any] | None) -> tuple[str, str]:
    """A list item's kind (``li`` + indentation + marker) and where a list inside it is indented to."""
    if lst is None:  # an <li> outside any list
        return "li - ", "  "
    lst[1] += 1
    marker = f"{lst[1]}. " if lst[0] else "- "
    indent = lst[2]
    inner = indent + " " * len(marker) if indent.count(" ") < 4 * LIST_INDENT_LEVELS else indent
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
    for _ in range(7):  # the highlighter's wrappers, a line-number table's cells included
        if parent is None or parent.name not in ("div", "figure", "section", "td", "tr", "tbody", "table"):
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


# A cell this long means a page laid out with a table, not a table of data.
_LAYOUT_CELL_CHARS = 2000


# Highlighted code laid out as a table: a line-number column beside the code.
_CODE_TABLES = frozenset({"highlighttable", "rouge-table", "linenotable"})


def _html_table(table: Any) -> tuple[str, str] | None:
    """``(caption, pipe table)`` for a data table; None for a layout table (read as ordinary blocks): one
    marked so, holding a table, a cell too long for a table, or a single column.

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
            down = small_count(cell.get("rowspan"), 1, 1000)
            across = small_count(cell.get("colspan"), 1, 50)
            if down > 1:  # each column the cell covers is filled in the rows below
                for k in range(max(across, 1)):
                    spanned[len(cells) + k] = (text if k == 0 else "", down - 1)
            cells.append(text)
            cells.extend([""] * (across - 1))
        _fill_spanned(cells, spanned)
        if cells:
            rows.append(cells)
    if not rows or max(len(row) for row in rows) < 2:
        return None  # one column: a box around text (an essay laid out in a table cell), or a list
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
