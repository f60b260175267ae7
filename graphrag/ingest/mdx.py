"""MDX (Markdown with JSX, as Docusaurus, Nextra and Storybook sites write their docs) read as Markdown.

What is not Markdown is blanked out with spaces, line breaks kept, so a chunk's offsets still index
the file: ESM ``import``/``export`` blocks, JSX comments ``{/* ... */}`` and JSX component tags
(``<Tabs>``, ``<TabItem value="pip" label="pip">``, ``<Figure src={img} />``, fragments ``<>``).
A component's children are Markdown and stay. HTML tags (lower-case names) are left to the prose
view like those of any Markdown file; code blocks and inline code are never touched.
"""

from __future__ import annotations

import re

from graphrag.ingest.textprep import fence_closes, fence_open

# An attribute value in braces may hold one level of nested braces and ">" ("onClick={() => go()}").
_BRACES = r"\{(?:[^{}]|\{[^{}]*\})*\}"
_JSX_TAG = re.compile(rf"</?(?:[A-Z][\w.]*|[a-z]+(?:\.[\w]+)+)?(?:\s(?:\"[^\"]*\"|'[^']*'|{_BRACES}|[^<>\"'{{}}])*)?/?>")
_JSX_COMMENT = re.compile(r"\{/\*.*?\*/\}", re.S)
# Inline code first, so a `<Tabs>` shown in a sentence is kept; then comments, then tags.
_CODE = r"(?P<ticks>`+)(?!`).+?(?<!`)(?P=ticks)(?!`)"
_MARKUP = re.compile(rf"(?P<code>{_CODE})|(?P<comment>{_JSX_COMMENT.pattern})|(?P<tag>{_JSX_TAG.pattern})", re.S)
_ESM = re.compile(r"^(?:import|export)\b(?![ \t]*[-:=])")


def _blank(text: str) -> str:
    return re.sub(r"[^\n]", " ", text)


def _drop_markup(m: re.Match[str]) -> str:
    if m.group("code") is not None:
        return m.group(0)
    tag = m.group(0)
    # "<>" and "</>" are fragments; a lone "<" or "< b" in prose ("a < b > c") is no tag.
    if m.group("tag") is not None and not re.match(r"</?(?:[A-Za-z]|>|/?>)", tag):
        return tag
    return _blank(tag)


def _prose(segment: str) -> str:
    """One stretch of the file outside code blocks, without its ESM blocks and JSX."""
    lines = segment.split("\n")
    in_esm = False
    for i, line in enumerate(lines):
        if in_esm or _ESM.match(line):
            # An ESM block runs to the next blank line (MDX 2's rule): a multi-line import included.
            in_esm = bool(line.strip())
            lines[i] = _blank(line)
    return _MARKUP.sub(_drop_markup, "\n".join(lines))


def mdx_to_markdown(text: str) -> str:
    """``text`` with its MDX-only syntax blanked out (the same length and lines, see the module)."""
    out: list[str] = []
    prose: list[str] = []
    fence = None
    for line in text.split("\n"):
        if fence is not None:
            out.append(line)
            if fence_closes(line, fence):
                fence = None
            continue
        opened = fence_open(line)
        if opened is None:
            prose.append(line)
            continue
        if prose:
            out.append(_prose("\n".join(prose)))
            prose = []
        out.append(line)
        fence = opened
    if prose:
        out.append(_prose("\n".join(prose)))
    return "\n".join(out)
