"""Words hyphenated across a PDF's line breaks, joined again (pure logic)."""

from __future__ import annotations

import pytest

from graphrag.ingest.hyphenation import join_hyphenated


def test_broken_words_are_joined_and_the_next_line_loses_the_fragment() -> None:
    page = ("The library is for Distinguished Encoding Rules manip-\nulation. It is well-\nknown and state-of-the-\n"
            "art, a self-\ncontained tool for the pharma\u00ad\ncology lab.\n\nNew para-\ngraph.")
    assert join_hyphenated([page]) == [
        "The library is for Distinguished Encoding Rules manipulation.\nIt is well-known\nand state-of-the-art,\n"
        "a self-contained\ntool for the pharmacology\nlab.\n\nNew paragraph."]


def test_a_hyphen_followed_by_spaces_at_the_lines_end_still_breaks_a_word() -> None:
    """A scan's text layer (OCR) ends lines in "defi- ": the word is joined all the same (stop 53)."""
    assert join_hyphenated(["recursive functions without a defi- \nnition. It also"]) == [
        "recursive functions without a definition.\nIt also"]


def test_the_document_says_whether_the_hyphen_stays() -> None:
    # "feed-forward" is written with its hyphen elsewhere, "preprocessing" without one.
    pages = ["A feed-\nforward net needs pre-\nprocessing.", "Feed-forward nets; preprocessing first."]
    assert join_hyphenated(pages)[0] == "A feed-forward\nnet needs preprocessing."


def test_what_is_not_a_broken_word_is_left_alone() -> None:
    page = ("Pages 3-\n5 and the X-\nRay, an em dash --\nthen text, a list:\n-\nitem, and a table:\n"
            "| a | pre- |\n| fix | b |")
    assert join_hyphenated([page]) == [page]


@pytest.mark.timeout(60)  # a hang guard
@pytest.mark.parametrize("hostile", ["ab-\ncd-\n" * 50_000, "a" * 200_000 + "-\n" + "b" * 200_000, "- \n" * 100_000])
def test_hyphenation_reads_hostile_pages_in_linear_time(hostile: str) -> None:
    assert len(join_hyphenated([hostile])[0]) <= len(hostile)
