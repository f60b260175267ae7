"""Document headers read as metadata (:mod:`graphrag.ingest.headers`): pure logic."""

from __future__ import annotations

from graphrag.ingest.headers import header_fields, header_title, markdown_meta, rst_file_fields

PEP = """PEP: 9999
Title: Frobnicated Imports
Author: Jane Doe <jane@example.org>,
        Ada Roe <ada@example.org>
Sponsor:
Status: Draft
Python-Version: 3.15

Abstract
========

This PEP proposes frobnicated imports.
"""


def test_a_pep_header_is_metadata_and_names_the_document() -> None:
    meta, text = header_fields(PEP)
    assert meta == {"pep": "9999", "title": "Frobnicated Imports", "status": "Draft", "python-version": "3.15",
                    "author": "Jane Doe <jane@example.org>, Ada Roe <ada@example.org>"}  # unfolded; empty dropped
    assert len(text) == len(PEP) and text.count("\n") == PEP.count("\n")  # blanked in place
    assert text.lstrip().startswith("Abstract") and "Jane" not in text
    assert header_title(meta) == "PEP 9999 – Frobnicated Imports" and "title" not in meta


def test_markdown_meta_lines_and_pandoc_title_blocks() -> None:
    meta, text = markdown_meta("Title: Release notes\nAuthors: Jane Doe\n         Ada Roe\nDate: 2024-05-01\n\n# 1.0\n\nShipped.")
    assert meta == {"title": "Release notes", "authors": ["Jane Doe", "Ada Roe"], "date": "2024-05-01"}
    assert text.lstrip().startswith("# 1.0")
    assert header_title(meta) == "Release notes"
    meta, text = markdown_meta("% Field guide\n% Jane Doe; Ada Roe\n  Bo Lee\n% May 2024\n\nText.")
    assert meta == {"title": "Field guide", "author": ["Jane Doe", "Ada Roe", "Bo Lee"], "date": "May 2024"}
    assert text.strip() == "Text."


def test_prose_that_opens_with_a_label_is_not_a_header() -> None:
    for text in ("Note: this package is deprecated.\nWarning: use the other one.\n\nText.",  # no known key
                 "Status: draft\n\nText.",  # one field that is not a title
                 "Title: A\nAuthor: B\nThen a line of prose.\n\nText.",  # not ended by a blank line
                 "# Heading\n\nTitle: not at the top\nAuthor: x\n"):
        assert markdown_meta(text) == ({}, text)
        assert header_fields(text) == ({}, text)


def test_a_leading_rst_field_list_is_metadata_less_sphinx_build_fields() -> None:
    text = "\n:orphan:\n:tocdepth: 2\n:Author: Jane Doe\n   and Ada Roe\n:Date: 2024-05-01\n\nTitle\n=====\n\nBody.\n"
    meta, rest = rst_file_fields(text)
    assert meta == {"author": "Jane Doe and Ada Roe", "date": "2024-05-01"}
    assert rest.lstrip().startswith("Title\n=====") and len(rest) == len(text)
    assert rst_file_fields("Title\n=====\n\n:Author: after the title\n") == ({}, "Title\n=====\n\n:Author: after the title\n")


def test_long_runs_of_blanks_in_a_header_line_are_read_in_one_pass() -> None:
    """A value with a run of spaces inside it is read, not tried at every split; a line too long for a
    header field (a crafted or minified file) is not one."""
    text = "Title: a" + " " * 4_000 + "b\nAuthor: x\n\nBody."
    meta, _ = markdown_meta(text)
    assert meta["author"] == "x" and meta["title"].startswith("a ") and meta["title"].endswith("b")
    assert rst_file_fields(":Author: a" + " " * 4_000 + "b\n\nBody.")[0]["author"].endswith("b")
    huge = "Title: a" + " " * 200_000 + "b\nAuthor: x\n\nBody."
    assert markdown_meta(huge) == ({}, huge)
