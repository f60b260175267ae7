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
