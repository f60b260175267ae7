-- Chunk-level statements used by ingestion and search.

-- name: nearest_chunks
-- Pure vector search over the HNSW cosine index, restricted to one collection and embedding model.
SELECT c.id, c.document_id, c.content, 1 - (c.embedding <=> $1) AS similarity
FROM chunks c
WHERE c.collection = $2 AND c.embedding_model = $3
ORDER BY c.embedding <=> $1
LIMIT $4;

-- name: explain_nearest_chunks
EXPLAIN (FORMAT TEXT)
SELECT c.id FROM chunks c
WHERE c.collection = $2 AND c.embedding_model = $3
ORDER BY c.embedding <=> $1
LIMIT $4;
