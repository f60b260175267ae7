"""A faster stand-in for a spaCy pipeline's ``attribute_ruler``, with the same result.

The packaged English pipelines map every token's fine-grained tag to its part of speech and
morphology with an attribute ruler: some 180 token patterns matched by spaCy's general ``Matcher``
and then applied one ``Span`` at a time. Nearly all of them are one token tested on its tag, lower
case form, dependency label and whether it is white space, so here those are looked up in a table
(cached per combination of those values; the word takes part in the key only where a pattern names
it, as -1 otherwise, which no pattern names). The few others (several tokens, regular expressions)
go through a ``Matcher``, and only for a text where one of them can match at all: a text none of
whose words (or labels) fits any such pattern's first token is not searched. The attributes are set as the ruler sets them: for each
token, every pattern that matches it in the ruler's order, later patterns winning.
"""

from __future__ import annotations

import re
from typing import Any

# Token attributes a table pattern may test, by pattern key (IS_SPACE takes a boolean).
_TABLE_KEYS = ("TAG", "LOWER", "DEP", "IS_SPACE")
# A table condition: (attribute index in the key, accepted values or None, rejected values or None).
_Condition = tuple[int, frozenset[int] | None, frozenset[int] | None]


def _values(spec: Any, strings: Any) -> tuple[frozenset[int] | None, frozenset[int] | None] | None:
    """(accepted, rejected) hashes of a string condition (a string, ``{"IN": [...]}`` or
    ``{"NOT_IN": [...]}``), or None for anything else (regular expressions, comparisons)."""
    if isinstance(spec, str):
        return frozenset({strings.add(spec)}), None
    if isinstance(spec, dict) and len(spec) == 1:
        (op, values), = spec.items()
        if op in ("IN", "NOT_IN") and isinstance(values, list) and all(isinstance(v, str) for v in values):
            found = frozenset(strings.add(v) for v in values)
            return (found, None) if op == "IN" else (None, found)
    return None


def _table_conditions(token_patterns: list[dict], index: int, strings: Any) -> tuple[_Condition, ...] | None:
    """The conditions of a one-token pattern the table can apply, or None if it needs the Matcher."""
    if len(token_patterns) != 1 or index not in (0, -1):
        return None
    spec = token_patterns[0]
    if not spec or not set(spec) <= set(_TABLE_KEYS):
        return None
    conditions: list[_Condition] = []
    for key, value in spec.items():
        slot = _TABLE_KEYS.index(key)
        if key == "IS_SPACE":
            if not isinstance(value, bool):
                return None
            conditions.append((slot, frozenset({int(value)}), None))
            continue
        accepted = _values(value, strings)
        if accepted is None:
            return None
        conditions.append((slot, *accepted))
    return tuple(conditions)


class _Anchor:
    """Whether a text can hold a match of one Matcher pattern: its first token's word (a string, a
    set or a regular expression on LOWER) or label (DEP or TAG) must occur in the text."""

    def __init__(self, first: dict, strings: Any) -> None:
        self.always = "OP" in first  # an optional first token anchors nothing
        self.lowers: frozenset[int] | None = None
        self.regex: re.Pattern[str] | None = None
        self.labels: tuple[int, frozenset[int]] | None = None  # (slot in a row, label hashes)
        if self.always:
            return
        lower = first.get("LOWER")
        if isinstance(lower, dict) and set(lower) == {"REGEX"} and isinstance(lower["REGEX"], str):
            self.regex = re.compile(lower["REGEX"])
            return
        if lower is not None and (found := _values(lower, strings)) is not None and found[0] is not None:
            self.lowers = found[0]
            return
        for key in ("DEP", "TAG"):
            if key in first and (found := _values(first[key], strings)) is not None and found[0] is not None:
                self.labels = (_TABLE_KEYS.index(key), found[0])
                return
        self.always = True


class FastAttributeRuler:
    """Applies an ``AttributeRuler``'s patterns to a parsed ``Doc`` (see the module docstring)."""

    def __init__(self, ruler: Any) -> None:
        from spacy.attrs import DEP, IS_SPACE, LOWER, TAG
        from spacy.matcher import Matcher
        from spacy.tokens._retokenize import set_token_attrs

        self._set = set_token_attrs
        self._strings = ruler.vocab.strings
        # (order, conditions, attrs) for the one-token patterns the table applies.
        self._simple: list[tuple[int, tuple[_Condition, ...], dict]] = []
        self._matcher = Matcher(ruler.vocab)
        self._anchors: list[_Anchor] = []
        for order, pattern in enumerate(ruler.patterns):
            attrs = ruler.attrs[order]
            rest = []
            for token_patterns in pattern["patterns"]:
                conditions = _table_conditions(token_patterns, pattern["index"], self._strings)
                if conditions is not None:
                    self._simple.append((order, conditions, attrs))
                else:
                    rest.append(token_patterns)
                    self._anchors.append(_Anchor(token_patterns[0] if token_patterns else {"OP": "?"},
                                                 self._strings))
            if rest:
                self._matcher.add(str(order), rest)
        self._indices = list(ruler.indices)
        self._attrs = list(ruler.attrs)
        # Words some table pattern names: only for those does the word itself take part in the key.
        self._named_words = frozenset(w for _, conditions, _ in self._simple for slot, yes, no in conditions
                                      if slot == 1 for w in (yes or frozenset()) | (no or frozenset()))
        self._dep_tested = any(slot == 2 for _, conditions, _ in self._simple for slot, _, _ in conditions)
        self._cache: dict[tuple[int, int, int, int], tuple[list[tuple[int, dict]], dict]] = {}
        self._regex_hits: dict[int, bool] = {}  # word hash -> does some anchor's regular expression match
        self._has_regex_anchor = any(a.regex is not None for a in self._anchors)
        self._array_attrs = [TAG, LOWER, DEP, IS_SPACE]

    def _rules(self, key: tuple[int, int, int, int]) -> tuple[list[tuple[int, dict]], dict]:
        """The table patterns that match a token with these (tag, word, label, space) values in
        order, and their attributes merged (setting them one after the other leaves the last value
        of each attribute)."""
        found = self._cache.get(key)
        if found is None:
            rules = [(order, attrs) for order, conditions, attrs in self._simple
                     if all((yes is None or key[slot] in yes) and (no is None or key[slot] not in no)
                            for slot, yes, no in conditions)]
            merged: dict = {}
            for _, attrs in rules:
                merged.update(attrs)
            found = self._cache[key] = (rules, merged)
        return found

    def _may_match(self, rows: list[list[int]]) -> bool:
        """Whether some Matcher pattern's first token fits a token of the text (rows: its tokens'
        tag, word, label and space values)."""
        if not self._anchors:
            return False
        lowers = {row[1] for row in rows}
        for anchor in self._anchors:
            if anchor.always:
                return True
            if anchor.lowers is not None and not anchor.lowers.isdisjoint(lowers):
                return True
            if anchor.labels is not None:
                slot, labels = anchor.labels
                if any(row[slot] in labels for row in rows):
                    return True
        return self._has_regex_anchor and any(self._regex_hit(h) for h in lowers)

    def _regex_hit(self, word: int) -> bool:
        """Whether some anchor's regular expression matches the word (cached per word)."""
        hit = self._regex_hits.get(word)
        if hit is None:
            text = self._strings[word]
            hit = any(a.regex.search(text) is not None for a in self._anchors if a.regex is not None)
            if len(self._regex_hits) < 1_000_000:  # a bound for endless vocabularies
                self._regex_hits[word] = hit
        return hit

    def __call__(self, doc: Any) -> Any:
        """Set the ruler's attributes on ``doc`` (in place) and return it."""
        rows = doc.to_array(self._array_attrs).tolist() if len(doc) else []
        extra: dict[int, list[tuple[int, dict]]] = {}
        if self._may_match(rows):
            for match_id, start, end in self._matcher(doc, allow_missing=True):
                order = int(self._strings[match_id])
                index = self._indices[order]
                target = (start + index) if index >= 0 else (end + index)
                if not start <= target < end:
                    raise ValueError(f"attribute ruler pattern {order}: index {index} is outside its match")
                extra.setdefault(target, []).append((order, self._attrs[order]))
        set_attrs = self._set
        named, dep_tested = self._named_words, self._dep_tested
        for token, (tag, lower, dep, space) in zip(doc, rows, strict=True):
            rules, merged = self._rules((tag, lower if lower in named else -1, dep if dep_tested else -1, space))
            more = extra.get(token.i)
            if more:
                for _, attrs in sorted(rules + more, key=lambda r: r[0]):
                    set_attrs(token, attrs)
            elif merged:
                set_attrs(token, merged)
        return doc
