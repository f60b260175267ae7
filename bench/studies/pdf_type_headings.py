"""Ran at stop 52 (the commit that added ``type_outline``). PDF headings read from the type against
the PDF's own bookmarks.

    python bench/studies/pdf_type_headings.py FILE_OR_DIR [...] [--out bench/results/pdf_type_headings_s52.json]

Each PDF is loaded twice by the loader: as it is (bookmarks where it has them, else the type), and
with its bookmarks hidden, so its headings come from the type. For PDFs with bookmarks, the titles
both readings mark are counted (recall of the bookmarks; the type may also find headings the
bookmarks leave out, such as a manual's function entries, which count against nothing). For PDFs
without bookmarks, the headings found are listed for reading. CPU seconds of both loads are kept.
Figures in docs/ingestion.md (PDF) and docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from graphrag.ingest import pdf_reader  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    files = sorted(p for path in args.paths for p in ([path] if path.is_file() else path.rglob("*.pdf")))
    outline = pdf_reader._outline
    rows: list[dict[str, Any]] = []
    for path in files:
        data = path.read_bytes()
        try:
            pdf_reader._outline = outline
            start = time.process_time()
            [doc] = pdf_reader.load_pdf(path, data)
            as_is = time.process_time() - start
            pdf_reader._outline = lambda reader, limit=5000: []  # noqa: ARG005 - bookmarks hidden
            start = time.process_time()
            [typed] = pdf_reader.load_pdf(path, data)
            by_type = time.process_time() - start
        except Exception as exc:  # noqa: BLE001 - a PDF the loader refuses is listed as such
            rows.append({"file": path.name, "error": f"{type(exc).__name__}: {str(exc)[:120]}"})
            continue
        finally:
            pdf_reader._outline = outline
        has_bookmarks = bool(outline(__import__("pypdf").PdfReader(path)))
        marked = [t.lower() for _, _, t in doc.headings]
        found = [t for _, _, t in typed.headings]
        row: dict[str, Any] = {"file": path.name, "pages": len(doc.pages), "bookmarks": has_bookmarks,
                               "cpu_s": round(as_is, 3), "cpu_s_type": round(by_type, 3),
                               "headings_type": len(found)}
        if has_bookmarks:
            row["headings_bookmarks"] = len(set(marked))
            row["both"] = len(set(marked) & {t.lower() for t in found})
        else:
            row["found"] = [f"{'#' * level} {title}" for _, level, title in typed.headings]
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "found"}), flush=True)
    with_bm = [r for r in rows if r.get("bookmarks")]
    without = [r for r in rows if "found" in r]
    summary = {
        "pdfs": len(rows), "with_bookmarks": len(with_bm),
        "bookmark_headings": sum(r["headings_bookmarks"] for r in with_bm),
        "bookmark_headings_found_by_type": sum(r["both"] for r in with_bm),
        "without_bookmarks": len(without),
        "without_bookmarks_with_headings": sum(1 for r in without if r["found"]),
        "headings_found_without_bookmarks": sum(len(r["found"]) for r in without),
    }
    print(json.dumps(summary, indent=2))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "files": rows}, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
