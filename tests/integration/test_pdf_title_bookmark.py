"""Papers as PDFs: one whose one bookmark is its title (as some paper and report tools write them)
takes its sections from the type, under the title; arXiv's margin stamp is metadata, not text. In the
loader and in the real stores."""

from __future__ import annotations

from pathlib import Path


from graphrag.ingest.load import load_bytes
from graphrag.ingest.pipeline import Ingestor
from graphrag.search.router import SearchRouter
from tests.helpers import rest_search


def _paper(path: Path) -> None:
    """A two-page paper: one bookmark (its title); sections numbered in bold 12 pt over 10 pt text."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.add_page()
    pdf.start_section("Tidal Barriers for Small Harbours", level=0)
    pdf.set_font("Helvetica", "B", 16)
    pdf.cell(0, 10, "Tidal Barriers for Small Harbours", new_x="LMARGIN", new_y="NEXT")

    def section(title: str, body: str) -> None:
        pdf.set_font("Helvetica", "B", 12)
        pdf.cell(0, 8, title, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=10)
        pdf.multi_cell(0, 5, body)

    section("1 Introduction", "Small harbours flood when surges meet spring tides. " * 6)
    pdf.set_font("Helvetica", size=10)
    pdf.cell(0, 5, "arXiv:2411.01234v2  [physics.ao-ph]  3 Nov 2024", new_x="LMARGIN", new_y="NEXT")
    section("2 Design", "The Quellmouth barrier closes zyxquart gates at four metres. " * 6)
    pdf.add_page()
    section("3 Results", "Floods fell from nine a year to one after the Marrowgate trial. " * 6)
    pdf.output(str(path))


def test_a_title_bookmark_alone_leaves_the_sections_to_the_type(tmp_path: Path) -> None:
    path = tmp_path / "paper.pdf"
    _paper(path)
    [doc] = load_bytes("paper.pdf", path.read_bytes(), 1 << 24)
    assert [(level, title) for _, level, title in doc.headings] == [
        (1, "Tidal Barriers for Small Harbours"), (2, "1 Introduction"), (2, "2 Design"), (2, "3 Results")]
    assert all(doc.text[start:].startswith("#" * level + " " + title) for start, level, title in doc.headings)


async def test_sections_under_a_title_bookmark_are_the_chunks_heading_path(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    _paper(tmp_path / "paper.pdf")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    [hit] = (await rest_search(router, "zyxquart gates", mode="keyword", limit=3, collections=[collection]))["results"]
    assert hit["heading_path"] == ["Tidal Barriers for Small Harbours", "2 Design"] and hit["metadata"]["page"] == 1, hit
    [results] = (await rest_search(router, "Marrowgate trial", mode="keyword", limit=3, collections=[collection]))["results"]
    assert results["heading_path"] == ["Tidal Barriers for Small Harbours", "3 Results"], results


def test_arxivs_stamp_is_metadata_not_text(tmp_path: Path) -> None:
    path = tmp_path / "paper.pdf"
    _paper(path)
    [doc] = load_bytes("paper.pdf", path.read_bytes(), 1 << 24)
    assert doc.metadata["arxiv"] == "2411.01234v2" and "arXiv:" not in doc.text


async def test_arxivs_stamp_is_the_hits_metadata(
        tmp_path: Path, ingestor: Ingestor, router: SearchRouter, collection: str) -> None:
    _paper(tmp_path / "paper.pdf")
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (1, []), report
    [hit] = (await rest_search(router, "spring tides surges", mode="keyword", limit=3, collections=[collection]))["results"]
    assert hit["metadata"]["arxiv"] == "2411.01234v2" and "arXiv" not in hit["content"], hit
