# One-off study, as run at commit 5bccdf8 (2026-11-27); not maintained: check out that commit to run it.
"""Which entities change label with the title-case rule (a multi-word NER name the document also
writes in lower case is a ``CONCEPT``), on the first records of a BEIR corpus.

Runs the extractor twice over the same records, with the rule and with it switched off, and prints
every entity whose label differs, to be checked by hand.

    python bench/studies/title_case_labels.py ../shared/eval/scifact --limit 1000
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

from graphrag.config import Settings
from graphrag.ingest.extract import SpacyExtractor
from graphrag.ingest.extractors import extract_options


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a BEIR folder with corpus.jsonl")
    parser.add_argument("--limit", type=int, default=1000)
    args = parser.parse_args()
    settings = Settings()
    extractor = SpacyExtractor(settings.spacy_model, extract_options(settings))
    docs = []
    with (args.corpus / "corpus.jsonl").open() as lines:
        for line in itertools.islice(lines, args.limit):
            record = json.loads(line)
            docs.append([f"{record.get('title', '')}\n\n{record['text']}"])
    with_rule = extractor.extract_many(docs)
    extractor._written_lower = lambda state, keep: set()  # type: ignore[method-assign]
    without = extractor.extract_many(docs)
    changed = [(e.name, old.entities[key].label, e.label)
               for old, new in zip(without, with_rule, strict=True)
               for key, e in new.entities.items() if old.entities[key].label != e.label]
    print(f"{len(changed)} labels changed of {sum(len(x.entities) for x in with_rule)} entities")
    for name, before, after in changed:
        print(f"{name!r}: {before} -> {after}")


if __name__ == "__main__":
    main()
