# One-off study, as run at the commit that added it (2026-11-28, stop 45); not maintained.
"""Running headers, footers and page numbers of real PDFs: which lines ``furniture.py`` leaves out,
and what the chunks and the extractor make of the pages with and without them.

Every PDF under the folders is read by the shipped loader twice, with the furniture rule and with it
turned off; the pages that differ are chunked (the ``page`` strategy, the model's tokenizer) and
extracted (the shipped spaCy extractor, no glossary). Reported per file: pages, lines left out (the
most frequent as a sample), and over all files: chunks, entities, the names only the furniture gave,
and how many chunks the most-mentioned name is in (a running title is such a hub).

    python bench/studies/page_furniture.py /work/pdfs --out bench/results/page_furniture_s45.json
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any
from unittest import mock

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.studies.site_markup import study_setup  # noqa: E402
from graphrag.ingest import pdf_reader  # noqa: E402
from graphrag.ingest.extract import SpacyExtractor  # noqa: E402
from graphrag.ingest.load_base import LoadError  # noqa: E402


def _read(path: Path, rule: bool) -> Any:
    if rule:
        return pdf_reader.load_pdf(path, path.read_bytes())[0]
    with mock.patch.object(pdf_reader, "strip_furniture", lambda parts: parts):
        return pdf_reader.load_pdf(path, path.read_bytes())[0]


def _graph(texts: list[list[str]], extractor: SpacyExtractor) -> tuple[Counter[str], int]:
    """Per entity name, the number of chunks naming it; and the number of chunks."""
    in_chunks: Counter[str] = Counter()
    for extraction in extractor.extract_many(texts):
        for (_, key) in extraction.mentions:
            in_chunks[extraction.entities[key].name] += 1
    return in_chunks, sum(len(t) for t in texts)


def main() -> None:
    args, chunker, extractor = study_setup(__doc__)
    files: dict[str, Any] = {}
    before: list[list[str]] = []
    after: list[list[str]] = []
    pages_read = 0
    for folder in args.folders:
        for path in sorted(folder.rglob("*.pdf")):
            try:
                with_rule, without = _read(path, True), _read(path, False)
            except LoadError:
                continue
            pages_read += len(with_rule.pages)
            if with_rule.text == without.text:
                continue
            left = Counter(line.strip() for a, b in without.pages for line in without.text[a:b].split("\n")
                           if line.strip())
            left.subtract(line.strip() for a, b in with_rule.pages for line in with_rule.text[a:b].split("\n")
                          if line.strip())
            gone = {line: n for line, n in left.items() if n > 0}
            files[str(path.relative_to(folder))] = {
                "pages": len(with_rule.pages), "lines_left_out": sum(gone.values()),
                "most_frequent": sorted(gone.items(), key=lambda x: -x[1])[:5]}
            before.append([c.text for c in chunker.chunk(without)])
            after.append([c.text for c in chunker.chunk(with_rule)])
    names_before, chunks_before = _graph(before, extractor)
    names_after, chunks_after = _graph(after, extractor)
    only_furniture = sorted(set(names_before) - set(names_after))
    report = {
        "pdfs_with_pages_read": pages_read, "files_changed": len(files), "files": files,
        "chunks": {"before": chunks_before, "after": chunks_after},
        "entities": {"before": len(names_before), "after": len(names_after)},
        "names_only_in_furniture": only_furniture,
        "top_names_before": names_before.most_common(8), "top_names_after": names_after.most_common(8),
    }
    print(json.dumps({k: v for k, v in report.items() if k != "files"}, indent=1, ensure_ascii=False))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
