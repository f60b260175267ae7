"""A hit's whole document, put back together from its chunks within a token budget. Pure functions.

Chunks carry their character offsets in the document, so the overlap between neighbours (the
chunker repeats a few sentences) is cut from the later one; a gap between them (white space the
chunker dropped) becomes a paragraph break. Tokens are the counts the collection's embedding
tokenizer gave each chunk at ingestion; a chunk whose overlap is cut counts its kept share of them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Piece:
    """One stored chunk of a document."""

    index: int
    content: str
    char_start: int
    char_end: int
    tokens: int


@dataclass(frozen=True)
class Window:
    """Pieces ``lo``..``hi`` (positions in the list) stitched into ``text``."""

    text: str
    tokens: int
    lo: int
    hi: int
    char_start: int
    char_end: int
    whole: bool


def _kept_tokens(piece: Piece, kept_chars: int) -> int:
    if kept_chars >= len(piece.content) or not piece.content:
        return piece.tokens
    return math.ceil(piece.tokens * kept_chars / len(piece.content))


def _cut(piece: Piece, reached: int) -> int:
    """Characters at the start of ``piece`` that the text up to offset ``reached`` already holds."""
    return max(0, min(reached - piece.char_start, len(piece.content)))


def stitch(pieces: Sequence[Piece]) -> tuple[str, int]:
    """The text of consecutive pieces with overlaps removed, and its token count."""
    parts: list[str] = []
    tokens = 0
    reached: int | None = None
    for piece in pieces:
        cut = _cut(piece, reached) if reached is not None else 0
        kept = piece.content[cut:]
        if reached is not None and piece.char_start > reached:
            parts.append(" " if piece.char_start - reached == 1 else "\n\n")
        parts.append(kept)
        tokens += _kept_tokens(piece, len(kept))
        reached = piece.char_end if reached is None else max(reached, piece.char_end)
    return "".join(parts), tokens


def window(pieces: Sequence[Piece], hit: int, budget: int, *, complete: bool = True) -> Window | None:
    """The whole document when it fits ``budget`` tokens, else the longest run of pieces around
    piece ``hit`` (growing forward then backward, one piece at a time) that fits; ``None`` when
    not even the hit's own piece fits. ``complete``: ``pieces`` are all of the document's chunks
    (otherwise the result is never ``whole``)."""
    if not pieces or not 0 <= hit < len(pieces):
        raise ValueError("hit must index one of the pieces")
    # cost(lo, hi) = first piece whole + the others with their overlap with the previous one cut
    prefix = [0, pieces[0].tokens]
    reached = pieces[0].char_end
    for piece in pieces[1:]:
        prefix.append(prefix[-1] + _kept_tokens(piece, len(piece.content) - _cut(piece, reached)))
        reached = max(reached, piece.char_end)

    def cost(lo: int, hi: int) -> int:
        return pieces[lo].tokens + prefix[hi + 1] - prefix[lo + 1]

    lo = hi = hit
    if cost(0, len(pieces) - 1) <= budget:
        lo, hi = 0, len(pieces) - 1
    elif cost(hit, hit) > budget:
        return None
    else:
        forward = backward = True
        while forward or backward:
            forward = forward and hi + 1 < len(pieces) and cost(lo, hi + 1) <= budget
            if forward:
                hi += 1
            backward = backward and lo > 0 and cost(lo - 1, hi) <= budget
            if backward:
                lo -= 1
    text, tokens = stitch(pieces[lo:hi + 1])
    return Window(text=text, tokens=tokens, lo=lo, hi=hi, char_start=pieces[lo].char_start,
                  char_end=max(p.char_end for p in pieces[lo:hi + 1]),
                  whole=complete and lo == 0 and hi == len(pieces) - 1)
