"""The agent tools: search (four modes), global search (community reports), entity and document look-ups.

Each tool is a plain async function taking :class:`AgentDeps` first; its docstring (Google style) is the
tool's schema. :func:`build_toolset` wraps them for pydantic-ai (``deps`` comes from ``RunContext``,
:class:`~graphrag.errors.UserError` becomes :class:`~pydantic_ai.ModelRetry`), and the MCP server
(:mod:`graphrag.agent.mcp`) calls the same functions with the schemas pydantic-ai derived from them.
Results are small pydantic models: an agent pays for every character it reads.
"""

from __future__ import annotations

import inspect
import logging
import typing
import uuid
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field
from pydantic_ai import FunctionToolset, ModelRetry, RunContext, Tool

from graphrag import documents, entities
from graphrag.agent.deps import MAX_LIMIT, AgentDeps
from graphrag.entities import check_collection
from graphrag.errors import InvalidInput, NotFound, UserError
from graphrag.models import LegReport, chunk_page, citation, leg_problems
from graphrag.models import SearchResult as SearchOutcome
from graphrag.search import formats
from graphrag.search.config import LEGS
from graphrag.search.extras import DEFAULT_TOKEN_LIMIT, MAX_TOKEN_LIMIT

log = logging.getLogger(__name__)

TEXT_CHARS = 1200  # per search hit: enough to answer from, short enough for 20 hits in a context
EVIDENCE_CHARS = 300  # per relation evidence: it supports a fact, the passage itself is one call away
CHUNK_CHARS = 4000  # per chunk of get_document: chunks are bounded by the chunker; this is a backstop

Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT)]
Collections = list[str] | None
Filters = dict[str, Any] | None
Format = Literal["json", "text", "voice"]
TokenLimit = Annotated[int, Field(ge=1, le=MAX_TOKEN_LIMIT)]


def _absent(value: Any) -> bool:
    return value is None


# --- results -------------------------------------------------------------------------------------

PAGE = "PDF page of the passage (null for documents without pages)"
CITATION = "how to cite the passage: its source, with the page for PDFs (e.g. 'manual.pdf p. 2')"


class TermSpan(BaseModel):
    """A highlighted term: ``text[start:end]`` of the hit matches ``term``."""

    start: int
    end: int
    term: str
    kind: str = Field(description="keyword (a query word, or a form of it) or entity (linked by the graph)")


class SearchHit(BaseModel):
    """One retrieved passage; cite it by ``citation``."""

    source: str
    citation: str = Field(description=CITATION)
    page: int | None = Field(None, description=PAGE)
    title: str | None
    heading_path: list[str]
    score: float
    text: str
    chunk_id: str
    document_id: str
    collection: str
    found_by: list[str] = Field(description="the retrieval legs that found this passage")
    highlights: list[TermSpan] | None = Field(
        None, exclude_if=_absent, description="highlight: where the query's terms are in text (text[start:end])")
    snippet: str | None = Field(None, exclude_if=_absent, description="highlight: the best few lines of text")
    full_document: bool | None = Field(None, exclude_if=_absent,
                                       description="text is the whole document (or, if truncated, its part "
                                                   "around the hit)")
    truncated: bool | None = Field(None, exclude_if=_absent, description="full document: cut to token_limit")
    matched: str | None = Field(None, description="extended searches: the document title, summary or proposition "
                                "that matched, as 'kind: text' (absent when the passage itself matched)")


class SearchResult(BaseModel):
    """Hits, best first, and the legs that did not answer (if any)."""

    query: str
    mode: str
    hits: list[SearchHit]
    warnings: list[str] = []


class FormattedResult(BaseModel):
    """A search answered as ``text`` (a numbered citation list) or ``voice`` (sentences to read out)."""

    query: str
    mode: str
    format: str
    text: str


class GraphFact(BaseModel):
    """A relation between two entities, with the chunk that states it."""

    source: str
    type: str
    target: str
    evidence_chunk_id: str


class LinkedEntity(BaseModel):
    """An entity the query was linked to in the knowledge graph."""

    id: str
    name: str
    label: str | None = None
    score: float | None = None


class GraphSearchResult(SearchResult):
    """Hits plus the graph facts and entities that connected them."""

    facts: list[GraphFact]
    entities: list[LinkedEntity]


class Passage(BaseModel):
    """A chunk of a document, trimmed."""

    source: str
    citation: str = Field(description=CITATION)
    page: int | None = Field(None, description=PAGE)
    title: str | None
    chunk_id: str
    document_id: str
    heading_path: list[str]
    text: str


class EntityRelation(BaseModel):
    """A relation of the entity, strongest first, with passages that evidence it."""

    source: str
    type: str
    target: str
    predicates: list[str]
    weight: float | None
    evidence: list[Passage]


class EntityResult(BaseModel):
    """An entity, its relations and the passages that mention it most."""

    id: str
    name: str
    label: str | None
    collection: str
    mentions: int
    relations: list[EntityRelation]
    passages: list[Passage]
    other_matches: list[LinkedEntity] = Field(
        default=[], description="other entities the name matched, for disambiguation")


class ChunkText(BaseModel):
    """One chunk of a document, in order."""

    chunk_id: str
    index: int
    page: int | None = Field(None, description=PAGE)
    heading_path: list[str]
    text: str


class DocumentResult(BaseModel):
    """A document and one page of its chunks."""

    id: str
    collection: str
    source: str
    title: str | None
    metadata: dict[str, Any]
    chunk_count: int
    chunks: list[ChunkText]
    next_chunk: int | None = Field(description="first_chunk for the next page; null when this is the last")


class DocumentInfo(BaseModel):
    """A document in a listing."""

    id: str
    collection: str
    source: str
    title: str | None
    chunks: int
    tags: list[str]
    updated_at: str


class DocumentList(BaseModel):
    """One page of documents, newest first."""

    documents: list[DocumentInfo]
    total: int
    next_offset: int | None = Field(description="offset for the next page; null when this is the last")


class AnswerCitation(BaseModel):
    """A passage the answer cites as [n]."""

    n: int = Field(description="the number the answer cites it by")
    citation: str = Field(description=CITATION)
    source: str
    page: int | None = Field(None, description=PAGE)
    title: str | None
    chunk_id: str
    document_id: str


class UnsupportedSentence(BaseModel):
    """A sentence of the answer whose cited passage does not support it (a lexical check)."""

    sentence: str
    cited: list[int]
    reason: str = Field(description="not_supported, unknown_citation (cites no passage) or uncited")


class AnswerResult(BaseModel):
    """An answer written from the retrieved passages, citing them as [n]."""

    question: str
    answer: str
    citations: list[AnswerCitation]
    unsupported: list[UnsupportedSentence] = Field(
        description="sentences not supported by the passage they cite: do not rely on them")
    model: str | None = Field(description="the server's model that wrote the answer (null: nothing was found)")
class CommunityReport(BaseModel):
    """A report on one community: a group of entities the documents mention together."""

    title: str
    text: str
    level: int = Field(description="0: a broad theme; 1: a finer part of one")
    entities: list[str] = Field(description="its most central entities")
    score: float
    collection: str
    community_id: str
    chunk_ids: list[str] = Field(description="chunks the report's evidence sentences come from")
    stale: bool = Field(description="the collection changed after the report was computed")


class GlobalSearchResult(BaseModel):
    """Community reports, best first."""

    query: str
    reports: list[CommunityReport]
    warnings: list[str] = []


# --- tools ---------------------------------------------------------------------------------------

async def search(deps: AgentDeps, query: str, limit: Limit | None = None, collections: Collections = None,
                 filters: Filters = None, highlight: bool = False,
                 full_document_threshold: float | None = None, token_limit: TokenLimit = DEFAULT_TOKEN_LIMIT,
                 format: Format = "json", extended: bool = False,
                 expand: bool | None = None) -> SearchResult | FormattedResult:
    """Search the knowledge base for passages that answer a question. Use this first.

    Combines semantic (vector), keyword and knowledge-graph retrieval. Cite a passage by its source.

    Args:
        query: The question or keywords, in natural language.
        limit: How many passages to return, 1-20 (default 5).
        collections: Collections to search; omit to search the default ones.
        filters: Optional metadata filter, e.g. {"year": {"$gte": 2020}} or
            {"$and": [{"tags": "public"}, {"source": {"$contains": "guide"}}]}; operators $eq $ne $gt $gte
            $lt $lte $in $nin $contains $and $or.
        highlight: Mark where the query's terms occur in each passage (highlights, snippet).
        full_document_threshold: Passages whose score is at least this come with their whole
            document's text, best first, within token_limit (scores as in the hits you got before).
        token_limit: Most tokens of whole-document text in the answer (default 5000).
        format: json (structured hits, default), text (a numbered citation list) or voice (short
            sentences to read out, without URLs or markup).
        extended: Also match document titles, summaries and propositions (when they were made at
            ingestion): finds passages whose document as a whole answers the question.
        expand: Add synonyms and other names (abbreviations) of what the query names to the keyword
            search; omit for the collections' default.
    """
    return _answer(await _search(deps, "auto", query, limit, collections, filters, highlight,
                                 full_document_threshold, token_limit, extended, expand), format)


async def vector_search(deps: AgentDeps, query: str, limit: Limit | None = None, collections: Collections = None,
                        filters: Filters = None, highlight: bool = False,
                        full_document_threshold: float | None = None, token_limit: TokenLimit = DEFAULT_TOKEN_LIMIT,
                        format: Format = "json") -> SearchResult | FormattedResult:
    """Semantic search only: passages whose meaning is close to the query, even without shared words.

    Args:
        query: The question or a description of what to find.
        limit: How many passages to return, 1-20 (default 5).
        collections: Collections to search; omit to search the default ones.
        filters: Optional metadata filter, same language as in search.
        highlight: As in search.
        full_document_threshold: As in search.
        token_limit: As in search.
        format: As in search.
    """
    return _answer(await _search(deps, "vector", query, limit, collections, filters, highlight,
                                 full_document_threshold, token_limit), format)


async def hybrid_search(deps: AgentDeps, query: str, limit: Limit | None = None, collections: Collections = None,
                        filters: Filters = None, highlight: bool = False,
                        full_document_threshold: float | None = None, token_limit: TokenLimit = DEFAULT_TOKEN_LIMIT,
                        format: Format = "json", extended: bool = False,
                        expand: bool | None = None) -> SearchResult | FormattedResult:
    """Semantic plus keyword search, without the graph: good for exact names, codes and rare terms.

    Args:
        query: The question or keywords.
        limit: How many passages to return, 1-20 (default 5).
        collections: Collections to search; omit to search the default ones.
        filters: Optional metadata filter, same language as in search.
        highlight: As in search.
        full_document_threshold: As in search.
        token_limit: As in search.
        format: As in search.
        extended: Also match document titles, summaries and propositions, as in search.
        expand: Add synonyms and abbreviations to the keyword search, as in search.
    """
    return _answer(await _search(deps, "hybrid", query, limit, collections, filters, highlight,
                                 full_document_threshold, token_limit, extended, expand), format)


async def graph_search(deps: AgentDeps, query: str, limit: Limit | None = None, collections: Collections = None,
                       filters: Filters = None, highlight: bool = False,
                       full_document_threshold: float | None = None, token_limit: TokenLimit = DEFAULT_TOKEN_LIMIT,
                       format: Format = "json") -> GraphSearchResult | FormattedResult:
    """Knowledge-graph search: follows relations between the entities named in the query.

    Use it for questions that connect facts across documents (who founded X, where did they study).
    Returns passages plus the graph facts (entity relations, each with its evidence chunk) and the
    entities the query was linked to.

    Args:
        query: The question; name the people, places or organisations it is about.
        limit: How many passages to return, 1-20 (default 5).
        collections: Collections to search; omit to search the default ones.
        filters: Optional metadata filter, same language as in search.
        highlight: As in search.
        full_document_threshold: As in search.
        token_limit: As in search.
        format: As in search.
    """
    response = await _search(deps, "graph", query, limit, collections, filters, highlight,
                             full_document_threshold, token_limit)
    if format != "json":
        return _formatted(response, format)
    context = response.graph_context or {}
    return GraphSearchResult(
        **_search_result(response).model_dump(),
        facts=[GraphFact(source=r["source"], type=r["type"], target=r["target"],
                         evidence_chunk_id=r["evidence_chunk_id"]) for r in context.get("relations", [])],
        entities=[LinkedEntity(id=e["id"], name=e["name"], label=e.get("label"), score=e.get("score"))
                  for e in context.get("entities", [])],
    )


async def global_search(deps: AgentDeps, query: str, limit: Limit | None = None,
                        collections: Collections = None) -> GlobalSearchResult:
    """Questions about a whole collection (its main themes, an overview, what it covers): community reports.

    Each report summarises a community of entities the documents mention together, with evidence
    chunk ids. Use search for questions about particular facts or entities.

    Args:
        query: The question, e.g. "What are the main themes?".
        limit: How many reports to return, 1-20 (default 5).
        collections: Collections to search; omit to search the default ones.
    """
    response = await _search(deps, "global", query, limit, collections, None)
    reports = [CommunityReport(title=r.title, text=formats.trim(r.content, TEXT_CHARS),
                               level=r.extra["community"]["level"], entities=[e["name"] for e in r.entities],
                               score=r.score, collection=r.collection, community_id=r.extra["community"]["id"],
                               chunk_ids=r.extra["community"]["chunk_ids"], stale=r.extra["community"]["stale"])
               for r in response.hits if r.kind == "community"]
    report = response.legs.get("global")
    warnings = [report.note] if report is not None and report.note else []
    return GlobalSearchResult(query=response.query, reports=reports, warnings=warnings)


async def get_entity(deps: AgentDeps, entity: str, collections: Collections = None) -> EntityResult:
    """Look up an entity (person, place, organisation...) by name or id: its relations and mentions.

    Args:
        entity: The entity's name (best match is taken) or its id from an earlier result.
        collections: Collections to look in; omit for the default ones.
    """
    if not isinstance(entity, str) or not entity.strip():
        raise InvalidInput("entity is empty: give a name or an id")
    rt = deps.runtime
    entity = entity.strip()
    others: list[LinkedEntity] = []
    try:
        entity_id = str(uuid.UUID(entity))
    except ValueError:
        matches = await _entities_named(deps, entity, collections)
        entity_id = matches[0].id
        others = matches[1:]
    found = await entities.get_entity(rt, entity_id, relations=10, mentions=5, visible=deps.can_see)
    return EntityResult(
        id=found["id"],
        name=found["name"],
        label=found.get("label"),
        collection=found["collection"],
        mentions=int(found.get("mentions") or 0),
        relations=[
            EntityRelation(source=r["source"], type=r["type"], target=r["target"], predicates=r["predicates"],
                           weight=r.get("weight"),
                           evidence=[_passage(c, EVIDENCE_CHARS) for c in r["evidence"]])
            for r in found["relations"]
        ],
        passages=[_passage(c, TEXT_CHARS) for c in found["chunks"]],
        other_matches=others,
    )


async def get_document(deps: AgentDeps, document_id: str, first_chunk: Annotated[int, Field(ge=0)] = 0,
                       max_chunks: Annotated[int, Field(ge=1, le=50)] = 10) -> DocumentResult:
    """Read a document's text, chunk by chunk, in order (e.g. to see the context around a search hit).

    Args:
        document_id: The document's id (document_id of a search hit or of list_documents).
        first_chunk: Index of the first chunk to return (for paging through long documents).
        max_chunks: How many chunks to return, 1-50.
    """
    doc = await documents.get_document(deps.runtime, document_id)
    deps.check_visible(doc["collection"], f"no document with id {document_id!r}")
    count = doc["chunk_count"]
    if count and first_chunk >= count:
        raise InvalidInput(f"first_chunk is {first_chunk} but the document has {count} chunks (0-{count - 1})")
    page = doc["chunks"][first_chunk:first_chunk + max_chunks]
    end = first_chunk + len(page)
    return DocumentResult(
        id=doc["id"], collection=doc["collection"], source=doc["source"], title=doc["title"],
        metadata=doc["metadata"], chunk_count=count,
        chunks=[ChunkText(chunk_id=c["id"], index=c["index"], page=chunk_page(c["metadata"]),
                          heading_path=c["heading_path"], text=formats.trim(c["content"], CHUNK_CHARS)) for c in page],
        next_chunk=end if end < count else None,
    )


async def list_documents(deps: AgentDeps, collection: str | None = None,
                         limit: Annotated[int, Field(ge=1, le=100)] = 20,
                         offset: Annotated[int, Field(ge=0)] = 0) -> DocumentList:
    """List the documents in the knowledge base, newest first, with their ids and sources.

    Args:
        collection: The collection to list; omit for the default ones (then limit applies per collection).
        limit: How many documents to return, 1-100.
        offset: How many to skip (for paging).
    """
    named = [collection] if collection and check_collection(collection) else None
    scoped = deps.scope(named)
    scopes: list[str | None] = list(scoped) if scoped else [None]
    listed: list[DocumentInfo] = []
    total = 0
    more = False
    for scope in scopes:
        page = await documents.list_documents(deps.runtime, collection=scope, limit=limit, offset=offset)
        listed += [DocumentInfo(id=d["id"], collection=d["collection"], source=d["source"], title=d["title"],
                                chunks=d["chunks"], tags=d["tags"], updated_at=d["updated_at"])
                   for d in page["documents"]]
        total += page["total"]
        more = more or offset + len(page["documents"]) < page["total"]
    return DocumentList(documents=listed, total=total, next_offset=offset + limit if more else None)


async def answer(deps: AgentDeps, question: str, limit: Limit | None = None, collections: Collections = None,
                 filters: Filters = None) -> AnswerResult:
    """Answer a question from the knowledge base with the server's own language model, citing passages as [n].

    For clients without a model of their own: it searches, writes a short answer from the passages found and
    checks that each sentence is supported by the passage it cites. Clients with a model should call search
    and answer themselves.

    Args:
        question: The question, in natural language.
        limit: How many passages the answer may draw on, 1-20 (default 5).
        collections: Collections to search; omit to search the default ones.
        filters: Optional metadata filter, same language as in search.
    """
    from graphrag.answer import service

    await deps.runtime.postgres.require_collections(collections)  # a named collection must exist
    options = service.AnswerOptions(limit=limit or deps.limit, collections=collections or deps.collections,
                                    filters=filters)
    prepared = await service.prepare(deps.runtime, question, options)
    result = await service.complete(deps.runtime, prepared)
    hits = result["hits"]
    cited = []
    for c in result["citations"]:
        page = chunk_page(hits[c["n"] - 1].get("metadata"))
        cited.append(AnswerCitation(n=c["n"], citation=citation(c["source"], page), source=c["source"], page=page,
                                    title=c["title"], chunk_id=c["chunk_id"], document_id=c["document_id"]))
    return AnswerResult(
        question=result["query"], answer=result["answer"], citations=cited,
        unsupported=[UnsupportedSentence(sentence=u["sentence"], cited=u["cited"], reason=u["reason"])
                     for u in result["unsupported"]],
        model=result["model"],
        warnings=leg_problems({leg: LegReport.from_dict(report) for leg, report in result["legs"].items()}),
    )


# --- helpers -------------------------------------------------------------------------------------

async def _search(deps: AgentDeps, mode: str, query: str, limit: int | None, collections: Collections,
                  filters: Filters, highlight: bool = False, full_document_threshold: float | None = None,
                  token_limit: int = DEFAULT_TOKEN_LIMIT, extended: bool = False,
                  expand: bool | None = None) -> SearchOutcome:
    scope = deps.scope(collections)  # before the existence check: no leak of other collections' names
    with deps.runtime.postgres.one_request():  # the check and the search share the collections' row
        await deps.runtime.postgres.require_collections(collections)  # a named collection must exist
        router = await deps.runtime.router()
        log.debug("%s search %r in %s", mode, query, scope or "all collections")
        return await router.search(query, mode=mode, limit=limit or deps.limit, collections=scope,
                                   filters=filters, highlight=highlight,
                                   full_document_threshold=full_document_threshold, token_limit=token_limit,
                                   extended=extended, expand=expand)


def _answer(outcome: SearchOutcome, format: str) -> SearchResult | FormattedResult:
    """The search outcome as the tool's result in the asked format."""
    if format == "json":
        return _search_result(outcome)
    return _formatted(outcome, format)


def _formatted(outcome: SearchOutcome, format: str) -> FormattedResult:
    """The search outcome as text or voice."""
    formats.check_format(format)
    return FormattedResult(query=outcome.query, mode=str(outcome.mode), format=format,
                           text=formats.render(outcome, format))


def _search_result(outcome: SearchOutcome) -> SearchResult:
    hits = []
    for r in outcome.hits:
        full = bool(r.extra.get("full_document"))
        # A whole document is what was asked for (its size is bounded by token_limit); a passage is trimmed.
        text = r.content if full else formats.trim(r.content, TEXT_CHARS)
        spans = None
        if "highlights" in r.extra:  # those inside the kept text (trimming keeps the start)
            spans = [TermSpan(start=h["start"], end=h["end"], term=h["term"], kind=h["kind"])
                     for h in r.extra["highlights"]
                     if h["end"] <= len(text) and text[h["start"]:h["end"]] == r.content[h["start"]:h["end"]]]
        hits.append(SearchHit(
            source=r.source, citation=r.citation, page=r.page, title=r.title,
            heading_path=r.heading_path, score=r.score, text=text,
            chunk_id=r.chunk_id, document_id=r.document_id, collection=r.collection,
            found_by=[leg for leg in r.legs if leg in (*LEGS, "global", "extended")], highlights=spans,
            snippet=r.extra.get("snippet"), full_document=r.extra.get("full_document"),
            truncated=r.extra.get("truncated"), matched=_matched(r.extra.get("matched"))))
    return SearchResult(query=outcome.query, mode=str(outcome.mode), hits=hits, warnings=leg_problems(outcome.legs))


def _matched(matched: dict[str, Any] | None) -> str | None:
    if not matched or matched.get("kind") == "chunk" or not matched.get("text"):
        return None
    return f"{matched['kind']}: {formats.trim(matched['text'], EVIDENCE_CHARS)}"


async def _entities_named(deps: AgentDeps, name: str, collections: Collections) -> list[LinkedEntity]:
    """Entities matching ``name`` in the scope, best first (NotFound when none)."""
    scoped = deps.scope(collections)
    scopes: list[str | None] = list(scoped) if scoped else [None]
    rows: list[dict[str, Any]] = []
    for scope in scopes:
        rows += (await entities.search_entities(deps.runtime, name, collection=scope, limit=5))["entities"]
    if not rows:
        where = f" in {', '.join(s for s in scopes if s)}" if scopes != [None] else ""
        raise NotFound(f"no entity named {name!r}{where}; try search to find how it is spelled")
    rows.sort(key=lambda r: (-r["score"], -int(r.get("mentions") or 0)))
    return [LinkedEntity(id=r["id"], name=r["name"], label=r.get("label"), score=r["score"]) for r in rows[:5]]


def _passage(chunk: dict[str, Any], chars: int) -> Passage:
    page = chunk.get("page")
    return Passage(source=chunk["source"], citation=citation(chunk["source"], page), page=page,
                   title=chunk["title"], chunk_id=chunk["chunk_id"], document_id=chunk["document_id"],
                   heading_path=chunk["heading_path"], text=formats.trim(chunk["content"], chars))


# --- wiring --------------------------------------------------------------------------------------

CoreTool = Callable[..., Awaitable[BaseModel]]

TOOLS: dict[str, CoreTool] = {
    fn.__name__: fn
    for fn in (search, vector_search, hybrid_search, graph_search, global_search, get_entity, get_document,
               list_documents)
}
"""The tool functions by name; each takes :class:`AgentDeps` first, then its own arguments."""

ANSWER_TOOLS: dict[str, CoreTool] = {"answer": answer}
"""Tools that ask the server's answer model (``GRAPHRAG_ANSWER_MODEL``): for MCP clients and agents that
bring no model of their own, so not in the default toolset."""


def agent_tool(core: CoreTool) -> Tool[AgentDeps]:
    """``core`` as a pydantic-ai tool: same name, docstring and parameters, with ``RunContext`` in place of
    ``deps``; a :class:`UserError` (bad argument, unknown id) goes back to the model as :class:`ModelRetry`."""

    async def call(ctx: RunContext[AgentDeps], **kwargs: Any) -> Any:
        try:
            return await core(ctx.deps, **kwargs)
        except UserError as exc:
            log.info("tool %s rejected its arguments: %s", core.__name__, exc.message)
            raise ModelRetry(exc.message) from exc

    # pydantic-ai reads the schema from the signature, type hints and docstring: give it core's,
    # with the context parameter it expects first.
    hints = typing.get_type_hints(core, include_extras=True)
    params = list(inspect.signature(core).parameters.values())[1:]
    ctx_param = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=RunContext[AgentDeps])
    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [ctx_param, *(p.replace(annotation=hints[p.name]) for p in params)], return_annotation=hints["return"])
    call.__annotations__ = {"ctx": RunContext[AgentDeps], **{p.name: hints[p.name] for p in params},
                            "return": hints["return"]}
    call.__name__ = call.__qualname__ = core.__name__
    call.__doc__ = core.__doc__
    call.__module__ = core.__module__
    return Tool(call, takes_ctx=True, name=core.__name__, docstring_format="google",
                require_parameter_descriptions=True)


def build_toolset(*, answer: bool = False) -> FunctionToolset[AgentDeps]:
    """A new pydantic-ai toolset with every graphrag retrieval tool, and with ``answer`` (the server's own
    model answers, :data:`ANSWER_TOOLS`) when asked."""
    tools = [*TOOLS.values(), *(ANSWER_TOOLS.values() if answer else ())]
    return FunctionToolset([agent_tool(fn) for fn in tools])


toolset: FunctionToolset[AgentDeps] = build_toolset()
"""The graphrag tools for a pydantic-ai ``Agent[AgentDeps, ...]`` (``toolsets=[toolset]``)."""
