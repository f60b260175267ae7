"""Numbered specifications as entities (:mod:`graphrag.ingest.spec_ids`): pure logic."""

from __future__ import annotations

from graphrag.ingest.spec_ids import find_spec_ids, is_series_name, title_spec


def test_identifiers_are_found_in_one_spelling() -> None:
    text = ("See PEP 484, PEP-0008 and RFC2616, then RFC 9110; ISO 8601-1, ISO/IEC 9899, IEEE 754 and IEEE 802.11; "
            "ECMA-262 and CVE-2014-0160 (CWE-79). Not xPEP 3, PEP 12a or the PEPs.")
    found = [(name, text[a:b]) for a, b, name in find_spec_ids(text)]
    assert found == [("PEP 484", "PEP 484"), ("PEP 8", "PEP-0008"), ("RFC 2616", "RFC2616"), ("RFC 9110", "RFC 9110"),
                     ("ISO 8601-1", "ISO 8601-1"), ("ISO/IEC 9899", "ISO/IEC 9899"), ("IEEE 754", "IEEE 754"),
                     ("IEEE 802.11", "IEEE 802.11"), ("ECMA-262", "ECMA-262"), ("CVE-2014-0160", "CVE-2014-0160"),
                     ("CWE-79", "CWE-79")]


def test_a_title_that_opens_with_an_identifier_names_it_and_its_subject() -> None:
    assert title_spec("PEP 8 – Style Guide for Python Code") == ("PEP 8", "Style Guide for Python Code")
    assert title_spec("RFC 9110: HTTP Semantics") == ("RFC 9110", "HTTP Semantics")
    assert title_spec("PEP 8") is None and title_spec("Using PEP 8 in CI") is None


def test_a_series_name_alone_names_no_document() -> None:
    assert is_series_name("pep") and is_series_name("rfcs")
    assert not is_series_name("iso") and not is_series_name("ieee")  # the bodies that publish standards
