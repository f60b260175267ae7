"""A PDF's bookmarks made headings of its text (pure logic of :func:`mark_outline_headings`)."""

from __future__ import annotations

from graphrag.ingest.pdf_reader import mark_outline_headings


def test_bookmarks_find_their_lines_with_or_without_numbers_and_across_two_lines() -> None:
    pages = ["Contents\n2.1 ASN.1 syntax ........ 4", "2 ASN.1 structure handling\n2.1 ASN.1 syntax\nThe syntax.",
             "A long section title that\nwraps onto a second line\nText.\nNowhere in the text"]
    outline = [(0, "2 ASN.1 structure handling", 1), (1, "ASN.1 syntax", 1),  # a bookmark without its number
               (1, "A long section title that wraps onto a second line", 1),  # on the next page
               (1, "Missing section", 2)]
    marked, marks = mark_outline_headings(pages, outline)
    assert marked[0] == pages[0]  # a table of contents is not where a bookmark points
    assert marked[1] == "# 2 ASN.1 structure handling\n## 2.1 ASN.1 syntax\nThe syntax."
    assert marked[2].startswith("## A long section title that wraps onto a second line\nText.")
    assert marks == [[], [(0, 1, "2 ASN.1 structure handling"), (1, 2, "2.1 ASN.1 syntax")],
                     [(0, 2, "A long section title that wraps onto a second line")]]
    assert mark_outline_headings(pages, []) == (pages, [[], [], []])


def test_bookmarks_match_lines_numbered_in_another_style() -> None:
    pages = ["II. BASICS OF MACHINE LEARNING\nText.\nA. Google DeepDream\nMore.\nAppendix A Copying Information"]
    outline = [(0, "II Basics of Machine Learning", 0), (1, "III-A Google DeepDream", 0), (0, "A Copying", 0)]
    marked, marks = mark_outline_headings(pages, outline)
    assert marks == [[(0, 1, "II. BASICS OF MACHINE LEARNING"), (2, 2, "A. Google DeepDream")]]
    assert marked[0].endswith("Appendix A Copying Information")  # other words: not this bookmark's line
