# One-off study, as run at the commit that added it (2026-11-28, stop 46); not maintained.
"""PDF pages read from their characters (pdfplumber) on every page, as before stop 46, or only on the
pages whose content paints ruling both ways or whose pypdf text shows fake bold, as shipped.

Each PDF under the folders is loaded both ways (the shipped loader; the old way forces every page to
be a candidate), alternating which goes first; reported: the files whose text differs (with both
texts' first characters), the pages read from their characters, and the seconds of each way.

    python bench/studies/pdf_char_pages.py DIR [DIR ...] --out bench/results/pdf_char_pages_s46.json
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from graphrag.ingest import pdf_reader  # noqa: E402
from graphrag.ingest.load import LoadError, discover, load_file  # noqa: E402


def _load(found: Any, every_page: bool, counts: dict[str, int]) -> tuple[Any, float]:
    saved_draws, saved_chars = pdf_reader._draws_paths, pdf_reader._pdf_pages_from_chars

    def counted(data: bytes, candidates: set[int] | None = None) -> dict[int, str]:
        counts["pages_read_from_characters"] += len(candidates or ())
        return saved_chars(data, candidates)

    if every_page:
        pdf_reader._draws_paths = lambda page: True  # type: ignore[assignment]
    pdf_reader._pdf_pages_from_chars = counted  # type: ignore[assignment]
    start = time.perf_counter()
    try:
        result: Any = [d.text for d in load_file(found, 100_000_000)]
    except LoadError as exc:
        result = str(exc)
    finally:
        pdf_reader._draws_paths, pdf_reader._pdf_pages_from_chars = saved_draws, saved_chars  # type: ignore[assignment]
    return result, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    logging.disable(logging.WARNING)
    ways = {"every_page": {"seconds": 0.0, "pages_read_from_characters": 0},
            "shipped": {"seconds": 0.0, "pages_read_from_characters": 0}}
    differ, files = [], 0
    for folder in args.folders:
        found, _ = discover([folder], {"pdf"})
        for n, f in enumerate(found):
            files += 1
            order = ("every_page", "shipped") if n % 2 else ("shipped", "every_page")
            texts = {}
            for way in order:
                texts[way], seconds = _load(f, way == "every_page", ways[way])  # type: ignore[arg-type]
                ways[way]["seconds"] += seconds
            if texts["every_page"] != texts["shipped"]:
                differ.append({"file": str(f.path), "every_page": str(texts["every_page"])[:120],
                               "shipped": str(texts["shipped"])[:120]})
    report = {"files": files, "ways": {k: {**v, "seconds": round(float(v["seconds"]), 1)} for k, v in ways.items()},
              "differ": differ}
    print(json.dumps(report, indent=1, ensure_ascii=False))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
