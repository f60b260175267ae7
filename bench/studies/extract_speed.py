# One-off study, as run at commit 500c7d4 (2026-11-23); not maintained: check out that commit to run it.
"""Extraction speed, this tree against a git revision, interleaved in one process (same load for both).

Chunks a folder with the ingestion chunker, then times ``extract_many`` of the current extractor
(with its boilerplate gate) and of ``graphrag/ingest/extract.py`` as it was at ``--baseline``
(default settings of each), alternating runs and keeping each one's best.

    python bench/extract_speed.py --corpus /work/techcorpus --baseline dc7815f --repeat 3
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from common import REPO, write_result  # noqa: E402

from graphrag.config import Settings  # noqa: E402
from graphrag.ingest.chunk import Chunker, ChunkOptions, HFTokenCounter  # noqa: E402
from graphrag.ingest.embed import Embedder  # noqa: E402
from graphrag.ingest.extract import SpacyExtractor  # noqa: E402
from graphrag.ingest.extractors import build_extractor, extract_options  # noqa: E402
from graphrag.ingest.load import discover, load_file  # noqa: E402


def baseline_module(rev: str) -> object:
    source = subprocess.run(["git", "show", f"{rev}:graphrag/ingest/extract.py"], cwd=REPO, capture_output=True,
                            text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / "baseline_extract.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("baseline_extract", path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["baseline_extract"] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/techcorpus"))
    parser.add_argument("--baseline", default="main")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--name", default="techcorpus")
    args = parser.parse_args()
    settings = Settings()
    embedder = Embedder(settings.embedding_model_path, batch_size=8, dim=settings.embedding_dim)
    chunker = Chunker(HFTokenCounter(embedder.tokenizer, embedder.max_seq_length),
                      ChunkOptions(budget=settings.chunk_tokens, overlap_tokens=settings.chunk_overlap_tokens))
    found, _ = discover([args.corpus])
    texts = [[c.text for c in chunker.chunk(d)] for f in found for d in load_file(f, 1 << 30)]
    chunks = sum(len(t) for t in texts)
    old = baseline_module(args.baseline)
    extractors = {
        "baseline": old.SpacyExtractor(settings.spacy_model, old.ExtractOptions(
            drop_labels=frozenset(settings.entity_drop_labels), noun_phrases=settings.noun_phrases)),
        "current": build_extractor(settings, SpacyExtractor(settings.spacy_model, extract_options(settings))),
    }
    best = {name: float("inf") for name in extractors}
    for _ in range(args.repeat):
        for name, extractor in extractors.items():
            t = time.perf_counter()
            extractor.extract_many(texts)
            best[name] = min(best[name], time.perf_counter() - t)
    result = {"corpus": str(args.corpus), "documents": len(texts), "chunks": chunks, "baseline": args.baseline,
              "repeat": args.repeat, "seconds": {k: round(v, 2) for k, v in best.items()},
              "chunks_per_s": {k: round(chunks / v, 1) for k, v in best.items()},
              "load_average": [round(x, 2) for x in os.getloadavg()]}
    write_result(f"extract_speed_{args.name}.json", result)
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
