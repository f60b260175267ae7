"""Ran at the commit after 2d1db13 (stop 39); since stop 40 the path also re-reads overprinted pages. The words of PDF pages read through pdfplumber (pages with
ruled tables) against pypdf's reading of the same pages.

    python bench/studies/pdf_table_words.py DIR [DIR ...]

Every ``*.pdf`` under the folders is read by the loader's table path; for each page it re-reads, the
alphabetic words (2+ letters) of both readings are counted, and the words found only in one of them are
summed. pypdf is not the truth (it splits some words itself), but words run together or split into
letters show as large differences. Figures in docs/ingestion.md (PDF).
"""

from __future__ import annotations

import argparse
import collections
import io
import re
import signal
import sys
from pathlib import Path
from typing import Any

from pypdf import PdfReader

from graphrag.ingest import pdf_reader


def _words(text: str) -> collections.Counter[str]:
    return collections.Counter(re.findall(r"[A-Za-z]{2,}", text))


def _timeout(*_: Any) -> None:
    raise TimeoutError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="+", type=Path)
    args = parser.parse_args()
    totals: collections.Counter[str] = collections.Counter()
    signal.signal(signal.SIGALRM, _timeout)
    for path in sorted(p for d in args.dirs for p in d.rglob("*.pdf")):
        try:
            signal.alarm(60)
            data = path.read_bytes()
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted:
                reader.decrypt("")
            pages = pdf_reader._pdf_pages_from_chars(data)
        except Exception:  # noqa: BLE001 - damaged and locked files are not this study's subject
            continue
        finally:
            signal.alarm(0)
        for number, text in sorted(pages.items()):
            ref, got = _words(reader.pages[number].extract_text() or ""), _words(text)
            only_ref, only_got = sum((ref - got).values()), sum((got - ref).values())
            totals["pages"] += 1
            totals["files"] += number == min(pages)
            totals["pypdf_only"] += only_ref
            totals["table_path_only"] += only_got
            if only_ref or only_got:
                print(f"{path.name} p{number + 1}: pypdf only {only_ref}, table path only {only_got}")
    print(dict(totals))


if __name__ == "__main__":
    sys.exit(main())
