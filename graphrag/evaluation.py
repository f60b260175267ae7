"""``graphrag eval DIR``: retrieval quality on a BEIR-format folder, scored by ir-measures as trec_eval does.

Each corpus record is one document whose source is its ``_id`` (title and text both indexed); a
result's document maps back to that ``_id``. Metrics are document-level: a document's rank is that
of its best chunk. One split's judgements are read (``qrels/<split>.tsv``, ``test`` by default, as
BEIR does), and every query they judge is evaluated. The measures are ir-measures' ``nDCG@10``
(trec_eval's ``ndcg_cut_10``: linear gain), ``R@2/5/10`` and ``RR@10``; a judgement below 1 is not
relevant, and a query with no relevant document or no hit scores 0, as in trec_eval and BEIR.
"""

from __future__ import annotations

import csv
import json
import os
import re
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
from ir_measures import RR, R, nDCG
from tqdm import tqdm

from graphrag.errors import InvalidInput
from graphrag.models import Document, Hit

# The contract's names for ir-measures' measures.
MEASURES: dict[str, Any] = {"ndcg@10": nDCG @ 10, "recall@2": R @ 2, "recall@5": R @ 5, "recall@10": R @ 10,
                            "mrr@10": RR @ 10}
# Every run retrieves at least this many documents per query, whatever -k says.
MAX_CUTOFF = 10
MAX_DEPTH = 100
_SPLIT = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")

Qrels = dict[str, dict[str, int]]
Rankings = Mapping[str, Sequence[str]]


def splits(folder: Path) -> list[str]:
    """The splits a BEIR folder judges: the names of its ``qrels/*.tsv`` files."""
    return sorted(p.stem for p in (folder / "qrels").glob("*.tsv"))


def read_beir(folder: Path, split: str = "test") -> tuple[list[Document], dict[str, str], Qrels]:
    """Documents, queries (id -> text, only those the split judges) and qrels (query id -> {doc id: grade})
    of one split of a BEIR folder. Every judgement is kept, grade 0 included, as BEIR's loader does."""
    corpus, queries_file, qrels_dir = folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels"
    for path in (corpus, queries_file, qrels_dir):
        if not path.exists():
            raise InvalidInput(f"{folder} is not a BEIR folder: {path.name} is missing")
    available = splits(folder)
    if not _SPLIT.fullmatch(split) or split not in available:
        raise InvalidInput(f"{folder.name} has no qrels/{split}.tsv; splits available: "
                           f"{', '.join(available) or 'none'} (choose one with --split)")
    qrels = _read_qrels(qrels_dir / f"{split}.tsv")
    if not qrels:
        raise InvalidInput(f"{folder.name}: qrels/{split}.tsv judges no query")
    queries: dict[str, str] = {}
    for n, rec in _jsonl(queries_file):
        try:
            queries[str(rec["_id"])] = str(rec["text"])
        except (KeyError, TypeError) as exc:
            raise InvalidInput(f"{queries_file.name} line {n}: not a BEIR query ({exc})") from None
    unknown = [q for q in qrels if q not in queries]
    if unknown:
        raise InvalidInput(f"qrels/{split}.tsv judges {len(unknown)} queries missing from {queries_file.name} "
                           f"(first: {unknown[0]!r})")
    docs = []
    for n, rec in _jsonl(corpus):
        try:
            doc_id, title, text = str(rec["_id"]), str(rec.get("title") or ""), str(rec.get("text") or "")
        except (KeyError, TypeError, AttributeError) as exc:
            raise InvalidInput(f"{corpus.name} line {n}: not a BEIR record ({exc})") from None
        body = f"{title}\n\n{text}" if title else text
        docs.append(Document(source=doc_id, title=title or doc_id, text=body, kind="record"))
    return docs, {q: t for q, t in queries.items() if q in qrels}, qrels


def _jsonl(path: Path) -> Any:
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle, 1):
            if line.strip():
                try:
                    yield n, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InvalidInput(f"{path.name} line {n}: not JSON ({exc})") from None


def _read_qrels(path: Path) -> Qrels:
    qrels: Qrels = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for n, row in enumerate(csv.reader(handle, delimiter="\t"), 1):
            if not row or (n == 1 and row[0] == "query-id"):
                continue
            try:
                if len(row) != 3:
                    raise ValueError(f"{len(row)} columns")
                qrels.setdefault(row[0], {})[row[1]] = int(row[2])
            except ValueError as exc:
                raise InvalidInput(f"qrels/{path.name} line {n}: expected query-id, corpus-id, integer score "
                                   f"({exc})") from None
    return qrels


def document_ranking(hits: list[Hit]) -> list[str]:
    """Document sources in order of their best chunk."""
    return list(dict.fromkeys(hit.source for hit in hits))


def run_of(rankings: Rankings) -> dict[str, dict[str, float]]:
    """The run as ir-measures and trec_eval read it: each document scored by its rank (``depth - rank + 1``).

    trec_eval orders a run by score, not by the rank column, and breaks ties by document id; fused
    scores can tie (and a rerank or MMR reorders them), so the score written is derived from graphrag's
    own order, which every tool then reads back unchanged."""
    return {qid: {doc: float(len(ranked) - i) for i, doc in enumerate(ranked)} for qid, ranked in rankings.items()}


def score(rankings: Rankings, qrels: Qrels) -> dict[str, float]:
    """The contract's metrics (unrounded), averaged over every query of ``qrels``; a query without a
    ranking scores 0. Computed by ir-measures: nDCG@10 and R@k by trec_eval (pytrec_eval), RR@10 by the
    MS MARCO evaluator."""
    values = ir_measures.calc_aggregate(list(MEASURES.values()), qrels, run_of(rankings))
    return {name: float(values[measure]) for name, measure in MEASURES.items()}


def run_file_path(path: Path, mode: str) -> Path:
    """Where ``--run-file PATH`` puts a mode's run: PATH with the mode before its extension
    (``runs/scifact.trec`` -> ``runs/scifact.hybrid.trec``)."""
    return path.with_name(f"{path.stem}.{mode}{path.suffix}")


def write_run(path: Path, rankings: Rankings, tag: str) -> None:
    """Write a TREC run file (``qid Q0 docid rank score tag``), whole or not at all."""
    _check_trec_ids([*rankings, *(d for ranked in rankings.values() for d in ranked)])
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as handle:
            for qid, scores in run_of(rankings).items():
                for rank, (doc, value) in enumerate(scores.items(), 1):
                    handle.write(f"{qid} Q0 {doc} {rank} {value:g} {tag}\n")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _check_trec_ids(ids: Sequence[str]) -> None:
    bad = next((i for i in ids if not i or any(c.isspace() for c in i)), None)
    if bad is not None:
        raise InvalidInput(f"id {bad!r} is empty or holds white space, which a TREC run file cannot")


async def run_eval(runtime: Any, folder: Path, *, collection: str | None = None, modes: list[str] | None = None,
                   k: int = MAX_CUTOFF, split: str = "test", run_file: Path | None = None, progress: bool = False,
                   limit_queries: int | None = None, fusion: str | None = None, extended: bool = False,
                   expand: bool = False) -> dict[str, Any]:
    """Ingest the corpus (a no-op when unchanged), run every judged query of ``split`` in each mode,
    return the contract JSON.

    ``k`` is the depth: documents retrieved per query (at least 10, the largest metric cutoff; more
    only matters for the run files). ``run_file`` writes each mode's ranking as a TREC run file
    (see :func:`run_file_path`). ``fusion`` ("convex" or "rrf") overrides the recipes' fusion, to
    compare the two on the same set. ``extended`` ingests with extractive representations and searches
    with ``extended: true``; ``expand`` searches with query expansion."""
    folder = folder.expanduser().resolve()
    if not folder.is_dir():
        raise InvalidInput(f"{folder} is not a folder")
    if not MAX_CUTOFF <= k <= MAX_DEPTH:
        raise InvalidInput(f"-k is the depth retrieved per query: from {MAX_CUTOFF} (the largest metric cutoff) "
                           f"to {MAX_DEPTH}")
    if run_file is not None:
        run_file = run_file.expanduser().resolve()
        if not run_file.parent.is_dir():
            raise InvalidInput(f"--run-file: folder {run_file.parent} does not exist")
    docs, queries, qrels = read_beir(folder, split)
    if run_file is not None:
        _check_trec_ids([*queries, *(d.source for d in docs)])
    collection = collection or folder.name
    modes = modes or ["auto"]
    router = await runtime.router()
    for mode in modes:
        router.build_config(mode, fusion=fusion)  # an unknown mode or fusion fails before any work
    ingestor = await runtime.ingestor()
    report = await ingestor.ingest_documents([(d, f"{folder.name}:{d.source}") for d in docs],
                                             collection=collection, progress=progress,
                                             extended_mode="extractive" if extended else None)
    if report.failed:
        raise InvalidInput(f"{len(report.failed)} corpus records failed to ingest: {report.failed[0]['error']}")
    items = list(queries.items())[:limit_queries] if limit_queries else list(queries.items())
    judged = {qid: qrels[qid] for qid, _ in items}
    out: dict[str, Any] = {"dataset": folder.name, "documents": len(docs), "queries": len(items), "modes": {}}
    for mode in modes:
        rankings: dict[str, list[str]] = {}
        latencies: list[float] = []
        bar = tqdm(items, desc=f"eval {mode}", unit="q", disable=not progress, file=sys.stderr)
        for query_id, text in bar:
            t0 = time.perf_counter()
            result = await router.search(text[:2000], mode=mode, limit=k, collections=[collection], collapse=True,
                                         fusion=fusion, extended=extended, expand=expand or None)
            latencies.append((time.perf_counter() - t0) * 1000)
            rankings[query_id] = document_ranking(result.hits)
        bar.close()
        if run_file is not None:
            write_run(run_file_path(run_file, mode), rankings, f"graphrag-{mode}" + (f"-{fusion}" if fusion else ""))
        out["modes"][mode] = {
            **{name: round(value, 4) for name, value in score(rankings, judged).items()},
            "latency_ms": {"p50": round(float(np.percentile(latencies, 50)), 2),
                           "p95": round(float(np.percentile(latencies, 95)), 2)},
        }
    return out
