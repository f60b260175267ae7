"""Frozen search configuration. Derive variants with ``model_copy(update=...)``; never mutate a shared one."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from graphrag.errors import InvalidInput
from graphrag.models import Leg

GraphLeg = Literal["auto", "always", "never"]
#: The legs the modes combine (the extended leg is asked for on its own).
LEGS: tuple[str, ...] = (Leg.VECTOR.value, Leg.KEYWORD.value, Leg.GRAPH.value)
MAX_QUERY_CHARS = 2000


class Rule(BaseModel):
    """A rule-based reranking step on a metadata field, applied as a multiplicative weight.

    - ``contains``: hits whose ``field`` contains ``value`` get ``weight``.
    - ``priority``: hits whose ``field`` equals one of ``values`` get ``weight`` (first value strongest).
    - ``sort``: hits are ordered by ``field`` (``descending``) among equal scores after weighting.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["contains", "priority", "sort"]
    field: str
    value: str | None = None
    values: tuple[str, ...] = ()
    weight: float = Field(1.5, gt=0, le=100)
    descending: bool = True


class SearchConfig(BaseModel):
    """Everything that shapes one search. Built from a recipe plus the request's options."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    legs: tuple[str, ...] = LEGS
    limit: int = Field(10, ge=1, le=100)
    collections: tuple[str, ...] | None = None
    filters: dict[str, Any] | None = None
    threshold: float | None = Field(None, ge=0.0, le=1.0, description="minimum cosine similarity of vector hits")
    fusion: Literal["convex", "rrf"] = Field(
        "convex", description="convex: weighted sum of normalised leg scores, missing ones filled in; "
                              "rrf: weighted reciprocal-rank fusion with rrf_k")
    rrf_k: int = Field(60, ge=1, le=1000)
    weights: dict[str, float] = Field(default_factory=lambda: {"vector": 1.0, "keyword": 1.0, "graph": 1.0})
    overfetch: int = Field(50, ge=1, le=1000, description="candidates per leg before fusion")
    ef_search: int = Field(100, ge=10, le=1000)
    leg_timeout_s: float = Field(5.0, gt=0, le=120)
    mmr_lambda: float | None = Field(None, ge=0.0, le=1.0)
    rules: tuple[Rule, ...] = ()
    boost_mode: bool = Field(False, description="vector ranking first; keyword and metadata matches multiply it")
    boost_factor: float = Field(1.5, gt=1.0, le=10.0)
    token_budget: int | None = Field(None, ge=1, le=1_000_000)
    metadata_only: bool = False
    collapse: bool = Field(False, description="keep only the best chunk per document")
    explain: bool = False
    graph_hops: int = Field(2, ge=1, le=2, description="hops of the graph walk from the linked entities")
    graph_seeds: int = Field(8, ge=1, le=50)
    graph_prf: int = Field(3, ge=0, le=20, description="top keyword (BM25) passages whose entities also seed the walk")
    graph_prf_weight: float = Field(1.0, ge=0.0, le=10.0)
    graph_title_boost: float = Field(2.0, ge=1.0, le=10.0, description="entity names the chunk's document")
    graph_named_weight: float = Field(0.5, ge=0.0, le=10.0,
                                      description="fusion weight of documents named after an entity the query names")
    ppr_alpha: float = Field(0.5, gt=0.0, lt=1.0,
                             description="restart probability of the personalised PageRank (truncated after graph_hops)")
    graph_leg: GraphLeg = Field(
        "auto", description="fused modes: auto skips the graph leg when the graph prior makes its weight "
                            "negligible (below graph_skip_below); always runs it; never leaves it out")
    graph_skip_below: float = Field(0.1, ge=0.0, le=1.0,
                                    description="graph prior under which auto does not run the graph leg")

    @field_validator("legs")
    @classmethod
    def _legs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = set(value) - set(LEGS)
        if unknown or not value:
            raise ValueError(f"legs must be a non-empty subset of {LEGS}")
        return value


def validate_query(query: Any) -> str:
    """A usable query string, or a clear :class:`InvalidInput`."""
    if not isinstance(query, str):
        raise InvalidInput("query must be a string")
    text = query.strip()
    if not text:
        raise InvalidInput("query is empty")
    if len(text) > MAX_QUERY_CHARS:
        raise InvalidInput(f"query is {len(text)} characters; the limit is {MAX_QUERY_CHARS}")
    if "\x00" in text:
        raise InvalidInput("query contains a NUL character")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("query is not valid Unicode (a lone surrogate)") from None
    return text
