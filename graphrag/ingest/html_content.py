"""Where an HTML page's article is: the element its prose lives in, found by a readability-style score.

Class names and landmarks say where a page's article is on most sites, and mislead on many others: a
news site's article body sits in ``<div class="l-sidebar-fixed l-article-body">``, a second ``<main>``
holds the story while the first holds a banner, the one ``<article>`` inside the landmark is a photo
box. The prose says it better: paragraphs of sentences, few of them links. :func:`find_prose` scores
each paragraph (its length and commas) into its parent and grandparent, weighs the best candidates by
their link density, and returns the element that holds the most prose; the reader keeps that element
and its ancestors whatever their names say, and picks the landmark that holds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Elements whose text is prose when it is long enough (readability scores the same, and loose text in divs).
_PROSE_TAGS = frozenset({"p", "pre", "td", "blockquote", "dd"})


# Elements whose loose text (text written straight into them) is prose when it is long enough.
_LOOSE_TEXT_TAGS = frozenset({"div", "section", "article"})


# Block-level elements: a div holding none of them is a paragraph written in a div (a story's text in
# <div><span>...</span></div>, as readability reads it).
_BLOCK_TAGS = frozenset({"p", "div", "section", "article", "main", "ul", "ol", "dl", "table", "pre", "blockquote",
                         "h1", "h2", "h3", "h4", "h5", "h6", "figure", "header", "footer", "nav", "aside", "form",
                         "hr", "details", "fieldset", "address"})


# Never the article: its paragraphs do not vote (a footer's "About us", a form's help text).
_NOT_PROSE = frozenset({"nav", "footer", "header", "aside", "form", "button", "select", "textarea", "dialog"})


# Landmark roles that are not the article (a Sphinx sidebar is a <div role="navigation">).
_NOT_PROSE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "dialog", "menu"})


# Class or id names (parts of them: "commentlist", "m-privacy-consent") of what is not the article, and
# names that say it is (a Vox story's body is "l-sidebar-fixed l-article-body"): an element with the first
# and none of the second does not vote.
_UNLIKELY = ("comment", "disqus", "respond", "replies", "related", "recirc", "sponsor", "promo", "advert",
             "banner", "breadcrumb", "footer", "sidebar", "social", "share", "popup", "modal", "consent", "gdpr",
             "cookie", "newsletter", "subscribe", "signup", "pagination", "pager", "menu", "widget",
             "outbrain", "taboola", "trending", "popular", "most-read")
_LIKELY = ("article", "body", "content", "main", "column", "entry", "post", "story", "prose")


# Text nobody reads on the page.
_NO_TEXT = frozenset({"head", "script", "style", "noscript", "template", "svg", "iframe", "object", "canvas"})


# Shorter text (in characters other than white space) is a label, a caption or a byline, not a paragraph.
_MIN_PROSE_CHARS = 20


# An article found with the names counted must have this much prose (characters other than white space),
# else the names are not counted.
_ENOUGH_PROSE = 250


# A div with no block in it is a paragraph when it is this long: shorter, it is a headline in a list of them.
_MIN_DIV_PROSE_CHARS = 80


# How many of the best-scored candidates are weighed by their link density.
_TOP = 8


# The share of a page's prose its core must hold for the page to read as one article (a story, a post)
# rather than a page of sections (a manual's index, a reference page), where a list of links is content.
_ONE_ARTICLE = 0.6


HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})


@dataclass(frozen=True)
class Prose:
    """Where a page's prose is: the element holding it (None: the page has none), the ids of it and its
    ancestors, whether it holds most of the page's prose (the page is one article), and each element's
    characters of text and of link text (by id)."""

    core: Any | None = None
    chain: frozenset[int] = frozenset()
    one_article: bool = False
    chars: dict[int, int] = field(default_factory=dict)
    link_chars: dict[int, int] = field(default_factory=dict)
    under: dict[int, int] = field(default_factory=dict)  # the voting paragraphs' characters under each element
    everything: int = 0

    def share(self, node: Any) -> float:
        """The share of the page's prose under ``node``."""
        return self.under.get(id(node), 0) / self.everything if self.everything else 0.0

    def holds(self, node: Any) -> bool:
        """Whether ``node`` is the prose's element or one of its ancestors."""
        return id(node) in self.chain

    def link_density(self, node: Any) -> float:
        """The share of an element's text that is link text (0 for an element with no text)."""
        chars = self.chars.get(id(node), 0)
        return min(self.link_chars.get(id(node), 0) / chars, 1.0) if chars else 0.0

    def beside(self, node: Any) -> bool:
        """Whether ``node`` is a block of links beside the article's prose, a child of one of the prose's
        ancestors ("Most popular", "Related stories", a share bar, a tag cloud): three links or more,
        over half its text. Only on a page that is one article (on a page of sections, a manual's
        index, a list of links beside the densest section is the page's content), and not a
        ``<section>`` of the document (a heading and its links: "Prior releases") or a block inside one."""
        up = node.parent
        return (self.one_article and up is not None and up is not self.core and id(up) in self.chain
                and id(node) not in self.chain and not (up.name == "section" and opens_with_heading(up))
                and not (node.name == "section" and opens_with_heading(node)) and self.link_density(node) > 0.5
                and len(node.find_all("a", limit=3)) == 3)


NO_PROSE = Prose()


def is_hidden(node: Any) -> bool:
    """Whether an element is hidden (``hidden``, ``aria-hidden``, ``display: none``); a tab's panel is
    hidden only until its tab is chosen (sphinx-tabs, Docusaurus), so its text is the page's."""
    attrs = node.attrs
    if not attrs or attrs.get("role") == "tabpanel":
        return False
    if "hidden" in attrs or attrs.get("aria-hidden") == "true":
        return True
    style = attrs.get("style")
    return isinstance(style, str) and "display:none" in style.replace(" ", "").lower()


def find_prose(root: Any) -> Prose:
    """Where the prose under ``root`` is: the element that holds it, by a readability-style score.

    Each paragraph (``p``, ``pre``, ``td``, ``blockquote``, ``dd``, a ``div`` with no block in it, or
    text written straight into a ``div`` beside blocks) of at least 20 characters scores 1, plus one per
    comma, plus one per 100 characters (at most 3); its parent gets the score, its grandparent half. Paragraphs in navigation, headers,
    footers, forms and hidden elements do not vote. The best candidates' scores are scaled by the share
    of their text that is not link text, so a list of headlines or a menu loses to a story. One pass
    over the tree (no recursion, nothing quadratic in its depth).
    """
    from bs4.element import CData, NavigableString, Tag

    # Pre-order: each element before its children, with whether it can vote (not in navigation, a
    # footer, a form or a hidden element), and whether it can when names count too (not in comments...).
    order: list[tuple[Any, bool, bool]] = []
    own: dict[int, list[int]] = {}  # id -> [characters, commas, link characters] of its own text
    blocks: set[int] = set()  # the elements with a block-level child
    stack: list[tuple[Any, bool, bool, bool]] = [(root, True, True, False)]
    while stack:
        node, votes, strict, in_link = stack.pop()
        order.append((node, votes, strict))
        acc = own[id(node)] = [0, 0, 0]
        for child in node.contents:
            if isinstance(child, Tag):
                if child.name in _BLOCK_TAGS:
                    blocks.add(id(node))
                if child.name in _NO_TEXT:
                    continue
                can = votes and child.name not in _NOT_PROSE and child.get("role") not in _NOT_PROSE_ROLES \
                    and not is_hidden(child)
                stack.append((child, can, can and strict and not _unlikely(child), in_link or child.name == "a"))
            elif type(child) is NavigableString or isinstance(child, CData):
                text = str(child)
                n = len(text) - sum(text.count(c) for c in " \n\t\r\xa0")
                acc[0] += n
                acc[1] += text.count(",") + text.count("，")
                if in_link:
                    acc[2] += n
    total = {key: list(value) for key, value in own.items()}
    for node, _, _ in reversed(order):  # children's text into their parents'
        up = node.parent
        if node is not root and up is not None and id(up) in total:
            mine, theirs = total[id(node)], total[id(up)]
            for i in range(3):
                theirs[i] += mine[i]
    chars = {key: value[0] for key, value in total.items()}
    link_chars = {key: value[2] for key, value in total.items()}
    density = Prose(chars=chars, link_chars=link_chars).link_density
    # Scored with the names first; where that leaves under 250 characters of prose (the article sits in
    # a layout named "theiaStickySidebar"), without them (readability retries the same way).
    for strict in (True, False):
        scores: dict[int, float] = {}
        nodes: dict[int, Any] = {}
        voted: dict[int, int] = {}
        for node, votes, named in order:
            if not (named if strict else votes):
                continue
            if node.name in _PROSE_TAGS:
                n, commas, _ = total[id(node)]
            elif node.name in _LOOSE_TEXT_TAGS and id(node) in blocks:
                n, commas, _ = own[id(node)]
            elif node.name in _LOOSE_TEXT_TAGS:  # a paragraph in a div, if long enough not to be a headline
                n, commas, _ = total[id(node)]
                if n < _MIN_DIV_PROSE_CHARS:
                    continue
            else:
                continue
            if n < _MIN_PROSE_CHARS:
                continue
            voted[id(node)] = n
            score = 1 + commas + min(n // 100, 3)
            # an <article> is a unit: a list of teasers, each an article, does not add up into their list
            parent = node.parent
            grand = parent.parent if parent is not None and parent.name != "article" else None
            for share, up in ((1.0, parent), (0.5, grand)):
                if isinstance(up, Tag) and up.name not in ("html", "[document]"):
                    scores[id(up)] = scores.get(id(up), 0.0) + score * share
                    nodes[id(up)] = up
        if not scores:
            continue
        best = sorted(scores, key=scores.__getitem__, reverse=True)[:_TOP]
        core = nodes[max(best, key=lambda key: scores[key] * (1 - density(nodes[key])))]
        under = dict(voted)  # the voting paragraphs' characters under each element
        for node, _, _ in reversed(order):
            up = node.parent
            if node is not root and up is not None and id(node) in under:
                under[id(up)] = under.get(id(up), 0) + under[id(node)]
        if strict and under.get(id(core), 0) < _ENOUGH_PROSE:
            continue
        everything = under.get(id(root), 0)
        share = under.get(id(core), 0) / everything if everything else 0.0
        chain = frozenset(id(n) for n in [core, *core.parents])
        return Prose(core, chain, share >= _ONE_ARTICLE, chars, link_chars, under, everything)
    return Prose(chars=chars, link_chars=link_chars)


def story_article(prose: Prose, articles: list[Any]) -> Any | None:
    """Of a page's several ``<article>`` elements, the page's story: the outermost that holds the prose
    and no article that does not (a list of teasers, each an article, is not a story, nor is a teaser
    in it), and half the prose at least that is not in the other articles (a news page's story beside
    fifty teasers, each an article with its summary). None: no such one."""
    if prose.core is None:
        return None
    tops = [a for a in articles if a.find_parent("article") is None]
    holding = [a for a in tops if prose.holds(a) and all(prose.holds(b) for b in a.find_all("article"))]
    if not holding:
        return None
    story = holding[0]
    mine = prose.under.get(id(story), 0)
    free = prose.everything - sum(prose.under.get(id(a), 0) for a in tops)  # prose in no article
    return story if mine and mine / (mine + free) >= 0.5 else None


def _unlikely(node: Any) -> bool:
    """Whether an element's class or id names what is not the article (comments, a consent popup)."""
    value = node.attrs.get("class") or ""
    names = (value if isinstance(value, str) else " ".join(value)) + " " + str(node.attrs.get("id") or "")
    if not names.strip():
        return False
    names = names.lower()
    return any(word in names for word in _UNLIKELY) and not any(word in names for word in _LIKELY)


def opens_with_heading(node: Any) -> bool:
    """Whether an element's first child element, past empty anchors (``<span id="x"></span>``), is a
    heading: a section of the document ("Prior releases")."""
    for child in node.children:
        if child.name is None:  # text
            if str(child).strip():
                return False
            continue
        if child.name in HEADINGS:
            return True
        if child.name in ("span", "a") and not child.get_text(strip=True):
            continue
        return False
    return False
