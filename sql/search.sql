-- Search legs. /*FILTER*/ is replaced by a condition compiled from the JSON filter language
-- (graphrag/search/filters.py): only our own fragments and $n placeholders, never user text.

-- name: vector_leg
SELECT c.id, 1 - (c.embedding <=> $1) AS similarity
FROM chunks c JOIN documents d ON d.id = c.document_id
WHERE ($2::text[] IS NULL OR c.collection = ANY($2::text[])) AND c.embedding_model = $3 AND (/*FILTER*/)
ORDER BY c.embedding <=> $1
LIMIT $4;

-- name: keyword_leg
-- BM25 with OR semantics (see bm25_search in migrations/002_search.sql), restricted by the filter.
WITH cols AS (
    SELECT coalesce($2::text[], ARRAY(SELECT collection FROM collection_stats)) AS names
), stats AS (
    SELECT greatest(sum(s.chunks), 1)::double precision AS n,
           greatest(sum(s.tokens)::double precision / greatest(sum(s.chunks), 1), 1) AS avgdl
    FROM collection_stats s, cols WHERE s.collection = ANY(cols.names)
), terms AS (
    SELECT t.lexeme, coalesce(sum(ls.df), 0)::double precision AS df
    FROM unnest(to_tsvector('english', $1)) t
    CROSS JOIN cols
    LEFT JOIN lexeme_stats ls ON ls.collection = ANY(cols.names) AND ls.lexeme = t.lexeme
    GROUP BY t.lexeme
), weighted AS (
    SELECT terms.lexeme, ln(1 + (stats.n - terms.df + 0.5) / (terms.df + 0.5)) AS idf,
           terms.df <= 0.5 * stats.n AS selective
    FROM terms, stats WHERE terms.df > 0
), q AS (
    SELECT coalesce(
        (SELECT string_agg(quote_literal(lexeme), ' | ') FROM weighted WHERE selective),
        (SELECT string_agg(quote_literal(lexeme), ' | ') FROM weighted))::tsquery AS query
), candidates AS (
    SELECT c.id, c.tsv, c.token_count FROM chunks c JOIN documents d ON d.id = c.document_id, q, cols
    WHERE q.query IS NOT NULL AND c.collection = ANY(cols.names) AND c.tsv @@ q.query AND (/*FILTER*/)
)
SELECT cand.id,
       sum(w.idf * (coalesce(array_length(u.positions, 1), 1) * ($4::float8 + 1))
           / (coalesce(array_length(u.positions, 1), 1)
              + $4::float8 * (1 - $5::float8 + $5::float8 * greatest(cand.token_count, 1) / stats.avgdl))) AS score,
       array_agg(u.lexeme) AS matched
FROM candidates cand
CROSS JOIN stats
CROSS JOIN LATERAL unnest(cand.tsv) u
JOIN weighted w ON w.lexeme = u.lexeme
GROUP BY cand.id
ORDER BY score DESC
LIMIT $3;

-- name: chunk_rows
-- The hits' rows, re-checked against collections and the filter (the graph leg relies on this).
SELECT c.id, c.document_id, c.collection, c.chunk_index, c.content, c.heading_path, c.char_start, c.char_end,
       c.token_count, c.has_code, c.metadata, c.embedding, d.source, d.title, d.metadata AS document_metadata, d.tags
FROM chunks c JOIN documents d ON d.id = c.document_id
WHERE c.id = ANY($1::uuid[]) AND ($2::text[] IS NULL OR c.collection = ANY($2::text[])) AND (/*FILTER*/);

-- name: collection_chunk_count
SELECT coalesce(sum(chunks), 0)::bigint FROM collection_stats WHERE $1::text[] IS NULL OR collection = ANY($1::text[]);

-- name: explain_vector_leg
EXPLAIN (FORMAT TEXT)
SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id
WHERE ($2::text[] IS NULL OR c.collection = ANY($2::text[])) AND c.embedding_model = $3
ORDER BY c.embedding <=> $1 LIMIT $4;
