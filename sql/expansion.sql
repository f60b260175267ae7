-- Query expansion: statements of graphrag/search/expansion.py. The expanded keyword leg itself is
-- keyword_leg / keyword_scores of search.sql, given the query and its expansions with their weights.

-- name: collection_document_ids
-- A collection's documents in id order, one page after :after (NULL: from the start), :limit per page.
SELECT id FROM documents WHERE collection = :collection AND (:after::uuid IS NULL OR id > :after) ORDER BY id LIMIT :limit;

-- name: chunk_texts
SELECT document_id, content FROM chunks WHERE document_id = ANY(:ids::uuid[]) ORDER BY document_id, chunk_index;
