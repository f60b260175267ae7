-- Portable collections: `graphrag export` reads a collection, `graphrag import` restores it
-- (graphrag/portable.py). Values are parameters; the collection's chunk rows go in by COPY.

-- name: lock_collection
-- Held by an export for its whole run (session level, shared): ingestion goes on, a re-embed's switch
-- (which takes it exclusively, see collections.sql) waits until the export ends.
SELECT pg_advisory_lock_shared(hashtext('graphrag.collection'), hashtext($1));

-- name: unlock_collection
SELECT pg_advisory_unlock_shared(hashtext('graphrag.collection'), hashtext($1));

-- name: export_documents
-- Every document of the collection in id order, with its chunk count (read through a cursor, so the
-- export's memory does not grow with the collection).
SELECT d.id, d.source, d.title, d.content_hash, d.metadata, d.tags, d.created_at, d.updated_at,
       (SELECT count(*) FROM chunks c WHERE c.document_id = d.id) AS chunk_count
FROM documents d
WHERE d.collection = $1
ORDER BY d.id;

-- name: export_chunks
SELECT id, document_id, chunk_index, content, heading_path, char_start, char_end, token_count, has_code,
       metadata, embedding, embedding_model
FROM chunks
WHERE document_id = ANY($1::uuid[])
ORDER BY document_id, chunk_index;

-- name: export_representations
-- The documents' extended-search titles, summaries and propositions (migrations/007_extended.sql).
SELECT id, document_id, chunk_id, kind, content, token_count, generator, embedding, embedding_model
FROM representations
WHERE document_id = ANY($1::uuid[])
ORDER BY document_id, kind, chunk_id NULLS FIRST, content, id;

-- name: foreign_documents
-- Ids an import would write that belong to another collection (such an archive is refused).
SELECT id, collection FROM documents WHERE id = ANY($1::uuid[]) AND collection <> $2 LIMIT 1;

-- name: foreign_chunks
SELECT id, collection FROM chunks WHERE id = ANY($1::uuid[]) AND collection <> $2 LIMIT 1;

-- name: replaced_documents
-- The collection's documents an imported part replaces: the same ids (an earlier import of this
-- archive) or the same sources (documents ingested there before).
SELECT id FROM documents WHERE collection = $1 AND (id = ANY($2::uuid[]) OR source = ANY($3::text[]));

-- name: delete_documents
DELETE FROM documents WHERE id = ANY($1::uuid[]);
