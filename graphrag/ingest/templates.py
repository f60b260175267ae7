"""Template files read as pages: their text is template tags, not content.

A repository holds Jinja, Django, Liquid and Go templates beside its documents: Flask's
``templates/base.html``, a Sphinx theme's ``layout.html``, MkDocs' ``overrides/main.html``, a towncrier
``changelog/_template.rst``, a Jekyll page that only loops over ``site.posts``. Read as pages they give
chunks like ``{% extends "base.html" %} {% block site_nav %} {% if nav %}``: nothing a question is
answered by, and noise to keyword search, embeddings and the extractor. A text is a template when
tags (``{% ... %}``, ``{{ ... }}``, ``{# ... #}``) make up half or more of its visible characters
outside code: code blocks and inline code (examples in a page about templates) and link addresses
(``[Options]({{ '/docs/options/' | relative_url }})``, a Jekyll page's links) do not count.
"""

from __future__ import annotations

import re

from graphrag.ingest.textprep import lines_outside_fences

TEMPLATE_SHARE = 0.5
# Bounded and without "%" / braces inside, so each opening scans at most 2,000 characters (linear time).
_TAG = re.compile(r"\{%[^%]{0,2000}%\}|\{\{[^{}]{0,2000}\}\}|\{#[^#]{0,2000}#\}")
_INLINE_CODE = re.compile(r"(`+)[^`\n]{1,2000}?\1")
_LINK_TARGET = re.compile(r"\]\((?:[^()\n]|\([^()\n]{0,200}\)){0,2000}\)")  # "[Options]({{ '/docs/x' | relative_url }})"
_SPACE = re.compile(r"\s+")


def template_share(text: str) -> float:
    """The share of ``text``'s visible non-space characters outside code that template tags hold (0 with
    fewer than two tags)."""
    if "{%" not in text and "{{" not in text:
        return 0.0
    lines = text.split("\n")
    prose = _INLINE_CODE.sub(" ", "\n".join(lines[i] for i in lines_outside_fences(lines)))
    prose = _LINK_TARGET.sub("]", prose) if "](" in prose else prose
    tags = _TAG.findall(prose)
    if len(tags) < 2:
        return 0.0
    total = len(_SPACE.sub("", prose))
    return sum(len(_SPACE.sub("", tag)) for tag in tags) / total if total else 0.0


def is_template(text: str) -> bool:
    """Whether ``text`` reads as a template rather than a page (:data:`TEMPLATE_SHARE` of it is tags)."""
    return template_share(text) >= TEMPLATE_SHARE
