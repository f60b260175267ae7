"""Chunkers. Every chunk is a slice of the document text (``text[char_start:char_end]``), keeps its
heading path, and stays within the embedding model's maximum sequence length.

Strategies: ``markdown`` (headings, never splits a fenced code block or a table unless it alone is
over the model limit), ``sentence`` (window with a token budget and overlap), ``paragraph``, ``page``
(PDF pages), ``semantic`` (splits where neighbouring sentences stop being similar), ``whole``.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from itertools import pairwise
from typing import Any, Protocol

import numpy as np

from graphrag.errors import InvalidInput
from graphrag.ingest.textprep import (
    CODE_SPAN,
    HEADING_LINE,
    SETEXT_UNDERLINE,
    BlockState,
    fence_open,
    heading_text,
    table_starts,
)
from graphrag.models import Chunk, Document

CHUNKERS = ("markdown", "sentence", "paragraph", "page", "semantic", "whole")
DEFAULT_FOR_KIND = {"markdown": "markdown", "text": "sentence", "pdf": "page", "record": "whole"}


def default_strategy(doc: Document) -> str:
    """The chunker a document gets when none is asked for: its kind's, but page by page for any
    document with pages (a PDF, or a plain text its loader found paged)."""
    return "page" if doc.pages else DEFAULT_FOR_KIND.get(doc.kind, "sentence")

# Hard breaks the sentencizer does not see: a blank line, and a new list item.
# A block holds two sentences only if an end mark inside it is followed by a space (or is a CJK full stop).
_MAYBE_END = re.compile(r"[.!?\u2026][\"')\]\u2019\u201d]*\s|[\u3002\uff01\uff1f]")
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n+|\n(?=[ \t]*(?:[-*+]|\d+[.)])\s)")
# Abbreviations that spaCy's English tokenizer does not keep whole ("al." "Fig." "No." become word + "."),
# so the sentencizer would end a sentence after them. Titles, months, "e.g.", "U.S." are kept whole already.
_ABBREVIATIONS = frozenset({
    "al", "approx", "cf", "dept", "eq", "eqs", "fig", "figs", "ibid", "incl", "ref", "refs", "resp", "viz",
    "vs", "dr", "mr", "mrs", "ms", "prof", "sr", "jr", "st", "mt",
})
# ... and those that are one only before a number ("No. 5", "p. 12"; but "the answer is no. Then").
_NUMBER_ABBREVIATIONS = frozenset({
    "no", "nos", "p", "pp", "ch", "chap", "col", "cols", "vol", "vols", "sec", "secs", "sect", "para", "art",
    "tab", "ex", "op",
})


class TokenCounter(Protocol):
    """Counts tokens with the embedding model's tokenizer."""

    max_tokens: int

    def count(self, texts: Sequence[str]) -> list[int]: ...

    def offsets(self, text: str) -> list[tuple[int, int]]: ...


def splits_at_white_space(tokenizer: object) -> bool:
    """Whether a fast tokenizer cuts text into words at white space (and punctuation) before anything
    else, as WordPiece models do (BERT's pre-tokenizer): then two texts joined by white space have
    exactly the tokens of each, so counts of pieces add up. Byte-level BPE and SentencePiece
    tokenizers mark a word's leading space in its first token, so theirs need not."""
    try:
        from tokenizers import pre_tokenizers
    except ImportError:
        return False
    backend = getattr(tokenizer, "backend_tokenizer", None)
    split = getattr(backend, "pre_tokenizer", None)
    return isinstance(split, pre_tokenizers.BertPreTokenizer | pre_tokenizers.WhitespaceSplit
                      | pre_tokenizers.Whitespace)


class HFTokenCounter:
    """A :class:`TokenCounter` over a Hugging Face fast tokenizer (the embedding model's own)."""

    def __init__(self, tokenizer: object, max_seq_length: int) -> None:
        self._tok = tokenizer
        self.max_tokens = max_seq_length - 2  # room for [CLS] and [SEP]
        self.additive = splits_at_white_space(tokenizer)
        count_specials = getattr(tokenizer, "num_special_tokens_to_add", None)
        self.special_tokens = int(count_specials(pair=False)) if callable(count_specials) else 2

    def count(self, texts: Sequence[str]) -> list[int]:
        if not texts:
            return []
        ids = self._tok(list(texts), add_special_tokens=False)["input_ids"]  # type: ignore[operator]
        return [len(x) for x in ids]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        enc = self._tok(text, add_special_tokens=False, return_offsets_mapping=True)  # type: ignore[operator]
        return [tuple(o) for o in enc["offset_mapping"]]


@dataclass(frozen=True)
class ChunkOptions:
    """Token budget per chunk and sentence overlap for the window strategies."""

    budget: int = 200
    overlap_tokens: int = 40


@dataclass(frozen=True)
class _Span:
    start: int
    end: int
    kind: str = "text"  # text | code | table | heading
    heading_path: tuple[str, ...] = ()


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _fence_line_start(text: str, start: int, end: int) -> int:
    """``start``, or the start of its line when the chunk opens with an indented code fence: the fence's
    indentation tells which later fence closes it (one indented deeper is shown inside the block)."""
    line_start = text.rfind("\n", 0, start) + 1
    if line_start == start or text[line_start:start].strip(" \t"):
        return start
    line_end = text.find("\n", start, end)
    return line_start if fence_open(text[start:line_end if line_end >= 0 else end]) else start


@functools.cache
def _sentencizer() -> Any:
    """spaCy's rule-based sentencizer on a blank English pipeline: a tokenizer and no model to load."""
    import spacy

    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    # The length cap guards the parser's and NER's memory; a tokenizer and the sentencizer need no cap
    # (a text file's one unbroken block may pass 1,000,000 characters).
    nlp.max_length = 1 << 40
    return nlp


@functools.cache
def _sentence_enders() -> frozenset[int]:
    """The string hashes of the tokens that end a sentence for spaCy's sentencizer ("." "!" "?" ...;
    all of them punctuation)."""
    nlp = _sentencizer()
    return frozenset(nlp.vocab.strings.add(c) for c in nlp.get_pipe("sentencizer").punct_chars)


def _sentencizer_starts(doc: Any) -> list[int]:
    """Token indexes where spaCy's sentencizer starts a sentence, from the token arrays (its own loop
    makes a Python object of every token): the first token, and each token that is neither
    punctuation nor an ender with an ender between it and the previous such token."""
    from spacy.attrs import IS_PUNCT, ORTH

    if len(doc) == 0:
        return []
    attrs = doc.to_array([ORTH, IS_PUNCT]).reshape(len(doc), 2)
    punct = np.flatnonzero(attrs[:, 1])
    enders = _sentence_enders()
    ender = np.zeros(len(doc), dtype=bool)
    ender[[i for i, h in zip(punct.tolist(), attrs[punct, 0].tolist(), strict=True) if h in enders]] = True
    word = np.flatnonzero(attrs[:, 1] == 0)  # enders are punctuation
    before = np.concatenate(([0], np.cumsum(ender)))  # enders among tokens [0, i)
    since = before[word] - before[np.concatenate(([0], word[:-1] + 1))] if len(word) else word
    starts = word[since > 0].tolist()
    return starts if starts and starts[0] == 0 else [0, *starts]


def _sentence_starts(doc: Any, text: str) -> list[int]:
    """Character offsets (in ``text``, the text ``doc`` was made of) where a sentence starts, after the
    abbreviation rule; never inside an inline code span (`` `httpx.PoolLimits()` ``). (``doc.text``
    would build it again from a Python object per token: a third of chunking's CPU.)"""
    starts: list[int] = []
    code = [(m.start(), m.end()) for m in CODE_SPAN.finditer(text)] if "`" in text else []
    code_starts = [a for a, _ in code]
    for i in _sentencizer_starts(doc):
        first = doc[i]
        k = bisect.bisect_left(code_starts, first.idx) - 1  # the last span starting before it
        if k >= 0 and first.idx < code[k][1]:
            continue
        if starts and i >= 2 and doc[i - 1].text == ".":
            word, nxt = doc[i - 2], first.text
            glued = word.idx + len(word.text) == doc[i - 1].idx  # "Fig." not "end ."
            # "et al. showed", "Fig. 3", "No. 5": the sentencizer ended a sentence at an abbreviation.
            if glued and (word.lower_ in _ABBREVIATIONS or nxt[:1].islower()
                          or (word.lower_ in _NUMBER_ABBREVIATIONS and nxt[:1].isdigit())):
                continue
        starts.append(first.idx)
    return starts


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence boundaries inside ``text[start:end]`` as absolute, whitespace-trimmed spans.

    Blank lines and list items always break; inside a block, spaCy's rule-based sentencizer decides,
    with its tokenizer's exceptions ("Dr.", "U.S.", "e.g.") and a short abbreviation list on top.
    """
    end = len(text) if end is None else end
    blocks: list[tuple[int, int]] = []
    pos = start
    for match in _BLOCK_BREAK.finditer(text, start, end):
        s, e = _trim(text, pos, match.start())
        if e > s:
            blocks.append((s, e))
        pos = match.end()
    s, e = _trim(text, pos, end)
    if e > s:
        blocks.append((s, e))
    spans: list[tuple[int, int]] = []
    multi = [_MAYBE_END.search(text, s, e - 1) is not None for s, e in blocks]
    docs = iter(_sentencizer().tokenizer.pipe(text[s:e] for (s, e), m in zip(blocks, multi, strict=True) if m))
    for (s, e), m in zip(blocks, multi, strict=True):
        if not m:
            spans.append((s, e))
            continue
        starts = _sentence_starts(next(docs), text[s:e]) + [e - s]
        for a, b in pairwise(starts):
            a, b = _trim(text, s + a, s + b)
            if b > a:
                spans.append((a, b))
    return spans


class Chunker:
    """Turns a :class:`Document` into :class:`Chunk` objects with one strategy."""

    def __init__(self, counter: TokenCounter, options: ChunkOptions | None = None,
                 embed: Callable[[list[str]], np.ndarray] | None = None) -> None:
        self.counter = counter
        self.options = options or ChunkOptions()
        self.embed = embed
        self.budget = min(self.options.budget, counter.max_tokens)

    # -- entry point ----------------------------------------------------------------------------
    def chunk(self, doc: Document, strategy: str | None = None) -> list[Chunk]:
        strategy = strategy or default_strategy(doc)
        if strategy not in CHUNKERS:
            raise InvalidInput(f"unknown chunker {strategy!r}; choose one of {', '.join(CHUNKERS)}")
        if strategy == "semantic" and self.embed is None:
            raise InvalidInput("the semantic chunker needs an embedding model")
        text = doc.text
        # Token counts of windows summed from their sentences' counts (see _window): not counted again.
        known: dict[tuple[int, int], int] = {}
        if strategy == "markdown":
            groups = self._markdown(text)
        elif strategy == "sentence":
            groups = self._window(text, sentence_spans(text), known=known)
        elif strategy == "paragraph":
            groups = self._paragraphs(text)
        elif strategy == "page":
            groups = self._pages(text, doc.pages or ((0, len(text)),), doc.headings, known)
        elif strategy == "semantic":
            groups = self._semantic(text)
        else:
            s, e = _trim(text, 0, len(text))
            known[s, e] = self.counter.count([text[s:e]])[0]
            fits = known[s, e] <= self.counter.max_tokens
            groups = [(s, e, (), {})] if fits else self._window(text, sentence_spans(text), known=known)
        chunks = self._finish(text, groups, known)
        title = doc.title.strip()
        if title:
            # A chunk outside any heading sits under the document's title: that context makes it
            # findable (headings weigh most in the keyword index) and readable on its own.
            chunks = [c if c.heading_path else replace(c, heading_path=(title,)) for c in chunks]
        return chunks

    # -- strategies -----------------------------------------------------------------------------
    def _pages(self, text: str, pages: tuple[tuple[int, int], ...], headings: tuple[tuple[int, int, str], ...],
               known: dict[tuple[int, int], int]) -> list[tuple[int, int, tuple[str, ...], dict]]:
        """Sentence windows page by page; where the document marks its headings (a PDF's bookmarks),
        cut at each heading too, and each window under its heading path (sections run across pages)."""
        groups: list[tuple[int, int, tuple[str, ...], dict]] = []
        marks = sorted(h for h in headings if 0 <= h[0] < len(text))
        stack: list[tuple[int, str]] = []
        k = 0
        for number, (s, e) in enumerate(pages, start=1):
            # the page's sections: where each starts, and the heading opening it (none for the page's top
            # when a section runs on from the page before)
            sections: list[tuple[int, tuple[int, int, str] | None]] = [(s, None)]
            while k < len(marks) and marks[k][0] < e:
                if marks[k][0] > s:
                    sections.append((marks[k][0], marks[k]))
                else:
                    sections[0] = (s, marks[k])
                k += 1
            for (a, heading), b in zip(sections, [*(start for start, _ in sections[1:]), e], strict=True):
                if heading is not None:
                    _, level, title = heading
                    stack = [(lv, t) for lv, t in stack if lv < level] + [(level, title)]
                path = tuple(t for _, t in stack)
                groups += [(x, y, path, {"page": number}) for x, y, _, _ in
                           self._window(text, sentence_spans(text, a, b), known=known)]
        return groups

    def _finish(self, text: str, groups: list[tuple[int, int, tuple[str, ...], dict]],
                known: dict[tuple[int, int], int] | None = None) -> list[Chunk]:
        pieces: list[tuple[int, int, tuple[str, ...], dict]] = []
        for s, e, path, meta in groups:
            s, e = _trim(text, s, e)
            if e > s:
                pieces.append((_fence_line_start(text, s, e), e, path, meta))
        known = known or {}
        unknown = [(s, e) for s, e, _, _ in pieces if (s, e) not in known]
        known.update(zip(unknown, self.counter.count([text[s:e] for s, e in unknown]), strict=True))
        counts = [known[s, e] for s, e, _, _ in pieces]
        # Exact counts can exceed the estimate (tokens merge differently at joins): split those.
        final: list[tuple[int, int, tuple[str, ...], dict, int]] = []
        code_pieces: set[int] = set()  # pieces of a code block over the model limit: all code
        for (s, e, path, meta), n in zip(pieces, counts, strict=True):
            if n <= self.counter.max_tokens:
                final.append((s, e, path, meta, n))
            else:
                line_end = text.find("\n", s, e)
                in_code = fence_open(text[s:line_end if line_end >= 0 else e]) is not None
                for a, b in self._hard_split(text, s, e):
                    a = _fence_line_start(text, a, b)
                    if in_code:
                        code_pieces.add(len(final))
                    final.append((a, b, path, meta, self.counter.count([text[a:b]])[0]))
        return [
            Chunk(index=i, text=text[s:e], char_start=s, char_end=e, heading_path=path, token_count=n,
                  has_code=i in code_pieces or "```" in text[s:e] or "~~~" in text[s:e], metadata=meta)
            for i, (s, e, path, meta, n) in enumerate(final)
        ]

    def _hard_split(self, text: str, start: int, end: int) -> list[tuple[int, int]]:
        """Split a span that alone exceeds the model limit at token boundaries (lines when possible)."""
        offsets = self.counter.offsets(text[start:end])
        limit = self.counter.max_tokens - 8
        out = []
        i = 0
        while i < len(offsets):
            j = min(i + limit, len(offsets))
            a = start + offsets[i][0]
            b = start + offsets[j - 1][1]
            if j < len(offsets):
                newline = text.rfind("\n", a, b)
                if newline > a + (b - a) // 2:  # prefer a line break in the second half
                    b = newline
                    while j > i + 1 and start + offsets[j - 1][0] >= b:
                        j -= 1
            out.append(_trim(text, a, b))
            i = j
        return [(a, b) for a, b in out if b > a]

    def _window(self, text: str, spans: list[tuple[int, int]], path: tuple[str, ...] = (),
                known: dict[tuple[int, int], int] | None = None) -> list[tuple[int, int, tuple[str, ...], dict]]:
        """Pack sentences up to the budget; each chunk repeats the last sentences of the previous one.

        ``known``: where the tokenizer's counts add up (``additive``), the token count of each window
        whose sentences are apart by white space is put here, the sum of theirs."""
        if not spans:
            return []
        counts = self.counter.count([text[s:e] for s, e in spans])
        # spaced[k]: white space lies between sentence k and k + 1 (spans are trimmed, so any gap is).
        spaced = [a[1] < b[0] for a, b in pairwise(spans)] if getattr(self.counter, "additive", False) else None
        groups: list[tuple[int, int, tuple[str, ...], dict]] = []
        i = 0
        while i < len(spans):
            total, j = 0, i
            while j < len(spans) and (j == i or total + counts[j] <= self.budget):
                total += counts[j]
                j += 1
            groups.append((spans[i][0], spans[j - 1][1], path, {}))
            if known is not None and spaced is not None and all(spaced[i:j - 1]):
                known[spans[i][0], spans[j - 1][1]] = total
            if j >= len(spans):
                break
            # Step back over whole sentences worth at most overlap_tokens, always moving forward.
            back, k = 0, j
            while k - 1 > i and back + counts[k - 1] <= self.options.overlap_tokens:
                back += counts[k - 1]
                k -= 1
            i = k
        return groups

    def _paragraphs(self, text: str, path: tuple[str, ...] = ()) -> list[tuple[int, int, tuple[str, ...], dict]]:
        paras = []
        pos = 0
        for match in re.finditer(r"\n[ \t]*\n", text):
            paras.append(_trim(text, pos, match.start()))
            pos = match.end()
        paras.append(_trim(text, pos, len(text)))
        spans = [_Span(s, e, "text", path) for s, e in paras if e > s]
        return self._pack(text, spans)

    def _pack(self, text: str, spans: list[_Span]) -> list[tuple[int, int, tuple[str, ...], dict]]:
        """Pack consecutive blocks of one heading path up to the budget; oversize blocks stand alone.

        Headings with nothing under them yet (a chapter heading straight above a section heading) go
        with what follows instead of making chunks of their own."""
        counts = self.counter.count([text[s.start:s.end] for s in spans])
        groups: list[tuple[int, int, tuple[str, ...], dict]] = []
        cur: list[_Span] = []
        cur_tokens = 0

        def flush() -> None:
            nonlocal cur, cur_tokens
            if cur:
                groups.append((cur[0].start, cur[-1].end, cur[-1].heading_path, {}))
            cur, cur_tokens = [], 0

        for span, n in zip(spans, counts, strict=True):
            only_headings = all(c.kind == "heading" for c in cur)
            if cur and (cur_tokens + n > self.budget or (
                    span.heading_path != cur[-1].heading_path and not (only_headings and n <= self.budget))):
                flush()
            if n > self.budget:
                if span.kind == "text":
                    groups.extend(self._window(text, sentence_spans(text, span.start, span.end), span.heading_path))
                else:  # code or table: whole, unless over the model limit (then _finish splits by lines)
                    groups.append((span.start, span.end, span.heading_path, {}))
                continue
            cur.append(span)
            cur_tokens += n
        flush()
        return groups

    def _markdown(self, text: str) -> list[tuple[int, int, tuple[str, ...], dict]]:
        spans: list[_Span] = []
        path: list[tuple[int, str]] = []
        lines = text.splitlines(keepends=True)
        pos = 0
        i = 0
        block_start: int | None = None
        block_end = 0

        def current_path() -> tuple[str, ...]:
            return tuple(title for _, title in path)

        def close_text() -> None:
            nonlocal block_start
            if block_start is not None:
                spans.append(_Span(block_start, block_end, "text", current_path()))
                block_start = None

        state = BlockState()
        while i < len(lines):
            line = lines[i]
            stripped = line.strip()
            kind = state.step(line)
            if kind == "comment":
                # Inside an HTML comment: text, never a heading or a fence ("# TODO" notes).
                if block_start is None:
                    block_start = pos
                block_end = pos + len(line)
                pos += len(line)
                i += 1
                continue
            if kind == "fence":
                close_text()
                start = pos
                pos += len(line)
                i += 1
                while i < len(lines) and state.fence is not None:  # to its closing fence, or the end
                    state.step(lines[i])
                    pos += len(lines[i])
                    i += 1
                spans.append(_Span(start, pos, "code", current_path()))
                continue
            heading = HEADING_LINE.match(line)
            if heading is None and block_start is None and stripped and i + 1 < len(lines) \
                    and not stripped.startswith(("|", "-", "*", "+", ">")) \
                    and (underline := SETEXT_UNDERLINE.match(lines[i + 1])) is not None:
                # A setext heading: one line of text over "===" (level 1) or "---" (level 2).
                level = 1 if underline.group(1)[0] == "=" else 2
                while path and path[-1][0] >= level:
                    path.pop()
                path.append((level, heading_text(stripped)))
                end = pos + len(line) + len(lines[i + 1])
                spans.append(_Span(pos, end, "heading", current_path()))
                pos, i = end, i + 2
                continue
            if heading:
                close_text()
                level, title = len(heading.group(1)), heading_text(heading.group(2))
                while path and path[-1][0] >= level:
                    path.pop()
                path.append((level, title))
                spans.append(_Span(pos, pos + len(line), "heading", current_path()))
                pos += len(line)
                i += 1
                continue
            piped = stripped.startswith("|")
            if piped or (i + 1 < len(lines) and table_starts(line, lines[i + 1])):
                # A table, with leading pipes or without (GFM: "a | b" over "--- | ---", then its rows).
                close_text()
                start = pos
                pos += len(line) + (0 if piped else len(lines[i + 1]))
                i += 1 if piped else 2
                while i < len(lines) and (lines[i].strip().startswith("|") if piped
                                          else lines[i].strip() and "|" in lines[i]):
                    pos += len(lines[i])
                    i += 1
                spans.append(_Span(start, pos, "table", current_path()))
                continue
            if not stripped:
                close_text()
            else:
                if block_start is None:
                    block_start = pos
                block_end = pos + len(line)
            pos += len(line)
            i += 1
        close_text()
        return self._pack(text, spans)

    def _semantic(self, text: str) -> list[tuple[int, int, tuple[str, ...], dict]]:
        spans = sentence_spans(text)
        if len(spans) <= 2:
            return self._window(text, spans)
        assert self.embed is not None
        vectors = self.embed([text[s:e] for s, e in spans])
        sims = np.sum(vectors[:-1] * vectors[1:], axis=1)
        # A break where similarity to the previous sentence is in the lowest quarter of this document.
        threshold = float(np.percentile(sims, 25))
        counts = self.counter.count([text[s:e] for s, e in spans])
        groups: list[tuple[int, int, tuple[str, ...], dict]] = []
        start, total = 0, counts[0]
        for k in range(1, len(spans)):
            if sims[k - 1] < threshold or total + counts[k] > self.budget:
                groups.append((spans[start][0], spans[k - 1][1], (), {}))
                start, total = k, 0
            total += counts[k]
        groups.append((spans[start][0], spans[-1][1], (), {}))
        return groups
