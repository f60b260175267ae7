"""Domain types shared by ingestion, search and the interfaces."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, Literal


_COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}")


#: Name of the packaged default embedding model, as chunks and entity vectors record it.
PACKAGED_EMBEDDING_MODEL = "all-MiniLM-L6-v2"


def entity_vector_slot(model: str) -> tuple[str, str]:
    """``(property, vector index)`` holding entities' name embeddings by ``model``.

    Neo4j allows one vector index (of one dimension) per label and property, so each model has a
    property of its own; the packaged model keeps the original ``embedding`` / ``entity_embedding``.
    Both names are derived here (letters, digits, ``_`` only), never taken from a request.
    """
    if model == PACKAGED_EMBEDDING_MODEL:
        return "embedding", "entity_embedding"
    import hashlib

    slug = re.sub(r"[^a-z0-9]+", "_", model.lower()).strip("_")[:40]
    digest = hashlib.sha1(model.encode()).hexdigest()[:8]
    return f"embedding_{slug}_{digest}", f"entity_embedding_{slug}_{digest}"


def is_collection_name(name: object) -> bool:
    """1-64 letters, digits, '_', '.', '-', starting alphanumeric: the one rule for collection names."""
    return isinstance(name, str) and _COLLECTION_NAME.fullmatch(name) is not None


def chunk_page(metadata: Any) -> int | None:
    """The page (1-based) a chunk came from, as the page chunker records it in the chunk's metadata
    (``{"page": n}``, PDFs by default); ``None`` for a chunk of an unpaged document."""
    page = metadata.get("page") if isinstance(metadata, dict) else None
    return page if isinstance(page, int) and not isinstance(page, bool) and page > 0 else None


def citation(source: str, page: int | None) -> str:
    """How to cite a passage: its source, plus the page when it has one (``"eniac.pdf p. 2"``)."""
    return f"{source} p. {page}" if page else source


@dataclass(frozen=True)
class Document:
    """A loaded document: its full text plus what we know about it.

    ``pages`` holds ``(char_start, char_end)`` per page for paged formats (PDF), so the page chunker
    can keep pages apart; ``headings`` ``(char_start, level, title)`` per heading the format marks
    outside its text's syntax (a PDF's bookmarks), so it can keep sections apart too. ``kind`` picks
    the default chunker (markdown, text, pdf, record).
    """

    source: str
    title: str
    text: str
    kind: str
    metadata: dict[str, Any] = field(default_factory=dict)
    pages: tuple[tuple[int, int], ...] = ()
    headings: tuple[tuple[int, int, str], ...] = ()


@dataclass(frozen=True)
class Chunk:
    """A slice of a document: ``document.text[char_start:char_end] == text``."""

    index: int
    text: str
    char_start: int
    char_end: int
    heading_path: tuple[str, ...] = ()
    token_count: int = 0
    has_code: bool = False
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Entity:
    """An entity of one collection, identified by its normalised key (name + label)."""

    key: str
    name: str
    label: str


@dataclass
class Relation:
    """Entities related inside a document: co-occurrence weight per evidence chunk, SVO predicates."""

    source: str  # entity key
    target: str  # entity key
    chunk_weights: dict[int, int] = field(default_factory=dict)  # chunk index -> co-occurrences
    predicates: set[tuple[str, int]] = field(default_factory=set)  # (verb lemma, chunk index)


@dataclass
class Extraction:
    """What the extractor found in one document's chunks."""

    entities: dict[str, Entity] = field(default_factory=dict)  # key -> entity
    mentions: dict[tuple[int, str], int] = field(default_factory=dict)  # (chunk index, key) -> count
    relations: dict[tuple[str, str], Relation] = field(default_factory=dict)
    # Key-phrase candidates that did not become entities (not recurring enough in the document):
    # normalised name -> (name, mentions). Search suggestions count them over the collection.
    phrases: dict[str, tuple[str, int]] = field(default_factory=dict)
    aliases: dict[str, set[str]] = field(default_factory=dict)  # key -> other names the document defines for it


# --- search results --------------------------------------------------------------------------
#: The search modes as the wire names them (request models and the client take these strings);
#: :class:`Mode` names the same values in code (tests/unit keeps the two equal).
ModeName = Literal["auto", "vector", "keyword", "hybrid", "graph", "global"]


class Mode(StrEnum):
    """A search mode: which legs run (``auto`` fuses them all; ``global`` ranks community reports)."""

    AUTO = "auto"
    VECTOR = "vector"
    KEYWORD = "keyword"
    HYBRID = "hybrid"
    GRAPH = "graph"
    GLOBAL = "global"


class Leg(StrEnum):
    """A leg of a search: a way of ranking chunks that fusion combines with the others."""

    VECTOR = "vector"
    KEYWORD = "keyword"
    GRAPH = "graph"
    EXTENDED = "extended"


#: What became of a leg in one search.
LegStatus = Literal["ok", "timeout", "error", "skipped"]


def _present(pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """The pairs whose value is not None (optional keys of the contract are absent, never null)."""
    return {k: v for k, v in pairs if v is not None}


#: A leg report's optional keys: in the REST shape only when they apply.
_LEG_OPTIONAL = ("reason", "error", "confidence", "prior", "named", "note")


@dataclass
class LegReport:
    """How one leg of a search went (``legs`` of the response, docs/architecture.md)."""

    status: LegStatus
    took_ms: float = 0.0
    hits: int = 0
    #: skipped: why the leg did not run.
    reason: str | None = None
    #: timeout or error: what went wrong, in one line.
    error: str | None = None
    #: How much the leg trusts its own ranking (scales its fusion weight); absent when fully.
    confidence: float | None = None
    #: Graph leg: how entity-centric the collections are (scales its weight).
    prior: float | None = None
    #: Graph leg: documents named after what the query names.
    named: int | None = None
    #: Vector leg: which collections it covered when they use several embedding models.
    note: str | None = None
    #: Anything else a leg reports about itself (query expansion: ``expanded``, ``expansions``).
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """The leg timed out or failed (the others still answered)."""
        return self.status in ("timeout", "error")

    def to_dict(self) -> dict[str, Any]:
        """The REST shape: the status, time and hits, then the keys that apply."""
        return {"status": self.status, "took_ms": self.took_ms, "hits": self.hits,
                **_present((k, getattr(self, k)) for k in _LEG_OPTIONAL),
                **self.details}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LegReport:
        """A leg report read back from its REST shape."""
        known = {k: data[k] for k in _LEG_OPTIONAL if k in data}
        rest = {k: v for k, v in data.items() if k not in known and k not in ("status", "took_ms", "hits")}
        return cls(status=data["status"], took_ms=float(data.get("took_ms") or 0.0), hits=int(data.get("hits") or 0),
                   details=rest, **known)


@dataclass
class Hit:
    """One ranked result with its provenance: the chunk, its document, and how each leg found it.

    ``extra`` holds the optional additions a request asked for (``highlights``/``snippet``, the full
    document's ``full_document``/``truncated``/..., extended search's ``matched``, and a community
    report's ``kind``/``community`` in mode global); they are absent from :meth:`to_dict` otherwise.
    """

    chunk_id: str
    document_id: str
    collection: str
    source: str
    title: str
    content: str
    score: float
    heading_path: list[str] = field(default_factory=list)
    #: Per leg that found it: ``rank``, ``score`` and what the leg adds (graph: ``entities``).
    legs: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: The entities the chunk mentions: ``{"id", "name", "label"}``.
    entities: list[dict[str, Any]] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    chunk_index: int | None = None
    char_start: int | None = None
    char_end: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def page(self) -> int | None:
        """The PDF page the chunk came from, if any."""
        return chunk_page(self.metadata)

    @property
    def citation(self) -> str:
        """How to cite the hit: its source, plus the page when it has one."""
        return citation(self.source, self.page)

    @property
    def kind(self) -> str:
        """``chunk``, or ``community`` for a community report (mode global)."""
        return str(self.extra.get("kind") or "chunk")

    def to_dict(self) -> dict[str, Any]:
        """The REST shape of a hit (``results[i]``)."""
        return {"chunk_id": self.chunk_id, "document_id": self.document_id, "collection": self.collection,
                "source": self.source, "title": self.title, "heading_path": list(self.heading_path),
                "content": self.content, "score": self.score,
                "legs": {str(leg): info for leg, info in self.legs.items()}, "entities": self.entities,
                "metadata": self.metadata,
                **_present((k, getattr(self, k)) for k in ("chunk_index", "char_start", "char_end")),
                **self.extra}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Hit:
        """A hit read back from its REST shape."""
        return cls(**{k: data[k] for k in _HIT_CORE if k in data},
                   extra={k: v for k, v in data.items() if k not in _HIT_CORE})


_HIT_CORE = frozenset(f.name for f in fields(Hit)) - {"extra"}


def leg_problems(legs: Mapping[str, LegReport]) -> list[str]:
    """A line per leg that timed out or failed ("graph retrieval timeout: no answer within 5.0s"):
    the results still stand, and whoever reads them should know they are partial."""
    return [f"{leg} retrieval {report.status}: {report.error or ''}".rstrip(": ")
            for leg, report in legs.items() if report.failed]


@dataclass
class SearchResult:
    """What a search returns: the ranked hits, how each leg went, and the graph context.

    The router returns this; REST, the agent tools, MCP and the CLI map it to their own shapes
    (:meth:`to_dict` is the REST response, docs/architecture.md)."""

    query: str
    mode: str
    took_ms: float
    legs: dict[str, LegReport]
    hits: list[Hit]
    #: The entities the graph leg linked and the relations between them (``{"entities", "relations"}``).
    graph_context: dict[str, Any] = field(default_factory=lambda: {"entities": [], "relations": []})
    #: Milliseconds per stage (REST shows them with ``explain``).
    timings: dict[str, float] = field(default_factory=dict)
    #: ``auto`` when mode ``auto`` routed a corpus-level question to mode global.
    routed_from: str | None = None

    @property
    def failed_legs(self) -> list[str]:
        """The legs that timed out or failed (the results come from the others)."""
        return [leg for leg, report in self.legs.items() if report.failed]

    def to_dict(self, timings: bool = True) -> dict[str, Any]:
        """The REST response; ``timings`` only when asked for (``explain``)."""
        out: dict[str, Any] = {"query": self.query, "mode": str(self.mode)}
        if self.routed_from is not None:
            out["routed_from"] = str(self.routed_from)
        out.update({"took_ms": self.took_ms, "legs": {str(leg): r.to_dict() for leg, r in self.legs.items()},
                    "results": [h.to_dict() for h in self.hits], "graph_context": self.graph_context})
        if timings:
            out["timings"] = self.timings
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SearchResult:
        """A search result read back from a REST response (the CLI and client against a server)."""
        return cls(query=data.get("query", ""), mode=data.get("mode", "auto"), took_ms=float(data.get("took_ms") or 0.0),
                   legs={leg: LegReport.from_dict(r) for leg, r in (data.get("legs") or {}).items()},
                   hits=[Hit.from_dict(h) for h in data.get("results") or []],
                   graph_context=data.get("graph_context") or {"entities": [], "relations": []},
                   timings=dict(data.get("timings") or {}), routed_from=data.get("routed_from"))
