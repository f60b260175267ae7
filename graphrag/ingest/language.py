"""Whether a chunk is written in the language of the spaCy model that reads it.

A model trained on one language reads another as noise: the English model makes entities of French
function words ("un", "dans", in 70 chunks each of two French PDFs) and of German nouns, and they
become hubs of the graph. A chunk is foreign to the model when its share of the model language's
stop words is small and another language's is clearly larger (spaCy's stop-word lists for seven
European languages, no model needed), or, for a model of a Latin-script language, when most of its
letters are of another script (Chinese, Cyrillic). Short chunks, and chunks of code and identifiers
that share no language's stop words, are read as before.
"""

from __future__ import annotations

import importlib
import re
from functools import lru_cache

LANGUAGES = ("en", "fr", "de", "es", "it", "pt", "nl")
MIN_WORDS = 20
_WORD = re.compile(r"[^\W\d_]{2,}")  # one letter is an abbreviation as often as a word ("Y/Y", "o")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
_LETTER = re.compile(r"[^\W\d_]")


@lru_cache(maxsize=None)
def stop_words(language: str) -> frozenset[str]:
    """spaCy's stop words of ``language`` (empty for a language spaCy has none for)."""
    try:
        module = importlib.import_module(f"spacy.lang.{language}.stop_words")
    except ImportError:
        return frozenset()
    return frozenset(getattr(module, "STOP_WORDS", ()))


def foreign(text: str, language: str) -> bool:
    """Whether ``text`` is clearly written in another language than ``language`` (a model's
    ``nlp.lang``); False when it cannot tell."""
    if language not in LANGUAGES:
        return False
    letters = _LETTER.findall(text)
    if len(letters) >= 5 * MIN_WORDS and 2 * len(_LATIN.findall(text)) < len(letters):
        return True  # mostly another script
    words = [w.lower() for w in _WORD.findall(text)]
    if len(words) < MIN_WORDS:
        return False
    own = sum(w in stop_words(language) for w in words) / len(words)
    if own >= 0.08:
        return False
    for lang in LANGUAGES:
        found = [w for w in words if w in stop_words(lang)] if lang != language else []
        # Several different function words: a table repeating "Inc" (an Italian stop word) is no Italian.
        if len(found) >= (0.15 + 2 * own) * len(words) and len(set(found)) >= 3:
            return True
    return False
