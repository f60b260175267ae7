"""Ran at stop 53 (the commits that added ``graphrag/ingest/html_content.py``). The HTML loader's main
content on two public sets of web pages with a reference reading, scored as the first set scores it.

    python bench/studies/html_main_content.py --aeb DIR --readability DIR [--out bench/results/html_main_content_s53.json]
    GR_ROOT=/path/to/other/checkout python bench/studies/html_main_content.py ...   # another commit's loader

``--aeb``: a checkout of scrapinghub/article-extraction-benchmark (MIT; 181 news and blog pages,
``html/*.html.gz``, and ``ground-truth.json`` with each page's article body written by people).
``--readability``: a checkout of mozilla/readability (Apache-2.0; ``test/test-pages/*/source.html`` and
``expected.html``, the reading Readability.js gives, 130 pages). Neither is in this repository.

Each page is read by ``load_html`` (the loader's Markdown, with link targets and image marks taken
out) and compared with the reference by the benchmark's own measure: 4-word shingles, precision
and recall per page, averaged over the pages, F1 of the two averages. The benchmark's published
figures for other extractors (trafilatura 0.958, readability-lxml 0.922, goose3 0.896, html-text
0.665 F1) are measured the same way. Figures in docs/ingestion.md and docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import os
import re
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, os.environ.get("GR_ROOT") or str(Path(__file__).resolve().parents[2]))

from graphrag.ingest.html_reader import load_html  # noqa: E402

_WORD = re.compile(r"\w+")


def shingles(text: str, n: int = 4) -> Counter[tuple[str, ...]]:
    words = _WORD.findall(text)
    return Counter(tuple(words[i:i + n]) for i in range(max(1, len(words) - n + 1)) if words[i:i + n])


def score(true: str, pred: str) -> tuple[float, float, float]:
    """True positives, false positives and false negatives over shingles, as shares of their sum."""
    t, p = shingles(true), shingles(pred)
    tp = sum((t & p).values())
    fp = sum((p - t).values())
    fn = sum((t - p).values())
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def metrics(rows: list[dict[str, Any]]) -> dict[str, float]:
    def precision(tp: float, fp: float, fn: float) -> float:
        return 1.0 if fp == fn == 0 else 0.0 if tp == fp == 0 else tp / (tp + fp)

    def recall(tp: float, fp: float, fn: float) -> float:
        return 1.0 if fp == fn == 0 else 0.0 if tp == fn == 0 else tp / (tp + fn)

    p = statistics.mean(precision(*r["tp_fp_fn"]) for r in rows if r["tp_fp_fn"][0] + r["tp_fp_fn"][1] > 0)
    r_ = statistics.mean(recall(*r["tp_fp_fn"]) for r in rows if r["tp_fp_fn"][0] + r["tp_fp_fn"][2] > 0)
    return {"pages": len(rows), "f1": round(2 * p * r_ / (p + r_), 4), "precision": round(p, 4), "recall": round(r_, 4),
            "lost_whole": sum(1 for r in rows if r["tp_fp_fn"][0] == 0)}


def read(path: Path, data: bytes) -> str:
    try:
        docs = load_html(path, data)
    except Exception as exc:  # noqa: BLE001 - a page the loader refuses reads as nothing
        logging.warning("%s: %s", path, exc)
        return ""
    text = "\n".join(d.text for d in docs)
    return re.sub(r"\]\([^)]*\)", "]", text)  # link and image targets are not text


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--aeb", type=Path, required=True)
    parser.add_argument("--readability", type=Path, required=True)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    import lxml.html

    sets: dict[str, list[dict[str, Any]]] = {"article-extraction-benchmark": [], "readability-test-pages": []}
    truth = json.loads((args.aeb / "ground-truth.json").read_text())
    for key, value in sorted(truth.items()):
        path = args.aeb / "html" / f"{key}.html.gz"
        pred = read(path.with_suffix(""), gzip.decompress(path.read_bytes()))
        sets["article-extraction-benchmark"].append({"page": key, "tp_fp_fn": score(value["articleBody"], pred)})
    for page in sorted((args.readability / "test" / "test-pages").iterdir()):
        expected = "\n".join(lxml.html.fromstring((page / "expected.html").read_text("utf-8")).itertext())
        pred = read(page / "source.html", (page / "source.html").read_bytes())
        sets["readability-test-pages"].append({"page": page.name, "tp_fp_fn": score(expected, pred)})
    out = {name: {"metrics": metrics(rows), "pages": rows} for name, rows in sets.items()}
    for name, value in out.items():
        print(name, value["metrics"])
    if args.out:
        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
