"""Pure ranking functions: weighted reciprocal-rank fusion, MMR, rules, boost mode, budgets."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphrag.search.config import Rule


@dataclass(slots=True)
class Candidate:
    """A chunk found by one or more legs, with what each leg said about it."""

    chunk_id: str
    legs: dict[str, dict[str, Any]] = field(default_factory=dict)  # leg -> {"rank", "score", ...}
    score: float = 0.0
    row: dict[str, Any] = field(default_factory=dict)  # chunk + document columns
    embedding: np.ndarray | None = None


def rrf(rankings: Mapping[str, Sequence[tuple[str, float, dict[str, Any]]]], weights: Mapping[str, float],
        k: int = 60) -> list[Candidate]:
    """Weighted reciprocal-rank fusion: score = sum over legs of weight / (k + rank), rank starting at 1.

    ``rankings`` maps a leg to its ordered hits ``(chunk_id, leg_score, extra)``.
    """
    fused = _candidates(rankings)
    for cand in fused.values():
        cand.score = sum(weights.get(leg, 1.0) / (k + info["rank"]) for leg, info in cand.legs.items())
    return _ordered(fused)


def convex(rankings: Mapping[str, Sequence[tuple[str, float, dict[str, Any]]]], weights: Mapping[str, float],
           completed: Mapping[str, Mapping[str, float]] | None = None) -> list[Candidate]:
    """Convex combination of normalised scores: score = sum over legs of weight x score / leg's best score.

    Each leg's scores are scaled by the best score it returned, with 0 as the floor (theoretical
    min-max, as in Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval", 2023). A
    candidate that a leg did not return counts with the score that leg would have given it when the
    router could compute it (``completed``: the vector similarity and the BM25 score of candidates
    other legs found), else with 0. Unlike RRF this keeps how far apart the hits are, and a hit one
    leg ranks 60th still gets that leg's real evidence instead of nothing.
    """
    fused = _candidates(rankings)
    for leg, hits in rankings.items():
        best = max((float(score) for _, score, _ in hits), default=0.0)
        if best <= 0:
            continue
        weight = weights.get(leg, 1.0)
        filled = (completed or {}).get(leg, {})
        for cand in fused.values():
            info = cand.legs.get(leg)
            score = info["score"] if info is not None else filled.get(cand.chunk_id, 0.0)
            cand.score += weight * min(max(score, 0.0) / best, 1.0)
    return _ordered(fused)


def _candidates(rankings: Mapping[str, Sequence[tuple[str, float, dict[str, Any]]]]) -> dict[str, Candidate]:
    """Every chunk any leg returned, with each leg's rank, score and extras (the hit's provenance)."""
    fused: dict[str, Candidate] = {}
    for leg, hits in rankings.items():
        for rank, (chunk_id, score, extra) in enumerate(hits, start=1):
            cand = fused.get(chunk_id)
            if cand is None:  # not setdefault: that would build a Candidate for every hit
                cand = fused[chunk_id] = Candidate(chunk_id)
            cand.legs[leg] = {"rank": rank, "score": float(score), **extra}
    return fused


def _ordered(fused: Mapping[str, Candidate]) -> list[Candidate]:
    return sorted(fused.values(), key=lambda c: (-c.score, c.chunk_id))


def mmr(candidates: Sequence[Candidate], query: np.ndarray, lam: float, limit: int) -> list[Candidate]:
    """Maximal marginal relevance: trade relevance (lambda) against similarity to what is already picked.

    Relevance is the fused score scaled to [0, 1]; candidates without an embedding keep their order.
    """
    pool = [c for c in candidates if c.embedding is not None]
    if not pool:
        return list(candidates[:limit])
    top = max(c.score for c in pool) or 1.0
    chosen: list[Candidate] = []
    while pool and len(chosen) < limit:
        best, best_value = None, -np.inf
        for cand in pool:
            redundancy = max((float(np.dot(cand.embedding, c.embedding)) for c in chosen), default=0.0)  # type: ignore[arg-type]
            value = lam * (cand.score / top) - (1 - lam) * redundancy
            if value > best_value:
                best, best_value = cand, value
        assert best is not None
        chosen.append(best)
        pool.remove(best)
    return chosen


def _field(row: Mapping[str, Any], name: str) -> Any:
    meta = {**(row.get("document_metadata") or {}), **(row.get("metadata") or {})}
    if name in ("source", "title", "collection"):
        return row.get(name)
    if name == "tags":
        return row.get("tags") or []
    return meta.get(name)


def apply_rules(candidates: list[Candidate], rules: Sequence[Rule]) -> list[Candidate]:
    """Multiply scores by rule weights, then order (``sort`` rules break ties after weighting)."""
    for cand in candidates:
        for rule in rules:
            value = _field(cand.row, rule.field)
            if rule.kind == "contains" and rule.value is not None and value is not None:
                hit = rule.value in value if isinstance(value, list) else rule.value.lower() in str(value).lower()
                if hit:
                    cand.score *= rule.weight
            elif rule.kind == "priority" and value is not None and str(value) in rule.values:
                # The first listed value gets the full weight, later ones progressively less.
                position = rule.values.index(str(value))
                cand.score *= 1 + (rule.weight - 1) * (len(rule.values) - position) / len(rule.values)
    ordered = sorted(candidates, key=lambda c: -c.score)
    for rule in reversed([r for r in rules if r.kind == "sort"]):
        ordered.sort(key=functools.partial(_rule_key, rule), reverse=rule.descending)
        ordered.sort(key=lambda c: -round(c.score, 12))
    return ordered


def _rule_key(rule: Rule, cand: Candidate) -> tuple[int, Any]:
    return _sort_key(_field(cand.row, rule.field))


def _sort_key(value: Any) -> tuple[int, Any]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (1, float(value))
    return (0, str(value) if value is not None else "")


def boost(candidates: list[Candidate], factor: float, metadata_terms: Sequence[str] = ()) -> list[Candidate]:
    """Keyword-confirmation mode: the vector order, multiplied by ``factor`` for each confirmation
    (found by the keyword leg; a query term in the metadata)."""
    for cand in candidates:
        cand.score = cand.legs.get("vector", {}).get("score", 0.0)
        if "keyword" in cand.legs:
            cand.score *= factor
        meta_text = " ".join(str(v) for v in (cand.row.get("metadata") or {}).values()).lower()
        if metadata_terms and any(t in meta_text for t in metadata_terms):
            cand.score *= factor
    return sorted(candidates, key=lambda c: -c.score)


def collapse_documents(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Keep the best-ranked chunk of each document."""
    seen: set[str] = set()
    out = []
    for cand in candidates:
        doc = str(cand.row.get("document_id"))
        if doc not in seen:
            seen.add(doc)
            out.append(cand)
    return out


def within_budget(candidates: Sequence[Candidate], budget: int) -> list[Candidate]:
    """Stop adding hits once their token counts would pass ``budget`` (the first hit always fits)."""
    out: list[Candidate] = []
    used = 0
    for cand in candidates:
        tokens = int(cand.row.get("token_count") or 0)
        if out and used + tokens > budget:
            break
        out.append(cand)
        used += tokens
    return out
