# One-off study, as run at commit 41482cd (2026-11-27); not maintained: check out that commit to run it.
"""Sentence spans of the chunker before and after a change: identical output, and the CPU time of
each, over Markdown folders and BEIR corpora.

Imports ``graphrag/ingest/chunk.py`` of two checkouts side by side (each with its own spaCy
pipeline, so both pay the same first-seen vocabulary costs):

    git worktree add /tmp/before bbf9e8f
    python bench/studies/sentence_starts.py --before /tmp/before --md /tmp/md --md /work/techcorpus \\
        ../shared/eval/scifact ../shared/eval/hotpotqa
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def load(root: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, root / "graphrag" / "ingest" / "chunk.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpora", nargs="*", type=Path, help="BEIR folders with corpus.jsonl")
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the older commit")
    parser.add_argument("--md", type=Path, action="append", default=[], help="a folder of Markdown files")
    args = parser.parse_args()
    texts = [f.read_text(errors="replace") for folder in args.md for f in sorted(folder.rglob("*.md"))]
    for corpus in args.corpora:
        with (corpus / "corpus.jsonl").open() as lines:
            texts += [f"{r.get('title', '')}\n\n{r.get('text', '')}" for r in map(json.loads, lines)]
    spans = {}
    for side, root in (("before", args.before), ("after", REPO)):
        module = load(root, f"chunk_{side}")
        start = time.process_time()
        spans[side] = [module.sentence_spans(text) for text in texts]
        print(f"{side}: {time.process_time() - start:.2f} CPU s")
    differ = sum(a != b for a, b in zip(spans["before"], spans["after"], strict=True))
    print(f"{len(texts)} texts, {differ} with other sentence spans")


if __name__ == "__main__":
    main()
