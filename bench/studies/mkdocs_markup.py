# One-off study, as run at the commit that added it (2026-11-28, stop 46); not maintained.
"""MkDocs pages (pymdownx blocks and snippets, FastAPI's code includes, Material's icons, attribute
lists, heading anchors), HTML comments and addresses too long to read, with and without the rewrite.

For each folder, every Markdown file is read twice: as shipped, and with the three rewrites of this
stop switched off (the MkDocs dialect, ``blank_html_comments``, ``shorten_long_urls``). Both readings
are chunked (the shipped chunker) and extracted (the shipped spaCy extractor). Reported per folder:
files that read differently, chunks, lines of such markup left in chunk text outside code, chunks
mostly made of runs of 200+ characters without a space (base64 in a link), entities and the names
that hold markup or a base64-like run.

    python bench/studies/mkdocs_markup.py DIR [DIR ...] --out bench/results/mkdocs_markup_s46.json
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from site_markup import FENCED, study_setup  # noqa: E402

from graphrag.ingest import load as load_module  # noqa: E402
from graphrag.ingest import sitegen  # noqa: E402
from graphrag.ingest.load import LoadError, discover, load_file  # noqa: E402
from graphrag.models import Document  # noqa: E402

MARKUP = re.compile(r"^[ \t]*(?:/{3,}|\{\*|;?--8<--)|:(?:material|octicons|fontawesome|simple)-[\w-]+:|<!--|"
                    r"^[ \t]*#{1,6}[ \t].*\{[ \t]*#[\w-]+[ \t]*\}[ \t]*$|^[ \t]*\{:?[ \t]*\.[\w-][^{}]*\}[ \t]*$", re.M)
OPAQUE = re.compile(r"\S{200,}")
ODD_NAME = re.compile(r"[{}<>|]|//|:[\w-]+:|(?=[\w+/=]*[+/])(?=[\w+/=]*\d)[\w+/=]{16,}")  # markup, base64


def _read(found: list[Any], rewrite: bool) -> tuple[dict[str, list[str]], int]:
    """Each file's documents' texts, read with or without this stop's rewrites; and the files with no text."""
    saved = sitegen._mkdocs_line, load_module.blank_html_comments, load_module.shorten_long_urls
    if not rewrite:
        sitegen._mkdocs_line = lambda line: False  # type: ignore[assignment]
        load_module.blank_html_comments = lambda text: text  # type: ignore[assignment]
        load_module.shorten_long_urls = lambda text: text  # type: ignore[assignment]
    texts: dict[str, list[str]] = {}
    empty = 0
    try:
        for f in found:
            try:
                texts[str(f.path)] = [d.text for d in load_file(f, 10_000_000)]
            except LoadError:
                empty += 1
    finally:
        sitegen._mkdocs_line, load_module.blank_html_comments, load_module.shorten_long_urls = saved  # type: ignore[assignment]
    return texts, empty


def main() -> None:
    args, chunker, extractor = study_setup(__doc__)
    report: dict[str, Any] = {}
    for folder in args.folders:
        found, _ = discover([folder], {"md", "mdx"})
        sides: dict[str, Any] = {}
        before, empty_before = _read(found, rewrite=False)
        after, empty_after = _read(found, rewrite=True)
        changed = [k for k in after if before.get(k) != after[k]] + [k for k in before if k not in after]
        for side, texts, empty in (("before", before, empty_before), ("after", after, empty_after)):
            chunks = []
            for k in changed:
                for text in texts.get(k, []):
                    doc = Document(source=k, title="", text=text, kind="markdown")
                    chunks.append([c.text for c in chunker.chunk(doc)])
            flat = [c for d in chunks for c in d]
            outside = [FENCED.sub("", c) for c in flat]
            names = {e.name for x in extractor.extract_many(chunks) for e in x.entities.values()} if chunks else set()
            odd = sorted(n for n in names if ODD_NAME.search(n))
            sides[side] = {"no_text": empty, "chunks": len(flat),
                           "markup_left": sum(len(MARKUP.findall(t)) for t in outside),
                           "opaque_chunks": sum(1 for t in outside
                                                if sum(map(len, OPAQUE.findall(t))) > len(t.strip()) / 2),
                           "entities": len(names), "odd_names": len(odd), "odd_sample": [n[:60] for n in odd[:15]]}
        report[folder.name] = {"files": len(found), "changed": len(changed), **sides}
        print(folder.name, json.dumps(report[folder.name], indent=1), flush=True)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
