-- Chunk-level statements used by ingestion and search.

-- name: nearest_chunks
-- Pure vector search over the HNSW cosine index, restricted to one collection and embedding model.
SELECT c.id, c.document_id, c.content, 1 - (c.embedding::/*VECTOR*/ <=> $1::/*VECTOR*/) AS similarity
FROM chunks c
WHERE vector_dims(c.embedding) = /*DIM*/ AND c.collection = $2 AND c.embedding_model = $3
ORDER BY c.embedding::/*VECTOR*/ <=> $1::/*VECTOR*/
LIMIT $4;

-- name: explain_nearest_chunks
EXPLAIN (FORMAT TEXT)
SELECT c.id FROM chunks c
WHERE vector_dims(c.embedding) = /*DIM*/ AND c.collection = $2 AND c.embedding_model = $3
ORDER BY c.embedding::/*VECTOR*/ <=> $1::/*VECTOR*/
LIMIT $4;
