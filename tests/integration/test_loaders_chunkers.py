"""Loaders and chunkers on small files the tests make themselves (real tokenizer and models)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrag.ingest.chunk import CHUNKERS, Chunker, ChunkOptions
from graphrag.ingest.load import Found, LoadError, discover, load_file

MB = 1024 * 1024

MARKDOWN = """---
title: Rocket handbook
team: propulsion
---
# Rocket handbook

Intro paragraph about rockets. It has two sentences.

## Engines

Engines burn fuel. They make thrust.

```python
def thrust(mass_flow, velocity):
    # a fenced block that must stay whole
    return mass_flow * velocity
```

| engine | thrust |
| ------ | ------ |
| Merlin | 845 kN |

### Cooling

Regenerative cooling runs fuel around the chamber.
"""


def _load(path: Path, kind: str) -> list:
    return load_file(Found(path, kind), 50 * MB)


def test_markdown_front_matter_title_and_metadata(tmp_path: Path) -> None:
    path = tmp_path / "rockets.md"
    path.write_text(MARKDOWN)
    [doc] = _load(path, "md")
    assert doc.title == "Rocket handbook"
    assert doc.metadata == {"team": "propulsion"}
    assert doc.kind == "markdown"
    assert len(doc.text) == len(MARKDOWN)  # front matter blanked, not cut: offsets index the file


def test_title_falls_back_to_heading_then_file_name(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("Some text\n\n# The Heading\n\nbody")
    (tmp_path / "b.md").write_text("no heading here")
    assert _load(tmp_path / "a.md", "md")[0].title == "The Heading"
    assert _load(tmp_path / "b.md", "md")[0].title == "b"


def test_html_title_headings_and_scripts(tmp_path: Path) -> None:
    path = tmp_path / "page.html"
    path.write_text("<html><head><title>Page T</title><script>var x=1;</script></head>"
                    "<body><h2>Section</h2><p>Hello <b>world</b>.</p><pre>code  here</pre></body></html>")
    [doc] = _load(path, "html")
    assert doc.title == "Page T"
    assert "## Section" in doc.text and "Hello world ." in doc.text or "Hello world." in doc.text
    assert "var x" not in doc.text
    assert "```\ncode  here\n```" in doc.text


def make_pdf(path: Path, pages: list[str], title: str = "PDF Title") -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title(title)
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 10, text)
    pdf.output(str(path))


def make_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    document.core_properties.title = "Docx Title"
    document.add_heading("Overview", level=1)
    document.add_paragraph("Marie Curie worked in Paris.")
    document.add_heading("Details", level=2)
    document.add_paragraph("She won the Nobel Prize.")
    document.save(str(path))


def test_pdf_pages_and_title(tmp_path: Path, models: object) -> None:
    path = tmp_path / "doc.pdf"
    make_pdf(path, ["First page about Ada Lovelace.", "Second page about Charles Babbage."])
    [doc] = _load(path, "pdf")
    assert doc.title == "PDF Title"
    assert len(doc.pages) == 2 and doc.metadata["pages"] == 2
    chunks = models.chunker().chunk(doc)  # type: ignore[attr-defined]
    assert [c.metadata["page"] for c in chunks] == [1, 2]
    assert "Ada" in chunks[0].text and "Babbage" in chunks[1].text


def test_docx_headings_become_heading_path(tmp_path: Path, models: object) -> None:
    path = tmp_path / "doc.docx"
    make_docx(path)
    [doc] = _load(path, "docx")
    assert doc.title == "Docx Title"
    assert "# Overview" in doc.text and "## Details" in doc.text
    chunks = Chunker(models.counter, ChunkOptions(budget=12)).chunk(doc)  # type: ignore[attr-defined]
    assert ("Overview", "Details") in {c.heading_path for c in chunks}


def test_jsonl_records(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps({"text": "one", "title": "T1", "source": "s1", "metadata": {"k": 1}}) + "\n\n"
                    + json.dumps({"text": "two"}) + "\n")
    docs = _load(path, "jsonl")
    assert [(d.source, d.title, d.metadata) for d in docs][0] == ("s1", "T1", {"k": 1})
    assert docs[1].source == f"{path}#3" and docs[1].kind == "record"
    path.write_text('{"title": "no text"}\n')
    with pytest.raises(LoadError, match="line 1"):
        _load(path, "jsonl")


def test_discover_walks_with_ignores_and_type_filter(tmp_path: Path) -> None:
    for rel in ["a.md", "sub/b.txt", "sub/c.pdf", ".hidden/d.md", "node_modules/e.md", ".git/f.md", "g.bin"]:
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    found, skipped = discover([tmp_path])
    assert sorted(f.path.relative_to(tmp_path).as_posix() for f in found) == ["a.md", "sub/b.txt", "sub/c.pdf"]
    assert [s["path"].endswith("g.bin") for s in skipped] == [True]
    found, skipped = discover([tmp_path], {"md"})
    assert [f.path.name for f in found] == ["a.md"]
    assert any("not in --file-types" in s["reason"] for s in skipped)


OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(56)  # a compound file's signature and header


@pytest.mark.parametrize("content,kind,message", [
    (b"", "md", "empty file"),
    (b"\x00\x01\x02binary", "md", "binary content"),
    (bytes(range(128, 256)) * 4, "txt", "not valid UTF-8"),
    (b"%PDF-1.4 truncated garbage", "pdf", "unreadable PDF"),
    (b"PK\x03\x04truncated", "docx", "unreadable DOCX"),
    # OLE compound files named .docx: Word's password-protected package, and a Word 97-2003 document
    (OLE + "EncryptedPackage".encode("utf-16-le") + bytes(400), "docx", "password-protected DOCX \\(encrypted\\)"),
    (OLE + "WordDocument".encode("utf-16-le") + bytes(400), "docx", "Word 97-2003 document \\(.doc\\), not a DOCX"),
])
def test_bad_files_fail_with_clear_reason(tmp_path: Path, content: bytes, kind: str, message: str) -> None:
    path = tmp_path / f"bad.{kind}"
    path.write_bytes(content)
    with pytest.raises(LoadError, match=message):
        _load(path, kind)


def test_encrypted_pdf_and_size_limit(tmp_path: Path) -> None:
    from pypdf import PdfReader, PdfWriter

    plain = tmp_path / "plain.pdf"
    make_pdf(plain, ["secret text"])
    writer = PdfWriter()
    for page in PdfReader(str(plain)).pages:
        writer.add_page(page)
    writer.encrypt("pw")
    locked = tmp_path / "locked.pdf"
    with locked.open("wb") as handle:
        writer.write(handle)
    with pytest.raises(LoadError, match="encrypted"):
        _load(locked, "pdf")
    big = tmp_path / "big.txt"
    big.write_text("x" * 2000)
    with pytest.raises(LoadError, match="over the"):
        load_file(Found(big, "txt"), 1000)


def test_markdown_chunker_keeps_code_and_tables_whole(tmp_path: Path, models: object) -> None:
    path = tmp_path / "rockets.md"
    path.write_text(MARKDOWN)
    [doc] = _load(path, "md")
    chunker = Chunker(models.counter, ChunkOptions(budget=30))  # type: ignore[attr-defined]
    chunks = chunker.chunk(doc)
    code = [c for c in chunks if "def thrust" in c.text]
    assert len(code) == 1 and "return mass_flow * velocity" in code[0].text and code[0].has_code
    table = [c for c in chunks if "| Merlin" in c.text]
    assert len(table) == 1 and "| engine" in table[0].text
    assert ("Rocket handbook", "Engines", "Cooling") in {c.heading_path for c in chunks}
    assert not any("team: propulsion" in c.text for c in chunks)


@pytest.mark.parametrize("strategy", CHUNKERS)
def test_every_chunker_round_trips_offsets_and_respects_model_limit(strategy: str, models: object) -> None:
    from graphrag.models import Document

    sentences = [f"Sentence number {i} talks about topic {i % 7} in some detail." for i in range(120)]
    text = "# Title\n\n" + "\n\n".join(" ".join(sentences[i:i + 6]) for i in range(0, 120, 6))
    doc = Document(source="s", title="t", text=text, kind="markdown")
    chunker = models.chunker()  # type: ignore[attr-defined]
    chunks = chunker.chunk(doc, strategy)
    assert chunks
    for c in chunks:
        assert text[c.char_start:c.char_end] == c.text
        assert 0 < c.token_count <= models.counter.max_tokens  # type: ignore[attr-defined]
    assert [c.index for c in chunks] == list(range(len(chunks)))


def test_sentence_window_overlaps_and_oversize_sentence_is_split(models: object) -> None:
    from graphrag.models import Document

    text = " ".join(f"Fact {i} is stated here plainly." for i in range(80))
    chunks = Chunker(models.counter, ChunkOptions(budget=60, overlap_tokens=20)).chunk(  # type: ignore[attr-defined]
        Document("s", "t", text, "text"))
    assert len(chunks) > 2
    assert chunks[1].char_start < chunks[0].char_end  # overlap
    long = "word " * 2000
    chunks = models.chunker().chunk(Document("s", "t", long, "text"))  # type: ignore[attr-defined]
    assert len(chunks) > 1 and all(c.token_count <= models.counter.max_tokens for c in chunks)  # type: ignore[attr-defined]


@pytest.mark.parametrize("kind", ["text", "record", "pdf"])
def test_summed_token_counts_equal_counting_each_chunk_again(kind: str, models: object) -> None:
    """With the packaged WordPiece tokenizer, whose counts add up over white space, windows take
    the sum of their sentences' counts instead of being tokenized again: the same chunks and counts
    as counting every chunk, sentences glued without a space ("a.B") included."""
    from graphrag.models import Document

    counter = models.counter  # type: ignore[attr-defined]
    assert counter.additive and counter.special_tokens == 2
    parts = [f"Claim {i}: IL-{i} levels rose by {i}.{i}% in CD4+ cells (p < 0.0{i})." for i in range(40)]
    parts[5] += "Glued.Sentence" + "No space after this one.Either"
    text = " ".join(parts) + "\n\n" + "\n".join(f"- item {i} ends here." for i in range(12))
    pages = ((0, len(text) // 2), (len(text) // 2, len(text)))
    doc = Document("s", "t", text, kind, pages=pages if kind == "pdf" else ())
    chunker = Chunker(counter, ChunkOptions(budget=60, overlap_tokens=20))
    summed = chunker.chunk(doc)
    assert len(summed) > 3
    assert [c.token_count for c in summed] == counter.count([c.text for c in summed])
    counter.additive = False
    try:
        assert chunker.chunk(doc) == summed
    finally:
        counter.additive = True


def test_only_tokenizers_that_split_at_white_space_first_are_additive() -> None:
    """Byte-level BPE marks a word's leading space in its token, so its counts do not add up."""
    from tokenizers import Tokenizer, models as tok_models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    from graphrag.ingest.chunk import HFTokenCounter, splits_at_white_space

    byte_level = Tokenizer(tok_models.BPE())
    byte_level.pre_tokenizer = pre_tokenizers.ByteLevel()
    wordpiece = Tokenizer(tok_models.WordPiece({"[UNK]": 0}, unk_token="[UNK]"))
    wordpiece.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    assert not splits_at_white_space(PreTrainedTokenizerFast(tokenizer_object=byte_level))
    assert splits_at_white_space(PreTrainedTokenizerFast(tokenizer_object=wordpiece))
    assert not HFTokenCounter(object(), 256).additive  # not a fast tokenizer: counted text by text
