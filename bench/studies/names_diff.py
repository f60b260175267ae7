# One-off study, as run at the commit that added it (2026-11-28, stop 47); not maintained.
"""What two checkouts' loaders, chunker and extractor make of the same Markdown folders.

``dump`` reads every Markdown (and MDX) file of each folder with the checkout it runs from (run it
with that checkout's ``bench/studies`` on the path: ``cd OTHER && python /path/names_diff.py dump``),
chunks it (the ``markdown`` strategy, the model's tokenizer) and extracts it (the shipped spaCy
extractor), and writes each file's chunks and entity names with labels. ``compare`` reports, per
folder: chunks, lines of admonition and content-tab markup left in chunk text outside code blocks
(``!!! note``, ``??? tip``, ``=== "pip"``), code blocks, distinct entity names, and the names found
only on one side, most mentioned first.

    cd BEFORE && python /work/main/bench/studies/names_diff.py dump --out before.json DIR...
    python bench/studies/names_diff.py dump --out after.json DIR...
    python bench/studies/names_diff.py compare before.json after.json --out bench/results/names_diff_s47.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

FENCED = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\1[ \t]*$", re.M | re.S)
CONTAINER = re.compile(r'^[ \t]*(?:(?:!!!|\?\?\?\+?)[ \t]?[\w-]+|===[+!]?[ \t]+")', re.M)


def dump(folders: list[Path], out: Path) -> None:
    """Each file's chunks and entity names, as the checkout on ``sys.path`` reads them."""
    sys.path.insert(0, os.getcwd())
    sys.path.insert(0, str(Path.cwd() / "bench" / "studies"))
    from site_markup import _chunker  # the checkout's own

    from graphrag.config import Settings
    from graphrag.ingest.extract import SpacyExtractor
    from graphrag.ingest.extractors import extract_options
    from graphrag.ingest.load import LoadError, discover, load_file

    settings = Settings()
    chunker = _chunker(settings)
    extractor = SpacyExtractor(settings.spacy_model, extract_options(settings))
    report: dict[str, Any] = {}
    for folder in folders:
        found, _ = discover([folder], {"md", "mdx"})
        keys: list[str] = []
        texts: list[list[str]] = []
        for f in found:
            try:
                for doc in load_file(f, 10_000_000):
                    keys.append(str(f.path))
                    texts.append([c.text for c in chunker.chunk(doc)])
            except LoadError:
                continue
        extractions = extractor.extract_many(texts)
        report[folder.name] = [{"file": k, "chunks": t, "names": sorted({(e.name, e.label) for e in x.entities.values()})}
                               for k, t, x in zip(keys, texts, extractions, strict=True)]
        print(folder.name, len(keys), "documents", sum(map(len, texts)), "chunks", flush=True)
    out.write_text(json.dumps(report))


def _side(docs: list[dict[str, Any]]) -> tuple[dict[str, int], Counter[str]]:
    chunks = [c for d in docs for c in d["chunks"]]
    outside = [FENCED.sub("", c) for c in chunks]
    names: Counter[str] = Counter(n for d in docs for n, _ in {(n, label) for n, label in d["names"]})
    return {"documents": len(docs), "chunks": len(chunks),
            "container_lines_outside_code": sum(len(CONTAINER.findall(t)) for t in outside),
            "code_blocks": sum(len(FENCED.findall(c)) for c in chunks), "names": len(names)}, names


def compare(before: Path, after: Path, out: Path | None) -> None:
    """Per folder: the two sides' figures and the names found on one side only."""
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    report: dict[str, Any] = {}
    for folder in a:
        (fa, na), (fb, nb) = _side(a[folder]), _side(b.get(folder, []))
        report[folder] = {"before": fa, "after": fb,
                          "names_only_before": [[n, c] for n, c in na.most_common() if n not in nb],
                          "names_only_after": [[n, c] for n, c in nb.most_common() if n not in na]}
        print(folder, json.dumps({k: v for k, v in report[folder].items()}, ensure_ascii=False)[:2000], flush=True)
    if out:
        out.write_text(json.dumps(report, indent=1, ensure_ascii=False) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("dump")
    d.add_argument("folders", nargs="+", type=Path)
    d.add_argument("--out", type=Path, required=True)
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    c.add_argument("--out", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        dump(args.folders, args.out)
    else:
        compare(args.before, args.after, args.out)


if __name__ == "__main__":
    main()
