"""Whether a chunk is written in the language of the spaCy model that reads it.

A model trained on one language reads another as noise: the English model makes entities of French
function words ("un", "dans", in 70 chunks each of two French PDFs) and of German nouns, and they
become hubs of the graph. A chunk is foreign to the model when its share of the model language's
stop words is small and another language's is clearly larger (spaCy's stop-word lists for seven
European languages, no model needed), or, for a model of a Latin-script language, when most of its
letters are of another script (Chinese, Cyrillic). Short chunks, and chunks of code and identifiers
that share no language's stop words, are read as before.

Placeholder text ("Lorem ipsum dolor sit amet, ..."), which theme and component docs fill their
examples with, is foreign too, a sentence at a time: the model reads its capitalised words as names
("Donec", "Fusce", "Pellentesque").
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


# The pseudo-Latin of the classic passage and of the lorem ipsum generators' vocabulary (some are
# English words too: a sentence must be mostly of them).
_LOREM_WORDS = frozenset("""
ac accumsan ad adipiscing adipisicing aenean aliqua aliquam aliquet aliquip amet anim arcu auctor augue aute
bibendum blandit cillum commodo condimentum congue consectetur consequat convallis cras cupidatat
curabitur cursus dapibus deserunt diam dictum dictumst dignissim dolor dolore donec dui duis egestas
eget eiusmod eleifend elementum elit enim erat eros esse euismod excepteur exercitation facilisi
facilisis fames faucibus felis fermentum feugiat fringilla fusce gravida habitant habitasse hac
hendrerit iaculis imperdiet incididunt integer interdum ipsum irure justo labore laboris laborum lacinia
lacus laoreet lectus leo libero ligula lobortis lorem luctus maecenas magna malesuada massa mattis mauris
metus minim molestie mollis mollit morbi nibh nisi nisl nostrud nulla nullam nunc occaecat odio officia
orci ornare pariatur pellentesque pharetra phasellus placerat platea porta porttitor posuere potenti
praesent pretium proident proin pulvinar purus quam quis quisque reprehenderit rhoncus risus rutrum
sagittis sapien scelerisque sed sem semper senectus sint sit sodales sollicitudin sunt suscipit
suspendisse tellus tempor tempus tincidunt tortor tristique turpis ullamco ullamcorper ultrices
ultricies urna varius vehicula vel velit venenatis veniam vestibulum vitae vivamus viverra volutpat
voluptate vulputate et ut nec non vel eu ante est id ea ex mi nam neque netus finibus efficitur
cum sociis natoque penatibus magnis dis parturient montes nascetur ridiculus mus""".split())
_PLACEHOLDER_SHARE = 0.7  # of a sentence's words, English stop words aside
_PLACEHOLDER_WORDS = 3  # the fewest words (English stop words aside) a placeholder sentence has


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


def placeholder(text: str) -> bool:
    """Whether ``text`` (a sentence) is placeholder text: three or more words, English stop words
    aside, most of them lorem ipsum's ("Aenean in finibus diam.")."""
    english = stop_words("en")
    words = [w for w in (w.lower() for w in _WORD.findall(text)) if w not in english]
    return len(words) >= _PLACEHOLDER_WORDS and sum(w in _LOREM_WORDS for w in words) >= _PLACEHOLDER_SHARE * len(words)


def has_lorem(text: str) -> bool:
    """Whether ``text`` holds enough lorem ipsum words for a sentence of it to be placeholder text (as
    many as :func:`placeholder` asks of a sentence): a cheap test before reading it a sentence at a time."""
    return sum(w.lower() in _LOREM_WORDS for w in _WORD.findall(text)) >= _PLACEHOLDER_WORDS
