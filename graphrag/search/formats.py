"""Search results as text for agents: ``text`` (a numbered citation list) and ``voice`` (short spoken
sentences: no URLs, no markup, no brackets, no code). Pure functions over a search result.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from graphrag.models import Hit, SearchResult, leg_problems

Format = Literal["json", "text", "voice"]
FORMATS: tuple[str, ...] = ("json", "text", "voice")
TEXT_CHARS = 1200  # per passage of the text format (a full document is given whole)
VOICE_HITS = 3  # a listener keeps about this many
VOICE_CHARS = 220  # per passage read out: a sentence or two

_ORDINALS = ("First", "Second", "Third", "Fourth", "Fifth", "Sixth", "Seventh", "Eighth", "Ninth", "Tenth")
_FENCE = re.compile(r"(```|~~~).*?(\1|\Z)", re.S)
_INLINE_CODE = re.compile(r"`([^`]*)`")
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_URL = re.compile(r"\b(?:[a-z][a-z0-9+.-]*://|www\.)\S+?(?=[.,;:!?)\]]*(?:\s|$))", re.I)
_HEADING = re.compile(r"^\s*#{1,6}\s.*$", re.M)
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_BRACKETED = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}|<[^<>]*>")
_LINE_MARK = re.compile(r"^\s*(?:#{1,6}\s*|>\s*|[-*+]\s+|\d+[.)]\s+)", re.M)
_SYMBOLS = re.compile(r"[*_~`#|\\^<>\[\]{}()=]+")
_PLAIN_WORDS = re.compile(r"[\w .,'-]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def check_format(value: Any) -> str:
    """``value`` when it is a known format; ValueError otherwise."""
    if value not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, got {value!r}")
    return str(value)


def trim(text: str, chars: int) -> str:
    """``text`` cut to about ``chars`` characters at a word boundary, "…" marking the cut."""
    if len(text) <= chars:
        return text
    cut = text[:chars]
    space = cut.rfind(" ")
    return (cut[:space] if space > chars * 0.8 else cut).rstrip() + " …"


def as_text(result: SearchResult, chars: int = TEXT_CHARS) -> str:
    """The readable citation list: one numbered entry per hit with its citation, title and heading
    path, then its passage (the whole text of a full-document hit); for a graph search the graph
    facts, and a failed leg is noted at the end."""
    hits = result.hits
    lines = [f'{len(hits)} result{"s" if len(hits) != 1 else ""} for "{result.query}" ({result.mode} search)']
    for n, hit in enumerate(hits, 1):
        cite = hit.citation
        parts = [p for p in [hit.title or "", *hit.heading_path] if p]
        where = " > ".join(p for i, p in enumerate(parts) if i == 0 or p != parts[i - 1])
        head = f"[{n}] {cite}" + (f" — {where}" if where and where != cite else "")
        head += f" (score {hit.score:.3f}" + (", full document" if hit.extra.get("full_document") else "")
        head += ", truncated)" if hit.extra.get("truncated") else ")"
        body = hit.content or ""
        if not hit.extra.get("full_document"):
            body = trim(" ".join(body.split()), chars)
        lines += ["", head, body]
    facts = (result.graph_context or {}).get("relations") or []
    if facts and result.mode == "graph":  # what a graph search is for; elsewhere, noise
        lines += ["", "Graph facts:"] + [f"- {r['source']} {r['type']} {r['target']}" for r in facts[:10]]
    for problem in leg_problems(result.legs):
        lines += ["", f"Note: {problem}"]
    return "\n".join(lines).strip() + "\n"


def speakable(text: str) -> str:
    """``text`` as it can be read out: code, URLs, markup, bracketed asides and symbols removed,
    white space collapsed."""
    text = _FENCE.sub(" ", text)
    text = _HEADING.sub(" ", text)  # the title says it already
    text = _INLINE_CODE.sub(lambda m: m.group(1) if _PLAIN_WORDS.fullmatch(m.group(1)) else " ", text)
    text = _IMAGE_OR_LINK.sub(lambda m: m.group(1), text)
    text = _TAG.sub(" ", text)
    text = _URL.sub(" ", text)
    # A line without its own full stop (a list item, a table row) ends a sentence all the same.
    text = re.sub(r"(?<=[\w\d])[ \t]*\n\s*\n", ". ", text)
    for _ in range(3):  # nested brackets, innermost first
        text = _BRACKETED.sub(" ", text)
    text = _LINE_MARK.sub("", text)
    text = _SYMBOLS.sub(" ", text)
    text = re.sub(r"\s+([,.;:!?])", r"\1", " ".join(text.split()))
    return text.strip(" ,;:")


def _sentences(text: str, chars: int) -> str:
    """The first sentences of ``text`` up to about ``chars`` characters, ending with a full stop."""
    out = ""
    for sentence in _SENTENCE_END.split(text):
        if len(sentence.split()) < 2:  # what is left of a sentence whose link or code was taken out
            continue
        if out and len(out) + len(sentence) + 1 > chars:
            break
        out = f"{out} {sentence}".strip()
        if len(out) >= chars:
            out = trim(out, chars).rstrip(" …")
            break
    if out and out[-1] not in ".!?":
        out += "."
    return out


def _spoken_source(hit: Hit) -> str:
    """What to call a hit's source aloud: its title, else the file name without path or extension."""
    title = speakable(hit.title or "")
    if title:
        return title
    source = _URL.sub(" ", str(hit.source or ""))
    name = re.split(r"[\\/]", source.strip())[-1]
    name = re.sub(r"\.[A-Za-z0-9]{1,5}$", "", name.split("#")[0])
    return speakable(name.replace("_", " ").replace("-", " ")) or "a document"


def as_voice(result: SearchResult, hits: int = VOICE_HITS, chars: int = VOICE_CHARS) -> str:
    """Short sentences to be read out: how many results, then the best few, each named by its
    document and told in a sentence or two. No URLs, markup, brackets or code."""
    query = speakable(result.query or "").rstrip(".?!") or "that"
    results = result.hits
    if not results:
        return f"I found nothing about {query}."
    count = len(results)
    told = results[:hits]
    lines = [f"I found {count} result{'s' if count != 1 else ''} about {query}."
             + (f" Here are the top {len(told)}." if count > len(told) else "")]
    for n, hit in enumerate(told):
        passage = _sentences(speakable(hit.extra.get("snippet") or hit.content or ""), chars)
        where = _spoken_source(hit)
        lead = _ORDINALS[n] if n < len(_ORDINALS) else "Next"
        lines.append(f"{lead}, from {where}: {passage}" if passage else f"{lead}, {where}.")
    return " ".join(lines)


def render(result: SearchResult, fmt: str) -> str:
    """The result in ``fmt`` (``text`` or ``voice``)."""
    if fmt == "text":
        return as_text(result)
    if fmt == "voice":
        return as_voice(result)
    raise ValueError(f"no text rendering for format {fmt!r}")
