-- Query expansion: statements of graphrag/search/expansion.py. The expanded keyword leg itself is
-- keyword_leg / keyword_scores of search.sql, given the query and its expansions with their weights.

-- name: collection_document_ids
-- A collection's documents in id order, one page after $2 (NULL: from the start), $3 per page.
SELECT id FROM documents WHERE collection = $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3;

-- name: chunk_texts
SELECT document_id, content FROM chunks WHERE document_id = ANY($1::uuid[]) ORDER BY document_id, chunk_index;
