"""Suggestion terms: what each document contributes to search-as-you-type (entity names, its title,
key phrases), written in the same PostgreSQL transaction as its chunks.

Phrases are the extractor's noun-phrase candidates (2-4 content words ending in a noun), those it
kept as ``CONCEPT`` entities and the others; the suggestion query only offers the frequent ones (in
two documents, or three times in one: ``sql/migrations/006_suggest.sql``).

``document_terms`` keeps each document's contribution and ``suggest_terms`` their sums per
collection (``sql/migrations/006_suggest.sql``): :func:`replace` takes a document's old terms back
and adds its new ones, :func:`remove` (the delete path) takes them back. :func:`rebuild` fills them
in for documents stored before suggestions existed, from the graph in Neo4j.
"""

from __future__ import annotations

import logging
import re
import unicodedata
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from graphrag.models import Extraction
from graphrag.stores.repo import PgQueries

log = logging.getLogger(__name__)

MAX_TERM_CHARS = 200  # a btree entry has a size limit; nobody types past this many characters anyway
PHRASE_LABEL = "CONCEPT"  # the extractor's label of noun-phrase key phrases
PHRASE_LABELS = frozenset({PHRASE_LABEL})
KINDS = ("entity", "title", "phrase")
_SPACE = re.compile(r"\s+")


def fold(text: str) -> str:
    """The matching form of a term or a typed prefix: NFKC, lower case, runs of white space as one space."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip().lower()


def kind_of(label: str) -> str:
    """``phrase`` for the extractor's key phrases, ``entity`` for every other label."""
    return "phrase" if label in PHRASE_LABELS else "entity"


def document_terms(title: str, named: Iterable[tuple[str, str, int]]) -> list[tuple[str, str, str, int]]:
    """``(kind, norm, display, mentions)`` of one document: its title and its ``(name, label, mentions)``.

    Names that fold to the same text are one term (their mentions added up); empty and overlong
    names are left out.
    """
    out: dict[tuple[str, str], list[Any]] = {}

    def add(kind: str, display: str, mentions: int) -> None:
        display = _SPACE.sub(" ", display).strip()
        norm = fold(display)
        if not norm or len(norm) > MAX_TERM_CHARS or mentions <= 0:
            return
        found = out.get((kind, norm))
        if found is None:
            out[(kind, norm)] = [display, mentions]
        else:
            found[1] += mentions

    if title:
        add("title", title, 1)
    for name, label, mentions in named:
        add(kind_of(label), name, int(mentions))
    return [(kind, norm, display, mentions) for (kind, norm), (display, mentions) in out.items()]


def extraction_terms(title: str, extraction: Extraction | None) -> list[tuple[str, str, str, int]]:
    """The terms of a document from its extraction (mention counts summed over its chunks)."""
    if extraction is None:
        return document_terms(title, ())
    counts: dict[str, int] = {}
    for (_, key), count in extraction.mentions.items():
        counts[key] = counts.get(key, 0) + count
    named = [(e.name, e.label, counts.get(key, 0)) for key, e in extraction.entities.items()]
    named += [(name, PHRASE_LABEL, mentions) for name, mentions in extraction.phrases.values()]
    return document_terms(title, named)


async def remove(uow: PgQueries, document_ids: Sequence[uuid.UUID]) -> None:
    """Take the documents' terms out of the sums (inside the caller's unit of work)."""
    if not document_ids:
        return
    zeroed = await uow.terms.subtract(list(document_ids))
    gone = [r for r in zeroed if r["documents"] <= 0]
    if gone:
        await uow.terms.prune([r["collection"] for r in gone], [r["norm"] for r in gone], [r["kind"] for r in gone])


async def replace(uow: PgQueries, terms: dict[uuid.UUID, list[tuple[str, str, str, int]]]) -> None:
    """The documents' terms become ``terms`` (old ones taken back), inside the caller's unit of work."""
    ids = list(terms)
    if not ids:
        return
    await remove(uow, ids)
    rows = [(doc_id, *term) for doc_id, doc_terms in terms.items() for term in doc_terms]
    if rows:
        await uow.terms.insert(rows)
    await uow.terms.add(ids)


async def rebuild(postgres: Any, neo4j: Any, collection: str, *, page: int = 500) -> dict[str, int]:
    """Fill in the suggestion terms of a collection's documents that have none but their title, from
    their titles (PostgreSQL) and their entities (Neo4j).

    For documents stored before suggestions existed, or written by bulk loaders that bypass the
    ingestion writer; documents the writer gave terms keep them (their key phrases that are not
    entities are not in the graph). Runs page by page, each in one transaction; returns how many
    documents it filled in and the collection's term counts per kind.
    """
    docs = await postgres.q.terms.documents_without_terms(collection)
    for k in range(0, len(docs), page):
        part = docs[k:k + page]
        rows = await neo4j.q.suggest.document_entities(collection, [str(d["id"]) for d in part])
        named: dict[str, list[tuple[str, str, int]]] = {}
        for r in rows:
            if r["name"]:
                named.setdefault(r["document_id"], []).append((r["name"], r["label"] or "", int(r["mentions"] or 1)))
        terms = {d["id"]: document_terms(d["title"] or "", named.get(str(d["id"]), ())) for d in part}
        async with postgres.unit_of_work() as uow:
            await replace(uow, terms)
    counts = await postgres.q.terms.counts(collection)
    log.info("suggestion terms of %d documents of %s filled in from the graph", len(docs), collection)
    return {"documents": len(docs)} | {kind: 0 for kind in KINDS} | counts
