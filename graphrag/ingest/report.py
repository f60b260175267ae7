"""The summary of one ingest (``ingest --json``) and its announcement to observers."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from graphrag.observability import events

if TYPE_CHECKING:
    from graphrag.ingest.payload import GraphPayload


@dataclass
class IngestReport:
    """The ``ingest --json`` summary (contract in docs/architecture.md) plus per-stage seconds.

    ``chunks`` counts the chunks this ingest wrote. ``entities`` and ``relations`` count the distinct
    entities and entity pairs (``RELATED_TO`` relationships) that the documents written by this ingest
    contribute to the collection's graph: an entity that several documents mention counts once. In a
    new collection they equal what Neo4j holds; ``totals`` is what the collection holds in both stores
    after the ingest (``None`` where a store could not be asked).
    """

    files: int = 0
    ingested: int = 0
    updated: int = 0
    unchanged: int = 0
    deleted: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)
    chunks: int = 0
    entities: int = 0
    relations: int = 0
    seconds: float = 0.0
    graph_pending: int = 0  # graph writes recorded but not yet applied (Neo4j away)
    representations: int = 0  # extended-search titles, summaries and propositions written
    included: int = 0  # distinct files read by the pages' include directives
    totals: dict[str, int | None] | None = None
    stages: dict[str, float] = field(default_factory=dict)
    documents: list[dict[str, Any]] = field(default_factory=list)
    # Distinct graph contributions so far, so that counts never add one entity up per document.
    _entity_ids: set[str] = field(default_factory=set, repr=False)
    _relation_pairs: set[tuple[str, str]] = field(default_factory=set, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if not k.startswith("_")}

    def count_graph(self, payload: GraphPayload) -> None:
        """Add a written batch's entities and relations to the distinct counts."""
        self._entity_ids.update(payload.entities)
        self._relation_pairs.update((r["source"], r["target"]) for r in payload.relations)
        self.entities = len(self._entity_ids)
        self.relations = len(self._relation_pairs)

    def add_time(self, stage: str, seconds: float) -> None:
        self.stages[stage] = round(self.stages.get(stage, 0.0) + seconds, 3)


def report_finished(report: IngestReport) -> None:
    """An ingest's outcome to the observers (the API's metrics)."""
    events.ingest_finished(events.IngestEvent(
        ingested=report.ingested, updated=report.updated, unchanged=report.unchanged, failed=len(report.failed),
        skipped=len(report.skipped), chunks=report.chunks))
