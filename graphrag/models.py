"""Domain types shared by ingestion, search and the interfaces."""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import Any


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
    can keep pages apart. ``kind`` picks the default chunker (markdown, text, pdf, record).
    """

    source: str
    title: str
    text: str
    kind: str
    metadata: dict[str, Any] = field(default_factory=dict)
    pages: tuple[tuple[int, int], ...] = ()


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
