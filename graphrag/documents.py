"""Document operations shared by the REST API, the agent tools and the CLI: add, list, get, delete.

Each function takes the :class:`~graphrag.runtime.Runtime` and returns plain JSON-ready dicts; errors
are :mod:`graphrag.errors` exceptions, which every interface maps the same way.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import uuid
import weakref
from collections.abc import Sequence
from typing import Any

from graphrag.errors import InvalidInput, NotFound, ServiceUnavailable
from graphrag.ingest.load import load_bytes, load_text_document
from graphrag.models import Document
from graphrag.runtime import Runtime

MAX_PAGE = 200
_SOURCE_RE = re.compile(r"^[^\x00-\x1f]{1,1000}$")


def _uuid(value: str, what: str = "document") -> uuid.UUID:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise NotFound(f"no {what} with id {value!r}") from None


def _json(value: Any) -> Any:
    # asyncpg hands jsonb back as text (no codec registered for it).
    return json.loads(value) if isinstance(value, str) else (value or {})


def _doc_row(r: Any) -> dict[str, Any]:
    return {
        "id": str(r["id"]),
        "collection": r["collection"],
        "source": r["source"],
        "title": r["title"],
        "metadata": _json(r["metadata"]),
        "tags": list(r["tags"] or []),
        "created_at": r["created_at"].isoformat(),
        "updated_at": r["updated_at"].isoformat(),
    }


async def add_text(rt: Runtime, text: str, *, title: str | None = None, source: str | None = None,
                   collection: str | None = None, metadata: dict[str, Any] | None = None,
                   tags: Sequence[str] = ()) -> dict[str, Any]:
    """Ingest a text (Markdown allowed) as one document. ``source`` defaults to a hash of the text,
    so posting the same text twice is a no-op."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("text is empty")
    check_text(text, "text")
    if title is not None:
        check_text(title, "title")
    metadata = check_metadata(metadata)
    if len(text.encode("utf-8")) > rt.settings.max_file_mb * 1024 * 1024:
        from graphrag.errors import PayloadTooLarge

        raise PayloadTooLarge(f"text is over the {rt.settings.max_file_mb:g} MB limit (GRAPHRAG_MAX_FILE_MB)")
    if source is None:
        source = "text:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]
    _check_source(source)
    doc = load_text_document(text, source=source, title=title, metadata=metadata)
    return await _ingest_one(rt, doc, collection, tags)


async def add_file(rt: Runtime, filename: str, data: bytes, *, source: str | None = None, replace: bool = False,
                   collection: str | None = None, metadata: dict[str, Any] | None = None,
                   tags: Sequence[str] = ()) -> dict[str, Any]:
    """Ingest an uploaded file (md, txt, html, pdf, docx) as one document.

    Its identity (source) is ``source`` when given: posting that source again replaces the document.
    Without it, an upload never replaces a different file silently: the source is the file name when
    no document of the collection has it or when the one that has it came from the same bytes (then
    the upload is a no-op, or an update of tags and metadata); otherwise it is
    ``<file name>#<first 12 hex digits of the bytes' SHA-256>``. With ``replace`` the upload takes the
    file name whatever is stored under it. The bytes' SHA-256 is kept in the metadata as
    ``file_sha256``.
    """
    max_bytes = int(rt.settings.max_file_mb * 1024 * 1024)

    docs = await asyncio.to_thread(load_bytes, filename, data, max_bytes)
    if len(docs) != 1:
        raise InvalidInput(f"{filename}: holds {len(docs)} records; upload one document per request "
                           "(use `graphrag ingest` for JSONL)")
    doc = docs[0]
    if source is not None:
        _check_source(source)
    collection = collection or rt.settings.default_collection
    digest = hashlib.sha256(data).hexdigest()
    extra = {**doc.metadata, **check_metadata(metadata), UPLOAD_HASH_KEY: digest}
    # Same-named uploads take turns, so two at once cannot both find the file name free.
    async with _upload_lock(collection, doc.source):
        src = source or await _upload_source(rt, collection, doc.source, digest, replace)
        _check_source(src)
        doc = Document(source=src, title=doc.title, text=doc.text, kind=doc.kind, metadata=extra, pages=doc.pages,
                       headings=doc.headings)
        return await _ingest_one(rt, doc, collection, tags)


UPLOAD_HASH_KEY = "file_sha256"
_UPLOAD_LOCKS: weakref.WeakValueDictionary[tuple[str, str], asyncio.Lock] = weakref.WeakValueDictionary()


def _upload_lock(collection: str, name: str) -> asyncio.Lock:
    lock = _UPLOAD_LOCKS.get((collection, name))
    if lock is None:
        lock = _UPLOAD_LOCKS[(collection, name)] = asyncio.Lock()
    return lock


async def _upload_source(rt: Runtime, collection: str, name: str, digest: str, replace: bool) -> str:
    """The source of an upload without an explicit one (the rule in :func:`add_file`)."""
    if replace:
        return name
    stored, sha256 = await rt.postgres.q.documents.upload_sha256(collection, name)
    if not stored or sha256 == digest:
        return name
    return f"{name}#{digest[:12]}"


def _check_source(source: Any) -> None:
    if not isinstance(source, str) or not _SOURCE_RE.match(source):
        raise InvalidInput("source must be 1-1000 characters without control characters")
    check_text(source, "source")


def check_text(value: str, name: str) -> str:
    """``value`` when PostgreSQL can store it: no NUL character, no lone surrogate."""
    if "\x00" in value:
        raise InvalidInput(f"{name} contains a NUL character")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{name} is not valid Unicode (a lone surrogate)") from None
    return value


def _walk_strings(value: Any) -> None:
    if isinstance(value, str):
        check_text(value, "metadata")
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(key, "metadata")
            _walk_strings(item)
    elif isinstance(value, list):
        for item in value:
            _walk_strings(item)


def check_metadata(metadata: Any) -> dict[str, Any]:
    """Metadata that round-trips through jsonb: an object of JSON values, valid Unicode, no NUL, no NaN."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        raise InvalidInput("metadata must be an object")
    try:
        text = json.dumps(metadata, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata is not plain JSON ({exc})") from None
    _walk_strings(metadata)
    if len(text) > 64 * 1024:
        raise InvalidInput("metadata is over 64 kB")
    return metadata


def _check_tags(tags: Any) -> list[str]:
    if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) and 0 < len(t) <= 100 for t in tags):
        raise InvalidInput("tags must be a list of strings of 1-100 characters")
    return [check_text(t, "tags") for t in tags]


async def _ingest_one(rt: Runtime, doc: Document, collection: str | None, tags: Sequence[str]) -> dict[str, Any]:
    collection = collection or rt.settings.default_collection
    ingestor = await rt.ingestor()
    report = await ingestor.ingest_documents([(doc, doc.source)], collection=collection, tags=_check_tags(tags))
    if report.failed:
        error = report.failed[0]["error"]
        if "no text" in error:
            raise InvalidInput(f"{doc.source}: {error}")
        raise ServiceUnavailable(f"ingest of {doc.source} failed: {error}")
    if report.documents:
        info = report.documents[0]
        status = "created" if info["status"] == "ingested" else "updated"
        doc_id = info["id"]
    else:
        status = "unchanged"
        found = await rt.postgres.existing_documents(collection, [doc.source])
        doc_id = str(found[doc.source][0])
    chunk_count = await rt.postgres.q.documents.chunk_count(uuid.UUID(doc_id))
    return {
        "id": doc_id,
        "collection": collection,
        "source": doc.source,
        "title": doc.title,
        "status": status,
        "chunks": chunk_count,
        "entities": report.entities,
        "relations": report.relations,
        "seconds": report.seconds,
    }


async def list_documents(rt: Runtime, *, collection: str | None = None, limit: int = 50, offset: int = 0,
                         collections: Sequence[str] | None = None) -> dict[str, Any]:
    """One page of documents, newest first, with their chunk counts and the total; of ``collection``
    or of any of ``collections`` when given (an API key's scope), else of all."""
    scope = list(collections) if collections is not None else ([collection] if collection else None)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE:
        raise InvalidInput(f"limit must be an integer from 1 to {MAX_PAGE}")
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise InvalidInput("offset must be a non-negative integer")
    rows = await rt.postgres.q.documents.page(scope, limit, offset)
    if rows:
        total = rows[0]["total"]
    else:
        total = await rt.postgres.q.documents.count(scope)
    return {
        "documents": [{**_doc_row(r), "chunks": r["chunks"]} for r in rows],
        "total": total,
        "limit": limit,
        "offset": offset,
    }


async def get_document(rt: Runtime, document_id: str, *, chunks: bool = True) -> dict[str, Any]:
    """A document with its chunks (in order)."""
    doc_uuid = _uuid(document_id)
    row = await rt.postgres.q.documents.by_id(doc_uuid)
    if row is None:
        raise NotFound(f"no document with id {document_id!r}")
    out = _doc_row(row)
    chunk_rows = await rt.postgres.q.documents.chunks_of(doc_uuid)
    out["chunk_count"] = len(chunk_rows)
    out["chunks"] = [
        {
            "id": str(c["id"]),
            "index": c["chunk_index"],
            "content": c["content"],
            "heading_path": list(c["heading_path"] or []),
            "char_start": c["char_start"],
            "char_end": c["char_end"],
            "token_count": c["token_count"],
            "metadata": _json(c["metadata"]),
        }
        for c in chunk_rows
    ] if chunks else []
    return out


async def delete_collection(rt: Runtime, collection: str) -> dict[str, Any]:
    """Remove a whole collection from both stores (graphrag/ingest/drop.py): what was deleted."""
    from graphrag.entities import check_collection
    from graphrag.ingest.drop import drop_collection

    check_collection(collection)
    return (await drop_collection(rt.postgres, rt.outbox, collection)).as_dict()


async def delete_document(rt: Runtime, document_id: str) -> dict[str, Any]:
    """Remove a document from both stores."""
    doc_uuid = _uuid(document_id)
    row = await rt.postgres.q.documents.by_id(doc_uuid)
    if row is None:
        raise NotFound(f"no document with id {document_id!r}")
    await rt.deleter().delete(collection=row["collection"], document_id=str(doc_uuid))
    return {"id": str(doc_uuid), "deleted": True}
