"""Extended search representations: a document's title and summary, and each chunk's propositions.

A search with ``extended: true`` matches these first and returns the chunks they stand for (see
:mod:`graphrag.search.extended`). They are made at ingestion when a collection asks for them
(``GRAPHRAG_EXTENDED`` or ``graphrag ingest --extended``; the mode is then recorded with the
collection, so later writes into it keep them current):

- ``extractive`` (no model beyond the embedder): propositions are the chunk's sentences, with
  light clause splitting (at semicolons, and at ", and/but/whereas/while ..." when both sides are
  clauses of five words or more); code blocks, tables and heading markers are left out. The summary
  is the title followed by the document's most central propositions: those whose embeddings are
  closest to the centroid of all its proposition embeddings (the centroid method of Radev et al.,
  with sentence embeddings in place of TF-IDF vectors), at most three, in document order.
- ``llm``: a pydantic-ai model (``GRAPHRAG_EXTENDED_MODEL``) writes the summary (one call per
  document) and the propositions (one call per chunk). A document whose calls fail falls back to
  the extractive representations, with a warning.

Every representation is embedded with the collection's model; a proposition is embedded under its
document's title ("Title: statement"), which gives a sentence lifted out of its context back the
subject it is about.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import numpy as np
from pydantic import BaseModel, Field

from graphrag.errors import ConfigurationError, InvalidInput
from graphrag.ingest.chunk import sentence_spans
from graphrag.stores.repo import PgQueries

log = logging.getLogger(__name__)

MODES: tuple[str, ...] = ("extractive", "llm")
SUMMARY_SENTENCES = 3
SUMMARY_MAX_WORDS = 120
MIN_WORDS = 4
CLAUSE_MIN_WORDS = 5
MAX_PROPOSITIONS_PER_CHUNK = 40
LLM_DOCUMENT_CHARS = 8000

_FENCE = re.compile(r"^\s*(```|~~~).*?^\s*\1\s*$", re.M | re.S)
_TABLE_LINE = re.compile(r"^\s*\|.*$", re.M)
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s.*$", re.M)
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+", re.M)
_CLAUSE_BREAK = re.compile(r";\s+|,\s+(?=(?:and|but|whereas|while|although|though|yet|so)\s)", re.I)
_LEADING_CONJUNCTION = re.compile(r"^(?:and|but|whereas|while|although|though|yet|so|however),?\s+", re.I)
_WORD = re.compile(r"\w+")

REPRESENTATION_COLUMNS = ("id", "collection", "document_id", "chunk_id", "kind", "content", "token_count",
                          "generator", "embedding", "embedding_model", "text_config")


@dataclass
class Representation:
    """One title, summary or proposition of a document, with the vector of its embedding text."""

    kind: str
    text: str
    chunk_index: int | None = None  # the proposition's chunk; None for titles and summaries
    embed_text: str = ""
    vector: np.ndarray | None = field(default=None, repr=False)


def check_mode(value: str | None) -> str | None:
    """``value`` as a stored mode (``None`` for off); a clear error for anything else."""
    if value is None:
        return None
    mode = value.strip().lower()
    if mode in ("off", "none", ""):
        return None
    if mode not in MODES:
        raise InvalidInput(f"unknown extended mode {value!r}; choose off, extractive or llm")
    return mode


def words(text: str) -> int:
    """Word count (what ``token_count`` of a representation holds: BM25's length normalisation)."""
    return len(_WORD.findall(text))


def prose(text: str) -> str:
    """The text without code blocks, table rows and headings (a heading is no statement, and joined
    to the heading under it or to the next line it would read as one), and without list markers."""
    text = _FENCE.sub(" ", text)
    text = _TABLE_LINE.sub(" ", text)
    text = _HEADING.sub("\n", text)
    return _LIST_MARK.sub("", text)


def split_clauses(sentence: str) -> list[str]:
    """A sentence cut at semicolons and at coordinating conjunctions after a comma, where both
    sides are long enough to stand as statements of their own."""
    parts = [p.strip() for p in _CLAUSE_BREAK.split(sentence) if p and p.strip()]
    if len(parts) <= 1:
        return [sentence.strip()]
    merged: list[str] = []
    for part in parts:
        if merged and (words(part) < CLAUSE_MIN_WORDS or words(merged[-1]) < CLAUSE_MIN_WORDS):
            merged[-1] = f"{merged[-1].rstrip(' ,;')}, {part}"
            continue
        if merged:
            part = _LEADING_CONJUNCTION.sub("", part).strip()
            part = part[:1].upper() + part[1:]  # a clause standing alone starts a statement
        merged.append(part)
    return merged


def propositions(text: str) -> list[str]:
    """A chunk's short statements: its sentences, clause-split, without fragments or repeats."""
    body = prose(text)
    out: list[str] = []
    seen: set[str] = set()
    for start, end in sentence_spans(body):
        sentence = " ".join(body[start:end].split())
        for clause in split_clauses(sentence):
            clause = clause.strip(" ,;:")
            if words(clause) < MIN_WORDS:
                continue
            key = clause.lower()
            if key not in seen:
                seen.add(key)
                out.append(clause)
            if len(out) >= MAX_PROPOSITIONS_PER_CHUNK:
                return out
    return out


def central_summary(title: str, units: Sequence[str], vectors: np.ndarray) -> str:
    """The title, then up to ``SUMMARY_SENTENCES`` units nearest the centroid, in document order."""
    chosen: list[int] = []
    if len(units):
        centroid = vectors.mean(axis=0)
        norm = float(np.linalg.norm(centroid)) or 1.0
        scores = vectors @ (centroid / norm)
        budget = SUMMARY_MAX_WORDS
        for i in np.argsort(-scores, kind="stable"):
            if len(chosen) >= SUMMARY_SENTENCES:
                break
            n = words(units[int(i)])
            if chosen and n > budget:
                continue
            chosen.append(int(i))
            budget -= n
    body = " ".join(_sentence(units[i]) for i in sorted(chosen))
    head = title.strip()
    if head and body:
        return f"{head}. {body}" if not head.endswith((".", "!", "?", ":")) else f"{head} {body}"
    return head or body


def _sentence(unit: str) -> str:
    return unit if unit.endswith((".", "!", "?")) else unit + "."


def embed_text(kind: str, text: str, title: str) -> str:
    """What is embedded for a representation: a proposition under its document's title."""
    if kind == "proposition" and title.strip():
        return f"{title.strip()}: {text}"
    return text


# --- representers ----------------------------------------------------------------------------------

class ExtractiveRepresenter:
    """Sentence propositions and a centroid summary; the embedder does all model work."""

    generator = "extractive"

    def represent(self, embedder: Any, docs: Sequence[tuple[str, Sequence[str]]]) -> list[list[Representation]]:
        """``docs``: (title, chunk texts) each; blocking (call from a worker thread)."""
        out: list[list[Representation]] = []
        props: list[Representation] = []
        for title, chunks in docs:
            reps = [Representation("proposition", p, index, embed_text("proposition", p, title))
                    for index, text in enumerate(chunks) for p in propositions(text)]
            props += reps
            out.append(reps)
        _embed(embedder, props)
        heads: list[Representation] = []
        for (title, _), reps in zip(docs, out, strict=True):
            units = list(dict.fromkeys(r.text for r in reps))
            if units:
                first = {r.text: r for r in reversed(reps)}
                vectors = np.stack([first[u].vector for u in units])  # type: ignore[misc]
                summary = central_summary(title, units, vectors)
            else:
                summary = ""
            heads += _heads(title, summary, reps)
        _embed(embedder, heads)
        return out


class LLMSummary(BaseModel):
    summary: str = Field(description="two to four sentences: what the document is about and its main points")


class LLMPropositions(BaseModel):
    propositions: list[str] = Field(
        default_factory=list,
        description="short, self-contained factual statements, each understandable without the text "
                    "(names instead of pronouns)")


SUMMARY_INSTRUCTIONS = ("Summarise the document in two to four sentences that say what it is about and state its main "
                        "points, using the names and terms it uses.")
PROPOSITION_INSTRUCTIONS = ("Split the passage into short, self-contained factual statements (propositions). Each "
                            "states one fact, replaces pronouns with the names they refer to, and can be understood "
                            "without the passage. Keep the passage's wording where possible.")


class LLMRepresenter:
    """Summaries and propositions written by a pydantic-ai model (any model string or Model object)."""

    def __init__(self, model: Any) -> None:
        from pydantic_ai import Agent

        self.model = model
        name = model if isinstance(model, str) else getattr(model, "model_name", type(model).__name__)
        self.generator = f"llm:{name}"
        self.summariser: Agent[None, LLMSummary] = Agent(model, output_type=LLMSummary,
                                                         instructions=SUMMARY_INSTRUCTIONS)
        self.splitter: Agent[None, LLMPropositions] = Agent(model, output_type=LLMPropositions,
                                                            instructions=PROPOSITION_INSTRUCTIONS)
        self.fallback = ExtractiveRepresenter()

    def represent(self, embedder: Any, docs: Sequence[tuple[str, Sequence[str]]]) -> list[list[Representation]]:
        out: list[list[Representation]] = []
        for title, chunks in docs:
            try:
                out.append(self._document(title, chunks))
            except Exception as exc:  # noqa: BLE001 - a model failure costs this document its LLM texts only
                log.warning("LLM representations of %r failed (%s); using extractive ones", title[:80], exc)
                out.append(self.fallback.represent(embedder, [(title, chunks)])[0])
                continue
        _embed(embedder, [r for reps in out for r in reps if r.vector is None])
        return out

    def _document(self, title: str, chunks: Sequence[str]) -> list[Representation]:
        reps: list[Representation] = []
        for index, text in enumerate(chunks):
            if not text.strip():
                continue
            found = self.splitter.run_sync(text).output.propositions
            for p in dict.fromkeys(" ".join(p.split()) for p in found):
                if words(p) >= 2:
                    reps.append(Representation("proposition", p, index, embed_text("proposition", p, title)))
        document = "\n\n".join(chunks)[:LLM_DOCUMENT_CHARS]
        prompt = f"Title: {title}\n\n{document}" if title.strip() else document
        summary = " ".join(self.summariser.run_sync(prompt).output.summary.split())
        _heads(title, summary, reps)
        return reps


def _heads(title: str, summary: str, reps: list[Representation]) -> list[Representation]:
    """The title and summary representations (appended to ``reps``, also returned)."""
    heads = []
    if title.strip():
        heads.append(Representation("title", title.strip(), None, title.strip()))
    if summary and summary != title.strip():
        heads.append(Representation("summary", summary, None, summary))
    reps.extend(heads)
    return heads


def _embed(embedder: Any, reps: list[Representation]) -> None:
    if not reps:
        return
    vectors = embedder.encode([r.embed_text or r.text for r in reps])
    for rep, vector in zip(reps, vectors, strict=True):
        rep.vector = vector


def build_representer(mode: str, settings: Any, model: Any = None) -> ExtractiveRepresenter | LLMRepresenter:
    """The representer of ``mode``; ``model`` (a pydantic-ai model) overrides GRAPHRAG_EXTENDED_MODEL."""
    if mode == "extractive":
        return ExtractiveRepresenter()
    if mode == "llm":
        chosen = model if model is not None else getattr(settings, "extended_model", None)
        if chosen is None:
            raise ConfigurationError("GRAPHRAG_EXTENDED=llm needs GRAPHRAG_EXTENDED_MODEL (a pydantic-ai model name, "
                                     "e.g. openai:gpt-4o-mini)")
        return LLMRepresenter(chosen)
    raise InvalidInput(f"unknown extended mode {mode!r}")


# --- storage -------------------------------------------------------------------------------------

async def collection_mode(uow: PgQueries, collection: str) -> str | None:
    """The mode recorded with the collection (None: no representations are made)."""
    return await uow.representations.mode(collection)


async def record_mode(uow: PgQueries, collection: str, mode: str | None) -> None:
    """Record the collection's mode; turning it off removes the collection's representations."""
    await uow.representations.set_mode(collection, mode)
    if mode is None:
        await uow.representations.delete_of_collection(collection)


async def ensure_index(uow: PgQueries, dim: int) -> None:
    """The HNSW index of the representations of one dimension (made once; a no-op afterwards)."""
    await uow.representations.ensure_index(dim)


async def replace_representations(uow: PgQueries, *, collection: str, document_id: uuid.UUID,
                                  chunk_ids: Sequence[uuid.UUID], reps: Sequence[Representation],
                                  generator: str, model: str, text_config: str) -> int:
    """Delete the document's representations and COPY the new ones in (the caller's transaction)."""
    await uow.representations.delete_of_documents([document_id])
    rows = [
        (uuid.uuid4(), collection, document_id, chunk_ids[r.chunk_index] if r.chunk_index is not None else None,
         r.kind, r.text, words(r.text), generator, r.vector, model, text_config)
        for r in reps if r.vector is not None and r.text.strip()
    ]
    if rows:
        await uow.sql.copy("representations", rows, list(REPRESENTATION_COLUMNS))
    return len(rows)



BACKFILL_BATCH = 64


async def backfill(ingestor: Any, collection: str, document_ids: Sequence[uuid.UUID], mode: str, space: Any,
                   text_config: str) -> int:
    """Make representations for stored documents that have none by ``mode``'s generator (an ingest
    with a mode on, over documents already there unchanged), from their stored chunks. Returns how
    many representations were written."""
    import asyncio

    from graphrag.ingest.writer import check_collection_model

    pg = ingestor.postgres
    representer = ingestor.models.representer(mode)
    written = 0
    for k in range(0, len(document_ids), BACKFILL_BATCH):
        todo = await pg.q.representations.documents_to_represent(collection, list(document_ids[k:k + BACKFILL_BATCH]),
                                                                  representer.generator)
        if not todo:
            continue
        ids = [r["id"] for r in todo]
        chunk_rows = await pg.q.representations.chunks_to_represent(ids)
        chunks: dict[uuid.UUID, list[Any]] = {}
        for row in chunk_rows:
            chunks.setdefault(row["document_id"], []).append(row)
        docs = [r for r in todo if chunks.get(r["id"])]
        made = await asyncio.to_thread(representer.represent, space.embedder,
                                       [(r["title"], [c["content"] for c in chunks[r["id"]]]) for r in docs])
        try:
            async with pg.unit_of_work() as uow:
                await check_collection_model(uow, collection, space.name)
                batch = 0
                for doc, reps in zip(docs, made, strict=True):
                    # Chunk indexes of the representer are positions in the document's stored chunk list.
                    batch += await replace_representations(
                        uow, collection=collection, document_id=doc["id"],
                        chunk_ids=[c["id"] for c in chunks[doc["id"]]], reps=reps, generator=representer.generator,
                        model=space.name, text_config=text_config)
            written += batch
        except asyncpg.ForeignKeyViolationError:
            # A concurrent write replaced or deleted one of these documents meanwhile: it made its own
            # representations (or needs none); the rest of this batch is made by the next ingest.
            log.info("documents changed while their representations were made; skipped a batch")
    return written
