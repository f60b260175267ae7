"""Hierarchical community detection over a weighted entity graph: recursive Leiden.

Level 0 is Leiden (modularity) over the whole graph; each level-0 community large enough is split by
Leiden again over the edges inside it, giving level 1, and so on for ``levels`` levels. A split that
finds no structure (one part) adds no child. Everything is deterministic: edges are sorted before
they are handed to the (seeded) Leiden implementation, and clusters come back in a fixed order.

The Leiden implementation is ``graspologic-native`` (Rust, MIT licence), the one Microsoft's GraphRAG
uses; it guarantees connected communities, which Louvain does not.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

Edge = tuple[str, str, float]


@dataclass(frozen=True)
class DetectOptions:
    """How communities are found. ``min_size``: smaller communities are dropped (two entities and
    one relation say little); ``split_min``: communities of at least this many entities get children."""

    levels: int = 2
    resolution: float = 1.0
    seed: int = 42
    min_size: int = 3
    split_min: int = 6

    def __post_init__(self) -> None:
        if not 1 <= self.levels <= 4:
            raise ValueError("levels must be from 1 to 4")
        if not 0 < self.resolution <= 100:
            raise ValueError("resolution must be above 0 and at most 100")
        if self.min_size < 1 or self.split_min < 2:
            raise ValueError("min_size must be at least 1 and split_min at least 2")


@dataclass
class Cluster:
    """One community: its level, members (sorted entity ids), parent (index into the result list)
    and each member's centrality: its weighted degree over the edges inside the community."""

    level: int
    members: tuple[str, ...]
    parent: int | None = None
    centrality: dict[str, float] = field(default_factory=dict)
    internal_weight: float = 0.0

    @property
    def size(self) -> int:
        return len(self.members)

    def central(self, n: int | None = None) -> list[str]:
        """Members by centrality, highest first (ties by id, so the order is stable)."""
        ranked = sorted(self.members, key=lambda m: (-self.centrality.get(m, 0.0), m))
        return ranked if n is None else ranked[:n]


def clean_edges(edges: Iterable[Edge]) -> list[Edge]:
    """Undirected, loop-free, positive edges, parallel ones summed, in a fixed order."""
    merged: dict[tuple[str, str], float] = defaultdict(float)
    for a, b, w in edges:
        if a == b or not (w > 0) or math.isinf(w):
            continue
        key = (a, b) if a < b else (b, a)
        merged[key] += float(w)
    return [(a, b, w) for (a, b), w in sorted(merged.items())]


def _leiden(edges: Sequence[Edge], options: DetectOptions) -> list[list[str]]:
    """Leiden partition of ``edges`` as lists of nodes, largest first (ties by first node)."""
    from graspologic_native import leiden

    _, membership = leiden(list(edges), resolution=options.resolution, seed=options.seed, trials=1)
    parts: dict[int, list[str]] = defaultdict(list)
    for node, part in membership.items():
        parts[part].append(node)
    return sorted((sorted(p) for p in parts.values()), key=lambda p: (-len(p), p[0]))


def _inside(edges: Sequence[Edge], parts: Sequence[Sequence[str]]) -> list[list[Edge]]:
    """The edges inside each part (one pass over the edges)."""
    part_of = {node: i for i, part in enumerate(parts) for node in part}
    inner: list[list[Edge]] = [[] for _ in parts]
    for edge in edges:
        i = part_of.get(edge[0])
        if i is not None and part_of.get(edge[1]) == i:
            inner[i].append(edge)
    return inner


def _with_centrality(cluster: Cluster, edges: Sequence[Edge]) -> Cluster:
    degree: dict[str, float] = defaultdict(float)
    total = 0.0
    for a, b, w in edges:
        degree[a] += w
        degree[b] += w
        total += w
    cluster.centrality = {m: degree.get(m, 0.0) for m in cluster.members}
    cluster.internal_weight = total
    return cluster


def detect_communities(edges: Iterable[Edge], options: DetectOptions = DetectOptions()) -> list[Cluster]:
    """Communities of the graph ``edges`` (entity id pairs with weights), level by level.

    Returns clusters ordered by level, then parent, then size (largest first); a child's ``parent``
    indexes its parent in the returned list. Nodes without edges belong to no community.
    """
    graph = clean_edges(edges)
    if not graph:
        return []
    out: list[Cluster] = []
    # (parent index or None, edges of the subgraph) to partition at the next level
    frontier: list[tuple[int | None, list[Edge]]] = [(None, graph)]
    for level in range(options.levels):
        next_frontier: list[tuple[int | None, list[Edge]]] = []
        for parent, sub in frontier:
            parts = _leiden(sub, options)
            if parent is not None and len(parts) < 2:
                continue  # no structure inside: the parent stands alone
            for part, inner in zip(parts, _inside(sub, parts), strict=True):
                if len(part) < options.min_size:
                    continue
                cluster = _with_centrality(Cluster(level, tuple(part), parent), inner)
                out.append(cluster)
                if len(part) >= options.split_min and inner:
                    next_frontier.append((len(out) - 1, inner))
        frontier = next_frontier
        if not frontier:
            break
    return out
