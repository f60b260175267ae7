"""A fingerprint of what the extractor makes of a BEIR corpus: one hash over every document's entity
keys, mentions and relations (with their evidence and predicates), labels left out.

Run it on two checkouts to show that a change leaves extraction as it was (the same hash), or that
it does not; labels are compared by ``bench/graph_quality.py`` and the studies instead.

    python bench/extraction_hash.py ../shared/eval/scifact            # all records
    python bench/extraction_hash.py ../shared/eval/hotpotqa --limit 500
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from graphrag.config import Settings  # noqa: E402
from graphrag.ingest.extract import SpacyExtractor  # noqa: E402
from graphrag.ingest.extractors import extract_options  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a BEIR folder with corpus.jsonl")
    parser.add_argument("--limit", type=int, default=0, help="only the first N records (0: all)")
    args = parser.parse_args()
    settings = Settings()
    extractor = SpacyExtractor(settings.spacy_model, extract_options(settings))
    with (args.corpus / "corpus.jsonl").open() as lines:
        records = [json.loads(line) for line in itertools.islice(lines, args.limit or None)]
    # One chunk a record, its title above its text, as the eval's documents begin.
    docs = [[f"{r.get('title', '')}\n\n{r.get('text', '')}"] for r in records]
    digest = hashlib.sha256()
    for result in extractor.extract_many(docs):
        digest.update(json.dumps([
            sorted(result.entities),
            sorted((str(k), v) for k, v in result.mentions.items()),
            sorted((str(k), sorted(v.chunk_weights.items()), sorted(v.predicates)) for k, v in result.relations.items()),
        ]).encode())
    print(json.dumps({"corpus": str(args.corpus), "records": len(docs), "hash": digest.hexdigest()[:16]}))


if __name__ == "__main__":
    main()
