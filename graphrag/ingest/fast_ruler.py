"""A faster stand-in for a spaCy pipeline's ``attribute_ruler``, with the same result.

The packaged English pipelines map every token's fine-grained tag to its part of speech and
morphology with an attribute ruler: some 180 token patterns matched by spaCy's general ``Matcher``
and then applied one ``Span`` at a time. Nearly all of them test only a token's tag and/or its lower
case form, so here those are looked up in a table (cached per tag and, where a pattern names the
word, per word) and only the few others (dependency labels, white space, several tokens, regular
expressions) go through a ``Matcher``. The attributes are set as the ruler sets them: for each token,
every pattern that matches it in the ruler's order, later patterns winning.
"""

from __future__ import annotations

from typing import Any

_SIMPLE_KEYS = frozenset({"TAG", "LOWER"})


def _values(spec: Any) -> frozenset[str] | None:
    """The values a simple token-pattern condition accepts: a string or ``{"IN": [...]}``."""
    if isinstance(spec, str):
        return frozenset({spec})
    if isinstance(spec, dict) and set(spec) == {"IN"} and all(isinstance(v, str) for v in spec["IN"]):
        return frozenset(spec["IN"])
    return None


class FastAttributeRuler:
    """Applies an ``AttributeRuler``'s patterns to a parsed ``Doc`` (see the module docstring)."""

    def __init__(self, ruler: Any) -> None:
        from spacy.matcher import Matcher
        from spacy.tokens._retokenize import set_token_attrs

        self._set = set_token_attrs
        strings = ruler.vocab.strings
        # (order, tags or None, lowers or None, attrs) for single-token tag/word patterns.
        self._simple: list[tuple[int, frozenset[int] | None, frozenset[int] | None, dict]] = []
        self._matcher = Matcher(ruler.vocab)
        self._others = 0
        for order, pattern in enumerate(ruler.patterns):
            attrs = ruler.attrs[order]
            rest = []
            for token_patterns in pattern["patterns"]:
                simple = len(token_patterns) == 1 and pattern["index"] in (0, -1)
                tags = lowers = None
                if simple:
                    spec = token_patterns[0]
                    simple = bool(spec) and set(spec) <= _SIMPLE_KEYS
                    if simple and "TAG" in spec:
                        tags = _values(spec["TAG"])
                        simple = tags is not None
                    if simple and "LOWER" in spec:
                        lowers = _values(spec["LOWER"])
                        simple = lowers is not None
                if simple:
                    self._simple.append((order,
                                         frozenset(strings.add(t) for t in tags) if tags is not None else None,
                                         frozenset(strings.add(w) for w in lowers) if lowers is not None else None,
                                         attrs))
                else:
                    rest.append(token_patterns)
            if rest:
                self._matcher.add(str(order), rest)
                self._others += 1
        self._indices = list(ruler.indices)
        self._attrs = list(ruler.attrs)
        # Words some pattern names: only for those does the word itself take part in the cache key.
        self._named_words = frozenset(w for _, _, lowers, _ in self._simple if lowers for w in lowers)
        self._cache: dict[tuple[int, int], tuple[list[tuple[int, dict]], dict]] = {}

    def _rules(self, tag: int, lower: int) -> tuple[list[tuple[int, dict]], dict]:
        """The simple patterns that match a token in order, and their attributes merged (setting
        them one after the other leaves the last value of each attribute)."""
        key = (tag, lower if lower in self._named_words else 0)
        found = self._cache.get(key)
        if found is None:
            rules = [(order, attrs) for order, tags, lowers, attrs in self._simple
                     if (tags is None or tag in tags) and (lowers is None or lower in lowers)]
            merged: dict = {}
            for _, attrs in rules:
                merged.update(attrs)
            found = self._cache[key] = (rules, merged)
        return found

    def __call__(self, doc: Any) -> Any:
        """Set the ruler's attributes on ``doc`` (in place) and return it."""
        extra: dict[int, list[tuple[int, dict]]] = {}
        if self._others:
            strings = doc.vocab.strings
            for match_id, start, end in self._matcher(doc, allow_missing=True):
                order = int(strings[match_id])
                index = self._indices[order]
                target = (start + index) if index >= 0 else (end + index)
                if not start <= target < end:
                    raise ValueError(f"attribute ruler pattern {order}: index {index} is outside its match")
                extra.setdefault(target, []).append((order, self._attrs[order]))
        set_attrs = self._set
        for token in doc:
            rules, merged = self._rules(token.tag, token.lower)
            more = extra.get(token.i)
            if more:
                for _, attrs in sorted(rules + more, key=lambda r: r[0]):
                    set_attrs(token, attrs)
            elif merged:
                set_attrs(token, merged)
        return doc
