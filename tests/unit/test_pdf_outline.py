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


def _page(*lines: tuple[float, bool, str]) -> list[tuple[float, bool, str]]:
    """A page's runs as pypdf's visitor gives them: each line's text, then a line break."""
    return [run for size, bold, text in lines for run in ((size, bold, text), (size, False, "\n"))]


BODY = "The harbour keeps its tide tables in the office by the quay, one book per year."


def test_headings_come_from_larger_type_and_bold_numbered_lines() -> None:
    from graphrag.ingest.pdf_reader import type_outline

    pages = [
        _page((24, False, "Quellport Harbour Manual"), (11, False, "Fabio Fiorina"), (11, False, BODY),
              (11, True, "Contents"), (11, True, "1 Berths 2"), (11, True, "2 Tides iv")),
        _page((14.4, True, "1 Berths"), *[(11, False, BODY)] * 6, (12, True, "1.1 Mooring"), (11, False, BODY),
              (11, True, "1.1.1 Lines"), (11, False, BODY), (11, False, "Quellport Harbour Manual 2")),
        _page((14.4, True, "2 Tides and"), (14.4, True, "currents"), (11, False, BODY), (13, False, "char * str,"),
              (13, False, "A sentence in larger type reads as text, not as a heading of the page."),
              (11, False, "Run"), (11, True, " on"), (11, False, BODY)),
    ]
    assert type_outline(pages) == [
        (0, "1 Berths", 1), (1, "1.1 Mooring", 1), (2, "1.1.1 Lines", 1), (0, "2 Tides and currents", 2)]


def test_body_text_in_large_type_makes_no_headings() -> None:
    from graphrag.ingest.pdf_reader import type_outline

    block = [(16, False, BODY)] * 4  # paragraphs of the larger size: it is a body size, not a heading's
    pages = [_page((14, False, BODY), (16, False, "Quarterly report"), (14, False, BODY), *block),
             _page(*block, (14, False, BODY), (16, False, "Results"), (14, False, BODY))]
    assert type_outline(pages) == []
    assert type_outline([]) == [] and type_outline([[]]) == []
