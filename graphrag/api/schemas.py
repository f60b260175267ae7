"""Request and response models of the REST API. They are the OpenAPI schema at ``/schema``.

Response models mirror the contract in docs/architecture.md; they allow extra keys so that additions
(for example ``timings``) never break a client.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt

from graphrag.models import ModeName as Mode

CollectionName = str  # validated by the router: 1-64 of [A-Za-z0-9_.-], starting alphanumeric


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


# --- search ------------------------------------------------------------------------------------
class SearchRequest(BaseModel):
    """A search. ``{"query": "...", "limit": 5}`` alone is enough."""

    # strict: "5" is not a limit and 0 is not a boolean; what the schema does not allow is a 400.
    model_config = ConfigDict(extra="forbid", strict=True)

    query: str = Field(..., min_length=1, max_length=2000, description="The question or keywords.")
    mode: Mode = Field("auto", description="auto fuses every leg (and routes corpus-level questions to global); "
                       "vector, keyword, hybrid (vector+keyword), graph; global ranks community reports.")
    limit: StrictInt = Field(10, ge=1, le=100, description="Number of results.")
    collections: list[CollectionName] | None = Field(None, max_length=50, description="Only these collections.")
    filters: dict[str, Any] | None = Field(
        None, description='Metadata filter, e.g. {"year": {"$gte": 2020}, "$or": [{"lang": "en"}, {"lang": "de"}]}.'
    )
    threshold: float | None = Field(None, ge=0.0, le=1.0, description="Minimum cosine similarity of vector hits.")
    explain: StrictBool = Field(False, description="Keep per-leg details and the graph path in each result.")
    token_budget: StrictInt | None = Field(None, ge=1, le=1_000_000, description="Stop adding results past this many tokens.")
    mmr: float | None = Field(None, ge=0.0, le=1.0, description="MMR diversification lambda (1 = relevance only).")
    collapse: StrictBool = Field(False, description="Keep only the best chunk per document.")
    metadata_only: StrictBool = Field(False, description="Leave chunk text out of the results.")
    rerank: StrictBool = Field(False, description="Rerank with the configured cross-encoder (GRAPHRAG_RERANKER_MODEL).")
    fusion: Literal["convex", "rrf"] | None = Field(
        None, description="How fused modes combine legs: convex (default: normalised scores, weighted sum) or rrf.")
    graph_leg: Literal["auto", "always", "never"] = Field(
        "auto", description="Fused modes: auto leaves the graph leg out where the collections' graph prior makes its "
        "fusion weight negligible (reported in legs.graph as skipped, with the reason); always runs it; never "
        "leaves it out. Mode graph always runs it.")
    highlight: StrictBool = Field(
        False, description="Give each result `highlights` (character offsets of the query's terms, stemmed as the "
        "collection's text-search configuration does, and of the entities the graph leg linked) and a `snippet`.")
    full_document_threshold: float | None = Field(
        None, description="Results scoring at or above this carry their document's whole text in `content` "
        "(chunks in order, overlap removed; `full_document: true`), best first within `token_limit`. Scores are "
        "on the mode's scale (fused modes: the weighted sum of each leg's normalised score; keyword mode: BM25).")
    token_limit: StrictInt = Field(
        5000, ge=1, le=1_000_000, description="Most tokens of full-document text in one response (counted with the "
        "collection's embedding tokenizer). A document over it comes as the run of chunks around the hit "
        "(`truncated: true`).")
    format: Literal["json", "text", "voice"] = Field(
        "json", description="json: this response. text: a numbered citation list (text/plain). voice: short "
        "sentences to read out, without URLs, markup, brackets or code (text/plain).")
    extended: StrictBool = Field(
        False, description="Also search the documents' titles, summaries and propositions (made at ingestion with "
        "`--extended`), return the chunks they stand for, and say in each hit's `matched` what matched.")
    expand: StrictBool | None = Field(
        None, description="Expand the keyword leg with synonyms (GRAPHRAG_SYNONYMS_FILE, `synonyms`) and the aliases "
        "of entities the query names; null = the collections' default (GRAPHRAG_EXPAND_COLLECTIONS).")
    synonyms: list[list[str]] | None = Field(
        None, max_length=1000, description='Synonym groups for this request, e.g. [["car", "automobile", "auto"]]; '
        "giving them turns expansion on unless expand is false.")


class ModeSearchRequest(SearchRequest):
    """A search whose mode is fixed by the path."""

    mode: Mode | None = Field(None, description="Ignored: the path fixes the mode.")  # type: ignore[assignment]


class LegStatus(_Out):
    status: Literal["ok", "timeout", "error", "skipped"]
    took_ms: float
    hits: int
    error: str | None = None
    reason: str | None = Field(None, description="skipped: why the leg was not run")
    confidence: float | None = Field(None, description="how much the leg trusts its own ranking (scales its weight)")
    prior: float | None = Field(None, description="graph leg: how entity-centric the collections are (scales its weight)")
    named: int | None = Field(None, description="graph leg: documents named after what the query names")
    note: str | None = Field(None, description="vector leg: which collections it covered, when they use several "
                             "embedding models and none was named")
    expanded: list[str] | None = Field(None, description="keyword leg with expansion: the terms added to the query")
    expansions: list[dict[str, Any]] | None = Field(
        None, description="keyword leg with expansion: each added term, the query words it stands for, and its "
        "source (synonyms or alias)")


class EntityRef(_Out):
    id: str
    name: str | None = None
    label: str | None = None


class HitLeg(_Out):
    rank: int | None = None
    score: float | None = None
    entities: list[EntityRef] | None = None
    matched: list[str] | None = None
    title: str | None = Field(None, description="named: the title of the document the query names")
    kind: str | None = Field(None, description="extended: the kind of representation that matched")


class Matched(_Out):
    kind: Literal["title", "summary", "proposition", "chunk"] = Field(
        description="what matched the query: a representation of the chunk's document or the chunk itself")
    text: str | None = Field(None, description="the matching title, summary or proposition")


class CommunityRef(_Out):
    """A community report hit's community (mode global)."""

    id: str
    level: int
    size: int
    rank: float | None = None
    parent: str | None = None
    stale: bool = Field(False, description="the collection changed after the report was computed")
    generated: bool = Field(False, description="the report was written by a model (else extractive)")
    computed_at: str | None = None
    chunk_ids: list[str] = Field(default_factory=list, description="the chunks the report's evidence comes from")
class Highlight(_Out):
    start: int = Field(description="offset into content: content[start:end] is the highlighted text")
    end: int
    term: str = Field(description="the query word or entity name it matches")
    kind: Literal["keyword", "entity"]


class Hit(_Out):
    kind: Literal["community"] | None = Field(
        None, description="absent for a chunk; 'community' for a community report (mode global): title and "
        "content are the report's, chunk_id/document_id/source its first evidence chunk's")
    community: CommunityRef | None = None
    chunk_id: str
    document_id: str
    collection: str
    source: str
    title: str
    heading_path: list[str]
    content: str
    score: float
    legs: dict[str, HitLeg]
    entities: list[EntityRef]
    metadata: dict[str, Any]
    chunk_index: int | None = None
    char_start: int | None = None
    char_end: int | None = None
    highlights: list[Highlight] | None = Field(None, description="highlight: the terms found in content")
    snippet: str | None = Field(None, description="highlight: content[snippet_start:snippet_end], around the "
                                "best highlights")
    snippet_start: int | None = None
    snippet_end: int | None = None
    full_document: bool | None = Field(None, description="content is the document's text (full_document_threshold)")
    truncated: bool | None = Field(None, description="full document: over token_limit, so only the chunks around "
                                   "the hit")
    document_tokens: int | None = Field(None, description="full document: tokens of content")
    content_char_start: int | None = Field(None, description="full document: where content starts in the document")
    content_char_end: int | None = None
    folded_chunk_ids: list[str] | None = Field(None, description="full document: other hits whose chunk it holds")
    matched: Matched | None = Field(None, description="extended searches: what matched (see SearchRequest.extended)")


class LinkedEntity(EntityRef):
    score: float | None = None


class GraphRelation(_Out):
    source: str | None
    type: str
    target: str | None
    evidence_chunk_id: str


class GraphContext(_Out):
    entities: list[LinkedEntity]
    relations: list[GraphRelation]


class SearchResponse(_Out):
    query: str
    mode: str
    took_ms: float
    legs: dict[str, LegStatus]
    results: list[Hit]
    graph_context: GraphContext


# --- documents ---------------------------------------------------------------------------------
class DocumentIn(BaseModel):
    """A document given as text (Markdown allowed; front matter becomes metadata)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: str = Field(..., min_length=1, description="The document's text.")
    title: str | None = Field(None, max_length=1000, description="Title; default: front matter or first heading.")
    source: str | None = Field(
        None, min_length=1, max_length=1000,
        description="Stable identifier (path, URL); posting the same source again replaces or keeps the document. "
        "Default: a hash of the text.",
    )
    collection: CollectionName | None = Field(None, description="Collection (default: GRAPHRAG_DEFAULT_COLLECTION).")
    metadata: dict[str, Any] | None = Field(None, description="Metadata stored on the document, usable in filters.")
    tags: list[str] = Field(default_factory=list, max_length=100, description="Tags stored on the document.")


class IngestedDocument(_Out):
    id: str
    collection: str
    source: str
    title: str
    status: Literal["created", "updated", "unchanged"]
    chunks: int
    entities: int
    relations: int
    seconds: float


class _DocumentFields(_Out):
    id: str
    collection: str
    source: str
    title: str
    metadata: dict[str, Any]
    tags: list[str]
    created_at: str
    updated_at: str


class DocumentSummary(_DocumentFields):
    chunks: int


class DocumentPage(_Out):
    documents: list[DocumentSummary]
    total: int
    limit: int
    offset: int


class ChunkOut(_Out):
    id: str
    index: int
    content: str
    heading_path: list[str]
    char_start: int
    char_end: int
    token_count: int
    metadata: dict[str, Any]


class DocumentDetail(_DocumentFields):
    chunk_count: int
    chunks: list[ChunkOut]


class Deleted(_Out):
    id: str
    deleted: bool


class CollectionDeleted(_Out):
    collection: str
    deleted: bool
    documents: int = Field(description="Documents deleted.")
    chunks: int = Field(description="Chunks deleted.")
    graph_pending: bool = Field(description="The graph's part waits in the outbox (Neo4j was unavailable).")


# --- entities ----------------------------------------------------------------------------------
class EntityHit(_Out):
    id: str
    collection: str
    name: str
    label: str
    mentions: int
    score: float


class EntitySearch(_Out):
    query: str
    entities: list[EntityHit]


class ChunkRef(_Out):
    chunk_id: str
    document_id: str
    source: str
    title: str
    heading_path: list[str]
    content: str
    page: int | None = Field(None, description="PDF page of the chunk (null for unpaged documents)")
    count: int | None = None


class EntityRelation(_Out):
    source: str | None
    type: str
    target: str | None
    entity: EntityRef
    weight: float | None
    predicates: list[str]
    evidence: list[ChunkRef]


class EntityDetail(_Out):
    id: str
    collection: str
    name: str
    label: str
    key: str | None = None
    mentions: int
    relations: list[EntityRelation]
    chunks: list[ChunkRef]


# --- system ------------------------------------------------------------------------------------
class Health(_Out):
    status: Literal["ok"]
    version: str


class StoreReadiness(_Out):
    ok: bool
    version: str | None = None
    error: str | None = None


class Readiness(_Out):
    ready: bool
    postgres: StoreReadiness
    neo4j: StoreReadiness


class CollectionStats(_Out):
    """One collection's counts in each store, and the model and text configuration it records."""

    documents: int
    chunks: int
    graph_documents: int
    graph_chunks: int
    entities: int
    relations: int
    embedding_model: str | None = Field(None, description="the model the collection's vectors were made with")
    embedding_dim: int | None = Field(None, description="their dimension")
    text_config: str | None = Field(None, description="the text-search configuration of its keyword leg")
    reembed_model: str | None = Field(None, description="the model `graphrag reembed` is moving it to, if any")
    vector_index: str | None = Field(None, description="its own HNSW index, when it has one (large collections "
                                     "that share their dimension with others); null: the dimension's shared index")


class Stats(_Out):
    collections: dict[str, CollectionStats]
    drift: list[dict[str, Any]]
    graph_outbox: dict[str, Any]
    services: dict[str, dict[str, Any]]


class Problem(BaseModel):
    """RFC 9457 problem details: every error response has this shape (``application/problem+json``)."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    instance: str | None = None
    request_id: str | None = None
    errors: list[dict[str, Any]] | None = None
