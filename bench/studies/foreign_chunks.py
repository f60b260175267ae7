# One-off study, as run at the commit that added it (2026-11-28, stop 45); not maintained.
"""Chunks in another language than the spaCy model's: what the extractor made of them before the
language check, and what it makes of them now.

Every PDF under the folders is read and chunked as ingestion does, and extracted twice by the
shipped extractor: with the check (``graphrag/ingest/language.py``) and with it turned off. Reported:
chunks judged foreign (per file), entities, and the names in the most chunks on each side.

    python bench/studies/foreign_chunks.py /work/pdfs --out bench/results/foreign_chunks_s45.json
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
from graphrag.ingest import extract as extract_module  # noqa: E402
from graphrag.ingest.language import foreign  # noqa: E402
from graphrag.ingest.load_base import LoadError  # noqa: E402
from graphrag.ingest.pdf_reader import load_pdf  # noqa: E402
from graphrag.ingest.textprep import prose_views  # noqa: E402


def _names(extractions: list[Any]) -> Counter[str]:
    """Per entity name, the number of chunks naming it."""
    in_chunks: Counter[str] = Counter()
    for extraction in extractions:
        for (_, key) in extraction.mentions:
            in_chunks[extraction.entities[key].name] += 1
    return in_chunks


def main() -> None:
    args, chunker, extractor = study_setup(__doc__)
    texts: list[list[str]] = []
    files: dict[str, Any] = {}
    for folder in args.folders:
        for path in sorted(folder.rglob("*.pdf")):
            try:
                doc = load_pdf(path, path.read_bytes())[0]
            except LoadError:
                continue
            chunks = [c.text for c in chunker.chunk(doc)]
            judged = sum(foreign(v.text, extractor.nlp.lang) for v in prose_views(chunks))
            if judged:
                files[str(path.relative_to(folder))] = {"chunks": len(chunks), "foreign": judged}
            texts.append(chunks)
    after = _names(extractor.extract_many(texts))
    with mock.patch.object(extract_module, "foreign", lambda text, language: False):
        before = _names(extractor.extract_many(texts))
    report = {"files": len(texts), "chunks": sum(len(t) for t in texts),
              "foreign_chunks": sum(f["foreign"] for f in files.values()), "files_with_foreign": files,
              "entities": {"before": len(before), "after": len(after)},
              "top_before": before.most_common(10), "top_after": after.most_common(10)}
    print(json.dumps({k: v for k, v in report.items() if k != "files_with_foreign"}, ensure_ascii=False))
    if args.out:
        args.out.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
