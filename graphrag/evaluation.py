"""``graphrag eval DIR``: retrieval quality on a BEIR-format folder (corpus.jsonl, queries.jsonl, qrels/*.tsv).

Each corpus record is one document whose source is its ``_id`` (title and text both indexed); a
result's document maps back to that ``_id``. Metrics are document-level: a document's rank is that
of its best chunk. Recall@k is the share of a query's relevant documents in the top k, averaged.
"""

from __future__ import annotations

import csv
import json
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from graphrag.errors import InvalidInput
from graphrag.models import Document

K_VALUES = (2, 5, 10)


def read_beir(folder: Path) -> tuple[list[Document], dict[str, str], dict[str, dict[str, int]]]:
    """Documents, queries (id -> text) and qrels (query id -> {doc id: grade}) of a BEIR folder."""
    corpus, queries_file, qrels_dir = folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels"
    for path in (corpus, queries_file, qrels_dir):
        if not path.exists():
            raise InvalidInput(f"{folder} is not a BEIR folder: {path.name} is missing")
    docs = []
    with corpus.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                doc_id, title, text = str(rec["_id"]), str(rec.get("title") or ""), str(rec.get("text") or "")
            except (json.JSONDecodeError, KeyError, TypeError) as exc:
                raise InvalidInput(f"{corpus.name} line {n}: not a BEIR record ({exc})") from None
            body = f"{title}\n\n{text}" if title else text
            docs.append(Document(source=doc_id, title=title or doc_id, text=body, kind="record"))
    queries: dict[str, str] = {}
    with queries_file.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                rec = json.loads(line)
                queries[str(rec["_id"])] = str(rec["text"])
    qrels: dict[str, dict[str, int]] = {}
    for tsv in sorted(qrels_dir.glob("*.tsv")):
        with tsv.open(encoding="utf-8") as handle:
            reader = csv.reader(handle, delimiter="\t")
            for row in reader:
                if len(row) < 3 or row[0] == "query-id":
                    continue
                if int(row[2]) > 0:
                    qrels.setdefault(row[0], {})[row[1]] = int(row[2])
    queries = {q: t for q, t in queries.items() if q in qrels}
    if not queries:
        raise InvalidInput(f"{folder}: no query has relevance judgements")
    return docs, queries, qrels


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    dcg = sum((2 ** relevant.get(d, 0) - 1) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum((2 ** g - 1) / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    return len(set(ranked[:k]) & set(relevant)) / len(relevant) if relevant else 0.0


def mrr_at(ranked: list[str], relevant: dict[str, int], k: int = 10) -> float:
    return next((1.0 / (i + 1) for i, d in enumerate(ranked[:k]) if d in relevant), 0.0)


def document_ranking(results: list[dict[str, Any]]) -> list[str]:
    """Document sources in order of their best chunk."""
    seen: list[str] = []
    for hit in results:
        if hit["source"] not in seen:
            seen.append(hit["source"])
    return seen


async def run_eval(runtime: Any, folder: Path, *, collection: str | None = None, modes: list[str] | None = None,
                   k: int = 10, progress: bool = False, limit_queries: int | None = None,
                   fusion: str | None = None) -> dict[str, Any]:
    """Ingest the corpus (a no-op when unchanged), run every query in each mode, return the contract JSON.

    ``fusion`` ("convex" or "rrf") overrides the recipes' fusion, to compare the two on the same set."""
    folder = folder.expanduser().resolve()
    if not folder.is_dir():
        raise InvalidInput(f"{folder} is not a folder")
    if not 1 <= k <= 100:
        raise InvalidInput("-k must be from 1 to 100")
    docs, queries, qrels = read_beir(folder)
    collection = collection or folder.name
    modes = modes or ["auto"]
    ingestor = await runtime.ingestor()
    report = await ingestor.ingest_documents([(d, f"{folder.name}:{d.source}") for d in docs],
                                             collection=collection, progress=progress)
    if report.failed:
        raise InvalidInput(f"{len(report.failed)} corpus records failed to ingest: {report.failed[0]['error']}")
    router = await runtime.router()
    items = list(queries.items())[:limit_queries] if limit_queries else list(queries.items())
    out: dict[str, Any] = {"dataset": folder.name, "documents": len(docs), "queries": len(items), "modes": {}}
    for mode in modes:
        router.build_config(mode, fusion=fusion)  # an unknown mode or fusion fails before any work
        scores: dict[str, list[float]] = {"ndcg@10": [], "recall@2": [], "recall@5": [], "recall@10": [],
                                          "mrr@10": []}
        latencies: list[float] = []
        bar = tqdm(items, desc=f"eval {mode}", unit="q", disable=not progress, file=sys.stderr)
        for query_id, text in bar:
            t0 = time.perf_counter()
            response = await router.search(text[:2000], mode=mode, limit=k, collections=[collection], collapse=True,
                                           fusion=fusion)
            latencies.append((time.perf_counter() - t0) * 1000)
            ranked = document_ranking(response["results"])
            relevant = qrels[query_id]
            scores["ndcg@10"].append(ndcg_at(ranked, relevant, 10))
            for cutoff in K_VALUES:
                scores[f"recall@{cutoff}"].append(recall_at(ranked, relevant, cutoff))
            scores["mrr@10"].append(mrr_at(ranked, relevant, 10))
        bar.close()
        out["modes"][mode] = {
            **{name: round(float(np.mean(values)), 4) for name, values in scores.items()},
            "latency_ms": {"p50": round(float(np.percentile(latencies, 50)), 2),
                           "p95": round(float(np.percentile(latencies, 95)), 2)},
        }
    return out
