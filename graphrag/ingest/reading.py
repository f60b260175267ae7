"""The load stage of a folder ingest, and its dry run: files read into documents, and the rules that
leave some out (partials read in the pages that include them, pages that only show other pages).

:func:`read_documents` is the ingest's first stage (no model and no store is needed);
:func:`plan_paths` runs the walk and this stage alone, for ``graphrag ingest --dry-run``.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from graphrag.config import Settings
from graphrag.errors import InvalidInput
from graphrag.ingest.load import Found, LoadError, NoText, discover, is_partial, load_file
from graphrag.ingest.report import IngestReport
from graphrag.models import Document


async def read_documents(found: list[Found], settings: Settings, report: IngestReport,
                         progress: bool = False) -> list[tuple[Document, str]]:
    """Each found file read into its documents (with the path it came from); what cannot be read or
    is not a page goes to ``report.skipped`` or ``report.failed``."""
    t0 = time.perf_counter()
    max_bytes = int(settings.max_file_mb * 1024 * 1024)
    docs: list[tuple[Document, str]] = []
    included: set[Path] = set()  # files some page's include directives read
    shows: dict[Path, list[Path]] = {}  # pages with no text beside the files they include
    bar = tqdm(total=len(found), desc="load", unit="file", disable=not progress, file=sys.stderr)
    for f in found:
        try:
            loaded = await asyncio.to_thread(load_file, f, max_bytes, settings.read_includes, included, shows)
            docs.extend((d, str(f.path)) for d in loaded)
        except NoText as exc:  # a page that only includes another: nothing to index, nothing wrong
            report.skipped.append({"path": str(f.path), "reason": exc.message.removeprefix(f"{f.path.name}: ")})
        except LoadError as exc:
            report.failed.append({"path": str(f.path), "error": exc.message})
        except Exception as exc:  # noqa: BLE001 - a parser bug in one file must not stop the rest
            report.failed.append({"path": str(f.path), "error": f"{type(exc).__name__}: {exc}"[:300]})
        bar.update(1)
    bar.close()
    report.included += len(included)
    # A partial (a "_" file) that pages include is read as part of them, as its site shows it, not
    # again as a page of its own.
    partials = {str(f.path) for f in found if f.root is not None and f.path.resolve() in included
                and is_partial(f.path.resolve(), f.root)}
    if partials:
        docs = [(d, path) for d, path in docs if path not in partials]
        report.skipped.extend({"path": p, "reason": "a partial, read in the pages that include it"}
                              for p in sorted(partials))
    # A page that only shows other pages of this ingest (Sphinx's docs/changes.rst, which includes
    # ../CHANGES.rst) would give their text twice: they are read as themselves, the page is skipped.
    pages = {f.path.resolve(): str(f.path) for f in found} if shows else {}
    read = {path for _, path in docs}
    candidates = {pages[page]: [pages[p] for p in files] for page, files in shows.items()
                  if all(p != page and pages.get(p) in read for p in files)}
    # not one that shows another such page (two pages that include each other would both go)
    wrappers = {page: files for page, files in candidates.items() if not any(f in candidates for f in files)}
    if wrappers:
        docs = [(d, path) for d, path in docs if path not in wrappers]
        report.skipped.extend({"path": page, "reason": f"shows only {', '.join(files)}, ingested as itself"}
                              for page, files in sorted(wrappers.items()))
    report.add_time("load", time.perf_counter() - t0)
    return docs


async def plan_paths(paths: Sequence[Path], settings: Settings, file_types: set[str] | None = None,
                     progress: bool = False) -> tuple[IngestReport, list[tuple[Document, str]]]:
    """What an ingest of ``paths`` would read, without a model or a store: the report's ``files``,
    ``skipped``, ``failed`` and ``included``, and the documents. A path that does not exist is
    :class:`InvalidInput`, as for the ingest."""
    start = time.perf_counter()
    roots = [p.expanduser().resolve() for p in paths]
    missing = [str(g) for g, r in zip(paths, roots, strict=True) if not r.exists()]
    if missing:
        raise InvalidInput("no such file or directory: " + ", ".join(missing))
    report = IngestReport()
    found, skipped = discover(roots, file_types, settings.read_ignore_files)
    report.files = len(found)
    report.skipped.extend(skipped)
    docs = await read_documents(found, settings, report, progress)
    report.seconds = time.perf_counter() - start
    return report, docs
