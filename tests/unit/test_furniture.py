"""Running headers, footers and page numbers of paged documents (pure logic)."""

from __future__ import annotations

import pytest

from graphrag.ingest.furniture import blank_furniture, furniture, strip_furniture, strip_leaders, text_pages


def _manual(pages: int) -> list[str]:
    """A manual's pages: a running title on the left-hand pages and the chapter's on the right, page
    numbers at the foot from page 1, and body text that repeats no line."""
    out = []
    for p in range(pages):
        header = "Zorblax Operator Manual" if p % 2 else f"Chapter {1 + p // 6}: Pumps and valves"
        words = " ".join(["pump", "valve", "seal", "gauge", "hose", "clamp"][(p + k) % 6] for k in range(3))
        out.append(f"{header}\nBody text about the {words}.\nThe {words} again, and a number 7.\n\n- {p + 1} -")
    return out


def test_running_headers_and_page_numbers_are_found_and_body_lines_kept() -> None:
    pages = _manual(12)
    kept = strip_furniture(pages)
    assert all(not k.startswith(("Zorblax", "Chapter")) and "- " not in k for k in kept), kept
    assert kept[3] == "Body text about the gauge hose clamp.\nThe gauge hose clamp again, and a number 7."


def test_chapter_headers_with_the_page_number_go_with_the_numbering() -> None:
    # texinfo's layout: "Chapter 2: Parsing 5" at the top of each page of a two-page chapter; a chapter's
    # first page shows its number alone and then its heading, which stays.
    pages = ["i\nTable of Contents\n1 Introduction . . . 1"]
    for n, head in enumerate(["1\n1 Introduction", "2\n2 Parsing", "Chapter 2: Parsing 3", "4\n3 Utilities",
                              "Chapter 3: Utilities 5", "Chapter 3: Utilities 6"], start=1):
        pages.append(f"{head}\nText of the {'first second third fourth fifth sixth'.split()[n - 1]} page.")
    kept = strip_furniture(pages)
    assert kept[1:] == ["1 Introduction\nText of the first page.", "2 Parsing\nText of the second page.",
                        "Text of the third page.", "3 Utilities\nText of the fourth page.",
                        "Text of the fifth page.", "Text of the sixth page."]


def test_short_documents_and_content_that_repeats_without_counting_pages_are_kept() -> None:
    assert furniture(["Title\nText.\n1", "Title\nText.\n2"]) == [set(), set()]  # two pages: nothing to learn
    # The same value at the foot of every page, a table row, and numbers that do not count pages.
    pages = [f"Step {s}\nRun pump {s}.\n42\n| a | b |" for s in (3, 1, 2, 5)]
    assert furniture(pages) == [set(), set(), set(), set()]


def test_rfc_text_is_cut_into_pages_at_its_footers_and_blanked_in_place() -> None:
    body = [f"   Section {s} of the text says something of its own (see page 12).\n" for s in (3, 5, 8, 9)]
    text = ""
    for p, b in enumerate(body, start=1):
        if p > 1:
            text += "\nRFC 9999               Zorblax Transfer Protocol            June 2026\n\n"
        text += b + f"\n\nDoe & Roe                    Standards Track                    [Page {p}]\n"
    spans = text_pages(text)
    assert len(spans) == 4 and all(f"Section {n} of" in text[a:b] for n, (a, b) in zip((3, 5, 8, 9), spans, strict=True))
    blanked = blank_furniture(text, spans)
    assert len(blanked) == len(text) and blanked.count("\n") == text.count("\n")
    assert "Standards Track" not in blanked and "RFC 9999" not in blanked
    assert all(b.strip() in blanked for b in body)


def test_form_feeds_cut_pages_and_a_text_without_pages_has_none() -> None:
    assert text_pages("one\fTwo\fthree") == [(0, 3), (4, 7), (8, 13)]
    assert text_pages("Page 1 of the notes. Page 2 follows.\nNo footers here.\n") == []


def test_a_table_of_contents_loses_its_dot_leaders_and_a_price_list_keeps_its_values() -> None:
    toc = ("Table of Contents\n1 Introduction . . . . . . . . . 1\n2 ASN.1 structure handling . . . . 2\n"
           "   2.1 Parsing.......................3\nAppendix A ....................... 12\n")
    assert strip_leaders(toc) == "Table of Contents\n1 Introduction\n2 ASN.1 structure handling\n   2.1 Parsing\nAppendix A\n"
    blanked = strip_leaders(toc, blank=True)
    assert len(blanked) == len(toc) and blanked.split("\n")[1].rstrip() == "1 Introduction"
    prices = "Pump ........ 1200\nValve ....... 300\nSeal ........ 45\n"
    assert strip_leaders(prices) == prices
    assert strip_leaders("Wait.... 5 minutes, then\nretry ..... 2\n") == "Wait.... 5 minutes, then\nretry ..... 2\n"


@pytest.mark.timeout(60)  # a hang guard: one pattern over the whole text backtracked on long dot runs
@pytest.mark.parametrize("hostile", [". " * 100_000, "." * 200_000, "a\f" * 50_000, "[Page 1]\n" * 50_000,
                                     ("x\n" * 3 + "\f") * 20_000])
def test_page_rules_read_hostile_text_in_linear_time(hostile: str) -> None:
    pages = text_pages(hostile)
    out = strip_leaders(blank_furniture(hostile, pages) if pages else hostile, blank=True)
    assert len(out) == len(hostile)
