-- Document-level statements.

-- name: insert_document
INSERT INTO documents (collection, source, title, content_hash, metadata, tags)
VALUES ($1, $2, $3, $4, $5::jsonb, $6)
RETURNING id;

-- name: insert_chunk
INSERT INTO chunks (document_id, collection, chunk_index, content, heading_path, char_start, char_end,
                    token_count, has_code, metadata, embedding, embedding_model)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12);

-- name: delete_collection
DELETE FROM documents WHERE collection = $1;

-- name: existing_documents
SELECT id, source, content_hash FROM documents WHERE collection = $1 AND source = ANY($2::text[]);

-- name: upsert_document
-- The row lock taken here serialises concurrent ingests of one source until the transaction ends.
INSERT INTO documents (collection, source, title, content_hash, metadata, tags)
VALUES ($1, $2, $3, $4, $5::jsonb, $6)
ON CONFLICT (collection, source) DO UPDATE
    SET title = EXCLUDED.title, content_hash = EXCLUDED.content_hash, metadata = EXCLUDED.metadata,
        tags = EXCLUDED.tags, updated_at = now()
RETURNING id, (xmax = 0) AS inserted;

-- name: delete_chunks_of_document
DELETE FROM chunks WHERE document_id = $1;

-- name: delete_documents
DELETE FROM documents WHERE id = ANY($1::uuid[]) RETURNING id, source;

-- name: document_by_id
SELECT id, collection, source, title, content_hash, metadata, tags, created_at, updated_at
FROM documents WHERE id = $1;

-- name: document_by_source
SELECT id, collection, source, title FROM documents WHERE collection = $1 AND source = $2;

-- name: sources_of_collection
SELECT id, source FROM documents WHERE collection = $1;

-- name: document_ids
SELECT id FROM documents WHERE collection = $1;

-- name: collection_counts
SELECT d.collection, count(DISTINCT d.id) AS documents, count(c.id) AS chunks
FROM documents d LEFT JOIN chunks c ON c.document_id = d.id
GROUP BY d.collection ORDER BY d.collection;
