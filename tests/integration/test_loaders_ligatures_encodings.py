"""Characters as a reader sees them: typographic ligatures spelled out, UTF-16 without its byte-order
mark read, XHTML read without noise, NUL characters (which PostgreSQL cannot store) left out.
Loader-level checks and ingests into the real stores."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from graphrag.ingest.encoding import NotText, decode_text
from graphrag.ingest.load import Found, load_file
from graphrag.ingest.pipeline import Ingestor
from graphrag.search.router import SearchRouter
from graphrag.runtime import Runtime
from tests.helpers import rest_search

LIGATURES = "\ufb00\ufb01\ufb02\ufb03\ufb04\ufb05\ufb06"


def make_ligature_pdf(path: Path) -> None:
    """A PDF whose font draws "fi" and "fl" as single glyphs, as TeX and InDesign output does: text
    extraction gives U+FB01 and U+FB02 (the glyphs' names), not the letters."""
    from pypdf import PdfWriter
    from pypdf.generic import ArrayObject, DecodedStreamObject, DictionaryObject, NameObject, NumberObject

    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    encoding = DictionaryObject({NameObject("/Type"): NameObject("/Encoding"),
                                 NameObject("/BaseEncoding"): NameObject("/WinAnsiEncoding"),
                                 NameObject("/Differences"): ArrayObject([NumberObject(128), NameObject("/fi"),
                                                                          NameObject("/fl")])})
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica"), NameObject("/Encoding"): encoding})
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})})
    content = DecodedStreamObject()
    content.set_data(b"BT /F1 12 Tf 72 700 Td (The \x80rst re\x80nery of Zorbaton runs ef\x80-) Tj "
                     b"0 -14 Td (ciently and keeps the over\x81ow tank dry.) Tj ET")
    page[NameObject("/Contents")] = writer._add_object(content)
    writer.write(str(path))


def test_pdf_ligatures_are_spelled_out_and_broken_words_joined(tmp_path: Path) -> None:
    path = tmp_path / "refinery.pdf"
    make_ligature_pdf(path)
    from pypdf import PdfReader

    assert "\ufb01" in (PdfReader(path).pages[0].extract_text() or "")  # what the PDF itself gives
    [doc] = load_file(Found(path, "pdf"), 10 * 1024 * 1024)
    assert "The first refinery of Zorbaton runs efficiently" in doc.text  # "ef\ufb01-" + "ciently" joined
    assert "overflow tank" in doc.text and not set(LIGATURES) & set(doc.text)


def test_text_files_spell_out_ligatures(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("Copied from a PDF: the \ufb01rst \ufb02ag and the e\ufb03cient o\ufb00set.\n")
    [doc] = load_file(Found(path, "txt"), 1024 * 1024)
    assert doc.text.strip() == "Copied from a PDF: the first flag and the efficient offset."


@pytest.mark.parametrize("encoding", ["utf-16-le", "utf-16-be"])
def test_utf16_without_a_byte_order_mark_is_text(tmp_path: Path, encoding: str) -> None:
    """Some Windows tools and exports write UTF-16 without its mark; its NUL bytes made it "binary"."""
    text = "Pump log\n\nThe Zorbaton pump ran at 42 glorbars — naïve readings dropped.\n"
    assert decode_text(text.encode(encoding)) == (text, encoding)
    path = tmp_path / "log.txt"
    path.write_bytes(text.encode(encoding))
    [doc] = load_file(Found(path, "txt"), 1024 * 1024)
    assert "42 glorbars — naïve" in doc.text


def test_binary_with_nul_bytes_is_still_refused() -> None:
    data = bytes(range(256)) * 8  # NUL bytes on both sides of the code units
    with pytest.raises(NotText, match="binary"):
        decode_text(data)
    with pytest.raises(NotText, match="binary"):
        decode_text(b"\x00\x01\x00\x02" * 100)  # NULs on one side, but control characters once decoded


def test_xhtml_is_read_without_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "filing.html"
    # An SEC filing's inline XBRL: an XML declaration and 500 bytes of comments before <html>.
    path.write_text('<?xml  version="1.0" encoding="utf-8"?>\n' + "<!-- Inline XBRL Document, generated -->\n" * 14
                    + "<html><head><title>Annual report</title></head><body><p>Net revenue rose to 12 million.</p>"
                    "</body></html>")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        [doc] = load_file(Found(path, "html"), 1024 * 1024)
    assert "Net revenue rose to 12 million." in doc.text


async def test_words_written_with_ligatures_are_found_by_keyword_search(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    make_ligature_pdf(tmp_path / "refinery.pdf")
    (tmp_path / "log.txt").write_bytes("Pump log: the Quellmouth sluice was flushed.\n".encode("utf-16-le"))
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (2, [])
    for term, source in (("refinery efficiently", "refinery.pdf"), ("overflow", "refinery.pdf"),
                         ("Quellmouth sluice", "log.txt")):
        response = await rest_search(router, term, mode="keyword", limit=3, collections=[collection])
        assert [Path(r["source"]).name for r in response["results"]] == [source], term
    rows = await runtime.postgres.pool.fetch("SELECT content FROM chunks WHERE collection = $1", collection)
    assert rows and not [r for r in rows if set(LIGATURES) & set(r["content"])]


def make_nul_glyph_pdf(path: Path) -> None:
    """A PDF whose font maps a glyph (its "ffi", as in Unstructured's LayoutParser paper) to U+0000."""
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    page = writer.add_blank_page(612, 792)
    cmap = DecodedStreamObject()
    cmap.set_data(b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /X def "
                  b"1 begincodespacerange <00> <FF> endcodespacerange 1 beginbfrange <20> <7E> <0020> endbfrange "
                  b"1 beginbfchar <80> <0000> endbfchar endcmap CMapName currentdict /CMap defineresource pop end end")
    font = DictionaryObject({NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
                             NameObject("/BaseFont"): NameObject("/Helvetica"),
                             NameObject("/ToUnicode"): writer._add_object(cmap)})
    page[NameObject("/Resources")] = DictionaryObject(
        {NameObject("/Font"): DictionaryObject({NameObject("/F1"): writer._add_object(font)})})
    content = DecodedStreamObject()
    content.set_data(b"BT /F1 12 Tf 72 700 Td (The practical di\x80culties of the Zorbaton pump.) Tj ET")
    page[NameObject("/Contents")] = writer._add_object(content)
    writer.write(str(path))


async def test_nul_characters_are_left_out_and_the_documents_stored(
        tmp_path: Path, ingestor: Ingestor, runtime: Runtime, router: SearchRouter, collection: str) -> None:
    """A NUL in a PDF's text or a JSON record failed the whole document ("invalid byte sequence for
    encoding UTF8: 0x00"): three of Unstructured's example PDFs were lost so (stop 53)."""
    make_nul_glyph_pdf(tmp_path / "pump.pdf")
    (tmp_path / "records.jsonl").write_text('{"text": "The Marrowgate gauge\\u0000 reads hourly.", '
                                            '"title": "Gauge\\u0000", "metadata": {"note\\u0000": "a\\u0000b"}}\n')
    [pdf] = load_file(Found(tmp_path / "pump.pdf", "pdf"), 1 << 20)
    assert "The practical diculties of the Zorbaton pump." in pdf.text  # the glyph's letters cannot be known
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert (report.ingested, report.failed) == (2, []), report
    [hit] = (await rest_search(router, "Zorbaton pump", mode="keyword", limit=3, collections=[collection]))["results"]
    assert Path(hit["source"]).name == "pump.pdf"
    [record] = (await rest_search(router, "Marrowgate gauge", mode="keyword", limit=3, collections=[collection]))["results"]
    assert record["title"] == "Gauge" and "\x00" not in record["content"], record
    assert record["metadata"]["note"] == "ab", record
