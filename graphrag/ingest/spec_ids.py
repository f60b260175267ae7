"""Numbered specifications, proposals and advisories as entities: "PEP 484", "RFC 9110", "ISO 8601",
"IEEE 754", "ECMA-262", "CVE-2024-3094".

A small NER model reads "PEP 484" as the organisation "PEP" (the number is no name to it), so every
reference to every proposal became one hub, and a question about PEP 484 could not reach the page
that is PEP 484. Such identifiers are written in a few fixed shapes; each is one entity, labelled
:data:`SPEC_LABEL`, under one spelling ("RFC2616" and "RFC 2616" alike; leading zeros dropped, as in
"PEP 0008", except in a CVE's number, which keeps them).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

SPEC_LABEL = "SPEC"

# Series and how each writes its identifier: "-" (CVE-2024-3094, ECMA-262) or " " (PEP 8).
_SERIES = {
    "PEP": " ", "RFC": " ", "BCP": " ", "ISO/IEC": " ", "ISO": " ", "IEEE": " ", "ECMA": "-", "CVE": "-",
    "CWE": "-", "JSR": " ", "JEP": " ", "KEP": "-", "NEP": " ", "BIP": " ", "EIP": "-",
    "ERC": "-", "XEP": "-", "SRFI": " ", "PSR": "-", "FIPS": " ", "WCAG": " ",
}
_SPEC = re.compile(
    r"(?<![\w/.-])(" + "|".join(re.escape(s) for s in sorted(_SERIES, key=len, reverse=True)) + r")"
    r"(?:[ \u00a0]?-?|-)(\d{1,7})((?:[.-]\d{1,7})*)(?![\w-]|\.\d)")
# Series whose name alone is no entity: "this PEP", "the RFC" mean the document at hand or any one of
# them (ISO, IEEE, ECMA and FIPS stay: those name the bodies that publish them).
_GENERIC = frozenset({"pep", "peps", "rfc", "rfcs", "bcp", "jsr", "jep", "jeps", "kep", "keps", "nep", "neps",
                      "bip", "bips", "eip", "eips", "erc", "xep", "xeps", "srfi", "psr", "cve", "cves", "cwe"})
# A title that opens with one: "PEP 8 – Style Guide for Python Code", "RFC 9110: HTTP Semantics".
_TITLE = re.compile(r"\s*[–—:|-]+\s*(\S.*)")


def find_spec_ids(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, name)`` of each identifier in ``text``, the name in its one spelling."""
    for m in _SPEC.finditer(text):
        yield m.start(), m.end(), _spelling(m)


def is_series_name(norm: str) -> bool:
    """Whether a normalised name is a series' name alone ("pep", "rfcs"), which names no one document."""
    return norm in _GENERIC


def title_spec(title: str) -> tuple[str, str] | None:
    """A title that opens with an identifier and names the subject after it: ``("PEP 8", "Style
    Guide for Python Code")``; None otherwise."""
    m = _SPEC.match(title.strip())
    if m is None:
        return None
    rest = _TITLE.fullmatch(title.strip()[m.end():])
    return (_spelling(m), rest.group(1).strip()) if rest else None


def _spelling(m: re.Match[str]) -> str:
    series, number, tail = m.group(1), m.group(2), m.group(3)
    if series != "CVE":
        number = number.lstrip("0") or "0"
    return f"{series}{_SERIES[series]}{number}{tail}"
