-- The naive hybrid search of the seed systems, for the side-by-side in bench/search.py (which creates
-- the function): a linear mix of cosine similarity and ts_rank_cd, the tsvector computed from the
-- content at query time, plainto_tsquery (every word required), and the vector side without a limit
-- (every chunk of the collection is scored). Not part of the product.

-- name: create_naive_hybrid
CREATE OR REPLACE FUNCTION bench_naive_hybrid(
    query_text text, query_embedding vector(384), match_count integer, collection_name text,
    semantic_weight double precision DEFAULT 0.7, full_text_weight double precision DEFAULT 0.3)
RETURNS TABLE (id uuid, document_id uuid, content text, score double precision)
LANGUAGE sql STABLE AS $$
WITH semantic AS (
    SELECT c.id, 1 - (c.embedding <=> query_embedding) AS similarity
    FROM chunks c
    WHERE c.collection = collection_name
), keyword AS (
    SELECT c.id, ts_rank_cd(to_tsvector('english', c.content), plainto_tsquery('english', query_text)) AS rank
    FROM chunks c
    WHERE c.collection = collection_name
      AND to_tsvector('english', c.content) @@ plainto_tsquery('english', query_text)
)
SELECT c.id, c.document_id, c.content,
       semantic_weight * coalesce(s.similarity, 0) + full_text_weight * coalesce(k.rank, 0) AS score
FROM semantic s
FULL OUTER JOIN keyword k ON k.id = s.id
JOIN chunks c ON c.id = coalesce(s.id, k.id)
ORDER BY score DESC
LIMIT match_count
$$;

-- name: naive_hybrid
SELECT id, document_id, content, score FROM bench_naive_hybrid($1, $2, $3, $4);

-- name: drop_naive_hybrid
DROP FUNCTION IF EXISTS bench_naive_hybrid(text, vector, integer, text, double precision, double precision);
