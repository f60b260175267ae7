"""The citation check: does each sentence of an answer stand on the hit it cites?

Pure functions, no I/O. An answer cites its context hits as ``[n]`` (1-based; ``[1][3]`` and
``[1, 3]`` cite several). Each sentence is checked lexically: the share of its content words (stop
words left out, light suffix stripping, a shared 5-letter prefix counts) found in the text of the
hits it cites must reach a threshold, and every number it states must appear there. This is a
cheap guard against a sentence that cites the wrong passage or says more than it; it is not an
entailment check (a sentence that rearranges the passage's words into a false claim passes).

A sentence is flagged with one of these reasons:

- ``not_supported``: below the threshold, or a number missing from the cited text;
- ``unknown_citation``: it cites a number that is no hit (and no valid one that supports it);
- ``uncited``: it states something (has content words) but cites nothing.

The answer that says the sources do not answer (:data:`NO_ANSWER`) and lead-ins ending in ``:``
are not claims and are never flagged.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

NO_ANSWER = "The sources do not answer this question."
"""What the model is told to answer when the hits do not hold the answer (never flagged)."""

DEFAULT_THRESHOLD = 0.5

Reason = Literal["not_supported", "unknown_citation", "uncited"]

CITE_RE = re.compile(r"\[\s*(\d{1,4}(?:\s*[,;]\s*\d{1,4})*)\s*\]")
_WORD_RE = re.compile(r"\d+(?:[.,]\d+)*|[^\W_]+(?:['’.\-][^\W_]+)*")
_NUMBER_RE = re.compile(r"^\d+(?:[.,]\d+)*$")
# A sentence ends at . ! ? (and closing quotes or brackets after them) followed by space, or at a line break.
_BOUNDARY_RE = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+|\n\s*")
_LEADING_CITES_RE = re.compile(r"(?:\s*\[\s*\d{1,4}(?:\s*[,;]\s*\d{1,4})*\s*\])+[.,;]?")
_BULLET_RE = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+")
_ABBREVIATIONS = frozenset({
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "inc", "ltd", "co", "corp", "vs", "etc", "e.g", "i.e",
    "no", "fig", "approx", "dept", "univ", "gen", "col", "lt", "mt", "jan", "feb", "mar", "apr", "jun", "jul",
    "aug", "sep", "sept", "oct", "nov", "dec",
})
STOP_WORDS = frozenset("""
a about above according after again against all also although am an and another any are as at be because been
before being below between both but by can could did do does doing done down during each either else even ever
every few for from further had has have having he her here hers herself him himself his how however i if in into
is it its itself just less like many may me might more most much must my myself neither no nor not now of off on
once one only or other others otherwise our ours ourselves out over own per rather same several shall she should
since so some such than that the their theirs them themselves then there therefore these they this those though
through thus to too under until up upon us very via was we were what whatever when where whereas whether which
while who whom whose why will with within without would yet you your yours yourself yourselves
based source sources passage passages context according text document documents states stated say says said
mentioned mentions mention describes described
""".split())


@dataclass(frozen=True)
class Sentence:
    """One sentence of an answer: its text, where it lies in the answer, and the numbers it cites."""

    text: str
    start: int
    end: int
    cited: tuple[int, ...]


@dataclass(frozen=True)
class SentenceCheck:
    """The verdict on one sentence. ``support`` is the share of its content words found in the cited
    hits' text; ``missing`` lists those that were not."""

    sentence: Sentence
    supported: bool
    support: float
    reason: Reason | None = None
    unknown: tuple[int, ...] = ()
    missing: tuple[str, ...] = ()


@dataclass
class CheckReport:
    """The check of a whole answer: per-sentence verdicts and the (possibly shortened) answer."""

    answer: str
    checks: list[SentenceCheck] = field(default_factory=list)
    dropped: bool = False

    @property
    def unsupported(self) -> list[SentenceCheck]:
        return [c for c in self.checks if not c.supported]


def cited_numbers(text: str) -> list[int]:
    """Every citation number in ``text``, in order, repeats included."""
    return [int(n) for m in CITE_RE.finditer(text) for n in re.split(r"\s*[,;]\s*", m.group(1).strip())]


def _ends_sentence(text: str, dot: int) -> bool:
    """Whether the ``.`` at ``dot`` ends a sentence (not an abbreviation, an initial or a decimal point)."""
    if text[dot] != ".":
        return True
    line = text[:dot].rsplit("\n", 1)[-1].strip()
    if line.isdigit() and len(line) <= 3:
        return False  # "1." numbering a list item
    word = re.search(r"([^\W\d_]+(?:\.[^\W\d_]+)*)$", text[:dot])
    if word is None:
        return True
    token = word.group(1).lower()
    # Abbreviations, initials ("J.") and dotted forms ("U.S.") do not end a sentence.
    return not (token in _ABBREVIATIONS or "." in token or (len(token) == 1 and text[word.start()].isupper()))


def _breaks(text: str, match: re.Match[str]) -> bool:
    """Whether a line break ends a sentence: a blank line, a list item or heading after it, a heading
    before it, or sentence punctuation (or a citation, or a colon) before it."""
    if match.group(0).count("\n") > 1:
        return True
    after = text[match.end():]
    if _BULLET_RE.match(after) or after.startswith("#"):
        return True
    before = text[:match.start()]
    line = before.rsplit("\n", 1)[-1]
    return line.lstrip().startswith("#") or before.rstrip()[-1:] in (".", "!", "?", ":", "]", "*", "\"", "”", ")")


def split_sentences(text: str) -> list[Sentence]:
    """The sentences of ``text`` with their character spans. Citations written after a sentence's
    full stop (``... in Oslo. [1]``) belong to that sentence."""
    pieces: list[tuple[int, int]] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(text):
        end = match.start()
        if text[end:end + 1] == "\n" and not _breaks(text, match):
            continue  # a hard-wrapped line goes on
        if match.group(0).strip() == "" and "\n" not in match.group(0) and end > 0:
            # Only a real sentence end splits; "Inc. was" or "J. R. R. Tolkien" do not.
            stop = end - 1
            while stop > 0 and text[stop] in "\"'”’)]":
                stop -= 1
            if not _ends_sentence(text, stop):
                continue
        if text[start:end].strip():
            pieces.append((start, end))
        start = match.end()
    if text[start:].strip():
        pieces.append((start, len(text)))
    # Move citations that open a piece to the end of the piece before it.
    merged: list[tuple[int, int]] = []
    for begin, end in pieces:
        lead = _LEADING_CITES_RE.match(text, begin)
        if lead and merged and lead.end() > begin:
            prev_begin, _ = merged[-1]
            merged[-1] = (prev_begin, lead.end())
            begin = lead.end()
            while begin < end and text[begin].isspace():
                begin += 1
        if text[begin:end].strip():
            merged.append((begin, end))
    out = []
    for begin, end in merged:
        while end > begin and text[end - 1].isspace():
            end -= 1
        while begin < end and text[begin].isspace():
            begin += 1
        chunk = text[begin:end]
        out.append(Sentence(text=chunk, start=begin, end=end, cited=tuple(dict.fromkeys(cited_numbers(chunk)))))
    return out


def stem(word: str) -> str:
    """A light English suffix strip, the same for answer and hit words (``founded`` -> ``found``,
    ``companies`` -> ``company``, ``studied`` -> ``study``, ``boxes`` -> ``box``)."""
    w = word.lower().replace("’", "'")
    if w.endswith("'s"):
        w = w[:-2]
    if len(w) >= 5 and w.endswith(("ies", "ied")):
        return w[:-3] + "y"
    if w.endswith(("sses", "xes", "zes", "ches", "shes")):
        return w[:-2]
    if w.endswith(("ss", "us", "is")):
        return w
    if len(w) >= 4 and w.endswith("s"):
        return w[:-1]
    if len(w) >= 6 and w.endswith("ing"):
        return w[:-3]
    if len(w) >= 5 and w.endswith("ed"):
        return w[:-2]
    return w


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry its content, stemmed, in order, without duplicates:
    stop words, citation markers and one-letter words left out; numbers kept."""
    bare = CITE_RE.sub(" ", text)
    words: dict[str, None] = {}
    for match in _WORD_RE.finditer(bare):
        token = match.group(0).rstrip(".")
        lower = token.lower()
        if lower in STOP_WORDS or (len(lower) < 2 and not lower.isdigit()):
            continue
        words[stem(lower) if not _NUMBER_RE.match(lower) else lower.replace(",", "")] = None
    return list(words)


class Evidence:
    """The words of one or more hit texts, ready for membership tests (exact stem, or a shared
    5-letter prefix for words of 5 letters or more: ``founder`` matches ``founded``)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.words = set()
        for text in texts:
            self.words.update(content_words(text))
        self.prefixes = {w[:5] for w in self.words if len(w) >= 5 and not _NUMBER_RE.match(w)}

    def has(self, word: str) -> bool:
        if word in self.words:
            return True
        return len(word) >= 5 and not _NUMBER_RE.match(word) and word[:5] in self.prefixes


def support(sentence: str, evidence: Evidence) -> tuple[float, tuple[str, ...]]:
    """The share of ``sentence``'s content words found in ``evidence`` (1.0 when it has none), and
    the words that were not found."""
    words = content_words(sentence)
    if not words:
        return 1.0, ()
    missing = tuple(w for w in words if not evidence.has(w))
    return 1.0 - len(missing) / len(words), missing


def _is_claim(sentence: Sentence) -> bool:
    text = _BULLET_RE.sub("", sentence.text).strip()
    # Headings and lead-ins ("**Answer:**", "## Summary") introduce claims; they make none.
    if not text or text.startswith("#") or text.strip("*_ ").endswith(":"):
        return False
    if text.strip(" .").lower() == NO_ANSWER.strip(" .").lower():
        return False
    return bool(content_words(text))


def check_sentence(sentence: Sentence, hit_texts: Sequence[str], threshold: float = DEFAULT_THRESHOLD) -> SentenceCheck:
    """Whether one sentence is supported by the hits it cites (``hit_texts[n - 1]`` is hit ``[n]``)."""
    valid = tuple(n for n in sentence.cited if 1 <= n <= len(hit_texts))
    unknown = tuple(n for n in sentence.cited if not 1 <= n <= len(hit_texts))
    if not sentence.cited:
        if _is_claim(sentence):
            return SentenceCheck(sentence, False, 0.0, "uncited")
        return SentenceCheck(sentence, True, 1.0)
    if not valid:
        return SentenceCheck(sentence, False, 0.0, "unknown_citation", unknown=unknown)
    share, missing = support(_BULLET_RE.sub("", sentence.text), Evidence([hit_texts[n - 1] for n in valid]))
    numbers_missing = any(_NUMBER_RE.match(w) for w in missing)
    if share >= threshold and not numbers_missing:
        # A valid citation that supports the sentence: a stray unknown number beside it is still reported.
        if unknown:
            return SentenceCheck(sentence, False, share, "unknown_citation", unknown=unknown, missing=missing)
        return SentenceCheck(sentence, True, share, missing=missing)
    return SentenceCheck(sentence, False, share, "not_supported", unknown=unknown, missing=missing)


def check_answer(answer: str, hit_texts: Sequence[str], *, threshold: float = DEFAULT_THRESHOLD,
                 drop: bool = False) -> CheckReport:
    """Check every sentence of ``answer`` against the hits it cites. With ``drop``, flagged sentences
    are cut out of the answer (all of them flagged: the answer becomes :data:`NO_ANSWER`)."""
    checks = [check_sentence(s, hit_texts, threshold) for s in split_sentences(answer)]
    report = CheckReport(answer=answer, checks=checks)
    if drop and report.unsupported:
        kept = [c.sentence for c in checks if c.supported]
        report.answer = _rejoin(answer, kept) if any(_is_claim(s) for s in kept) else NO_ANSWER
        report.dropped = True
    return report


def _rejoin(answer: str, kept: Sequence[Sentence]) -> str:
    """The kept sentences, with the separators (space or line break) that followed each in the answer."""
    parts = []
    for i, s in enumerate(kept):
        parts.append(s.text)
        if i + 1 < len(kept):
            parts.append("\n" if "\n" in answer[s.end:kept[i + 1].start] else " ")
    return "".join(parts)


def resolved_citations(answer: str, hit_count: int) -> list[int]:
    """The hit numbers ``answer`` cites that are hits, each once, in the order of first citation."""
    return list(dict.fromkeys(n for n in cited_numbers(answer) if 1 <= n <= hit_count))
