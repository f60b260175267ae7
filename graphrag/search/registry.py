"""The legs a search can run, by name, behind one signature.

The router holds one :class:`LegRunner` per leg (:class:`graphrag.models.Leg`: ``vector``, ``keyword``,
``graph``, ``extended``) and runs the requested ones concurrently, each with its own timeout. A leg reads what it needs from
:class:`LegInputs`; tests replace an entry of ``router.legs`` to change how a leg ranks, or to make
one fail or hang (a search requests the names ``SearchConfig.legs`` accepts).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import numpy as np

from graphrag.ingest.embedders import EmbeddingSpace
from graphrag.search.config import SearchConfig
from graphrag.search.expansion import Expansion
from graphrag.search.legs import LegResult


@dataclass(frozen=True)
class LegInputs:
    """What one search gives its legs. The awaitables are shared by the legs (and the router): a leg
    that may be cancelled (its timeout) awaits them through ``asyncio.shield``."""

    text: str
    config: SearchConfig
    #: The query embedding (by the searched collections' model).
    embedding: Awaitable[np.ndarray]
    #: The searched collections' embedding model.
    space: Awaitable[EmbeddingSpace]
    #: The query's expansions, when the search expands it.
    expansion: Awaitable[Expansion] | None = None
    #: The keyword leg's top hits (BM25 relative to the best), when it runs beside the graph leg: the
    #: graph leg's passage feedback.
    keyword_hits: Awaitable[list[tuple[str, float]]] | None = None


@dataclass(frozen=True)
class LegRunner:
    """How a leg runs: ``run`` ranks chunks for the inputs."""

    run: Callable[[LegInputs], Awaitable[LegResult]]
    #: The leg reads the query embedding: the router computes it only when some leg (or MMR) does.
    embeds: bool = True
    #: The leg starts, with its timer and timeout, once the embedding is there (else at once).
    after_embedding: bool = True
