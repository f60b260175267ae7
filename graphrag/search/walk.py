"""The graph leg's walk and chunk scoring, in Python.

``cypher/graph_leg.cypher`` runs this walk inside Neo4j (one round trip); this module states it in
plain Python so that it can be read, unit-tested, and compared with the statement on a real graph
(tests/test_graph_walk.py). It is personalised PageRank truncated after two steps:

    r = alpha * s + alpha (1 - alpha) * T s + alpha (1 - alpha)^2 * T' (T s)

``s`` are the seeds (linked entities, weights summing to 1). ``T`` moves activation from an entity
to its ``per_first`` strongest neighbours, in proportion to ln(1 + relation weight) times the
neighbour's damping (its IDF, floored: a hub passes on little); ``T'`` does the same from the
``frontier`` most activated entities of the first step to their ``per_next`` strongest neighbours.
An entity's weight for chunk scoring is ``r`` times its damping. A top entity adds weight x focus
to each chunk of its chunk list (its best chunks by :func:`chunk_focus`, kept by the graph writer).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping

#: Floor of an entity's damping: even the most common entity passes on a little.
MIN_DAMPING = 0.05


def idf(mentions: int | None, total_chunks: int) -> float:
    """How rare an entity is among ``total_chunks`` chunks, from 0 (in every chunk) to about 1."""
    return math.log((total_chunks + 1.0) / ((mentions or 1) + 0.5)) / math.log(total_chunks + 1.5)


def damping(mentions: int | None, total_chunks: int) -> float:
    """The share of activation a walk into an entity keeps: its IDF, at least :data:`MIN_DAMPING`."""
    return max(idf(mentions, total_chunks), MIN_DAMPING)


def _step(activation: Mapping[str, float], neighbours: Callable[[str, int], list[tuple[str, float]]],
          damp: Callable[[str], float], per_node: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for node, value in activation.items():
        moves = [(n, math.log1p(w) * damp(n)) for n, w in neighbours(node, per_node)]
        total = sum(t for _, t in moves)
        if total <= 0:
            continue
        for n, t in moves:
            out[n] = out.get(n, 0.0) + value * t / total
    return out


def spread(seeds: Mapping[str, float], neighbours: Callable[[str, int], list[tuple[str, float]]],
           damp: Callable[[str], float], *, alpha: float, per_first: int, per_next: int,
           frontier: int) -> dict[str, float]:
    """Truncated personalised PageRank from ``seeds`` (any positive weights; normalised here).

    ``neighbours(node, k)``: the node's ``k`` strongest neighbours as ``(id, summed relation weight)``,
    strongest first, ties by id; ``damp(node)``: its damping. Returns each reached entity's
    activation ``r``.
    """
    positive = {n: v for n, v in seeds.items() if v > 0}
    total = sum(positive.values())
    if total <= 0:
        return {}
    start = {n: v / total for n, v in positive.items()}
    hop1 = _step(start, neighbours, damp, per_first)
    ahead = dict(sorted(hop1.items(), key=lambda kv: (-kv[1], kv[0]))[:frontier])
    hop2 = _step(ahead, neighbours, damp, per_next)
    rank: dict[str, float] = {}
    for weight, layer in ((alpha, start), (alpha * (1 - alpha), hop1), (alpha * (1 - alpha) ** 2, hop2)):
        for n, v in layer.items():
            rank[n] = rank.get(n, 0.0) + weight * v
    return rank


def top_entities(rank: Mapping[str, float], damp: Callable[[str], float], k: int) -> list[tuple[str, float]]:
    """The ``k`` entities of highest activation times damping, with that weight, best first."""
    weighted = [(n, r * damp(n)) for n, r in rank.items()]
    return sorted(weighted, key=lambda kv: (-kv[1], kv[0]))[:k]


def chunk_focus(count: int | None, degree: int) -> float:
    """How much a chunk that mentions an entity ``count`` times, and ``degree`` entities in all, is
    about that entity: more for repeated mentions, less for chunks that mention everything."""
    return (1 + math.log(max(count or 1, 1))) / math.sqrt(max(degree, 1))


def chunk_list(mentions: Iterable[tuple[str, int | None, int]], keep: int) -> list[tuple[str, float]]:
    """An entity's chunk list from its ``(chunk id, count, degree)`` mentions: the ``keep`` chunks of
    highest focus, best first (ties by chunk id), as the graph writer stores it."""
    scored = [(chunk, chunk_focus(count, degree)) for chunk, count, degree in mentions]
    return sorted(scored, key=lambda kv: (-kv[1], kv[0]))[:keep]


def chunk_part(weight: float, count: int | None, degree: int, names_document: bool, title_boost: float) -> float:
    """What one entity of weight ``weight`` adds to a chunk that mentions it ``count`` times and
    mentions ``degree`` entities in all (:func:`chunk_focus`), ``title_boost`` times more when the
    entity names the chunk's document."""
    return weight * chunk_focus(count, degree) * (title_boost if names_document else 1.0)
