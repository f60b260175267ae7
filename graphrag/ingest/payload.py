"""Identity and graph payload of ingested documents: deterministic entity ids, the content hash that
decides whether a document changed, the document on its way through the pipeline, and the parameters
of one batch's graph write (recorded in the outbox, applied to Neo4j)."""

from __future__ import annotations

import hashlib
import json
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from graphrag.ingest.embedders import EmbeddingSpace
from graphrag.ingest.extract import title_key
from graphrag.ingest.representations import Representation
from graphrag.models import Chunk, Document, Extraction, entity_vector_slot
from graphrag.stores.postgres import DocumentRow

ENTITY_NAMESPACE = uuid.UUID("0b6f7d1e-5f1c-4c55-9a7e-6f9b1f3c2a10")


def entity_id(collection: str, key: str) -> str:
    """Deterministic: the same entity of a collection gets the same id from every writer."""
    return str(uuid.uuid5(ENTITY_NAMESPACE, f"{collection}\x1f{key}"))


def content_hash(doc: Document, strategy: str, signature: str, tags: Sequence[str]) -> str:
    """Changes when anything that shapes the stored result changes. The embedding model is not part
    of it: a collection keeps its model, and `graphrag reembed` changes vectors without re-ingesting."""
    payload = json.dumps([doc.title, doc.text, doc.metadata, strategy, signature, sorted(tags)], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class Item:
    """One document on its way through the pipeline."""

    doc: Document
    origin: str  # file path (for reports)
    strategy: str
    row: DocumentRow
    chunks: list[Chunk] = field(default_factory=list)
    embeddings: np.ndarray | None = None
    extraction: Extraction | None = None
    existed: bool = False
    space: EmbeddingSpace | None = None  # the collection's embedding model
    text_config: str = "english"  # the collection's text-search configuration
    extended: str | None = None  # the collection's extended-search mode (None: no representations)
    representations: list[Representation] | None = None
    extractor: Any = None  # the collection's extractor (its glossary), None: the process's own


class GraphPayload:
    """Parameters of one batch's graph write."""

    def __init__(self, collection: str) -> None:
        self.collection = collection
        self.docs: list[dict[str, Any]] = []
        self.next_pairs: list[list[str]] = []
        self.entities: dict[str, dict[str, Any]] = {}
        self.mentions: list[dict[str, Any]] = []
        self.relations: list[dict[str, Any]] = []

    def add(self, doc_id: str, item: Item, chunk_ids: list[str], vectors: dict[str, np.ndarray],
            model: str) -> None:
        ex = item.extraction or Extraction()
        degree = Counter(index for index, _ in ex.mentions)  # entities each chunk mentions
        self.docs.append({
            "id": doc_id, "collection": self.collection, "source": item.row.source, "title": item.row.title,
            "title_norm": title_key(item.row.title),
            "chunks": [{"id": cid, "index": c.index, "text": c.text, "degree": degree[k]}
                       for k, (cid, c) in enumerate(zip(chunk_ids, item.chunks, strict=True))],
        })
        self.next_pairs.extend([[a, b] for a, b in zip(chunk_ids, chunk_ids[1:], strict=False)])
        ids = {key: entity_id(self.collection, key) for key in ex.entities}
        prop = entity_vector_slot(model)[0]
        for key, ent in ex.entities.items():
            vector = vectors.get(f"{model}\x1f{key}")
            entity = self.entities.setdefault(ids[key], {
                "id": ids[key], "collection": self.collection, "name": ent.name, "label": ent.label, "key": key,
                "norm": key.rsplit("|", 1)[0],
                "embedding": vector.tolist() if vector is not None else None, "vector_property": prop,
                "aliases": [],
            })
            if ex.aliases.get(key):
                entity["aliases"] = sorted(set(entity["aliases"]) | ex.aliases[key])
        for (index, key), count in ex.mentions.items():
            self.mentions.append({"chunk_id": chunk_ids[index], "entity_id": ids[key], "count": count,
                                  "label": ex.entities[key].label})
        for (a, b), rel in ex.relations.items():
            src, dst = sorted((ids[a], ids[b]))
            indexes = sorted(rel.chunk_weights)
            self.relations.append({
                "source": src, "target": dst,
                "chunk_ids": [chunk_ids[i] for i in indexes],
                "weights": [rel.chunk_weights[i] for i in indexes],
                "predicate_evidence": sorted(f"{lemma}@{chunk_ids[i]}" for lemma, i in rel.predicates),
            })

    def entity_list(self) -> list[dict[str, Any]]:
        return list(self.entities.values())

    @property
    def document_ids(self) -> list[str]:
        return [d["id"] for d in self.docs]
