-- Keyword statistics for BM25 scoring, plus the seed-style SQL search functions.

-- Document frequency of each lexeme per collection, kept in step with chunks by the writer
-- (same transaction), so BM25 IDF is a lookup instead of a scan.
CREATE TABLE IF NOT EXISTS lexeme_stats (
    collection text    NOT NULL,
    lexeme     text    NOT NULL,
    df         integer NOT NULL,
    PRIMARY KEY (collection, lexeme)
);

-- Chunk count and total token count per collection and model (BM25's N and average length).
CREATE TABLE IF NOT EXISTS collection_stats (
    collection text   NOT NULL PRIMARY KEY,
    chunks     bigint NOT NULL DEFAULT 0,
    tokens     bigint NOT NULL DEFAULT 0
);

-- BM25 over the tsvector: OR semantics (any query term matches), IDF from lexeme_stats, term frequency
-- from the tsvector positions, length normalisation by token_count. Index-backed by the GIN index.
-- Terms in more than half of the chunks still score but do not generate candidates.
CREATE OR REPLACE FUNCTION bm25_search(
    query_text text, match_count integer, collections text[], k1 double precision DEFAULT 0.9,
    b double precision DEFAULT 0.4)
RETURNS TABLE (id uuid, score double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
WITH stats AS (
    SELECT greatest(sum(s.chunks), 1)::double precision AS n,
           greatest(sum(s.tokens)::double precision / greatest(sum(s.chunks), 1), 1) AS avgdl
    FROM collection_stats s WHERE s.collection = ANY(collections)
), terms AS (
    SELECT t.lexeme, coalesce(sum(ls.df), 0)::double precision AS df
    FROM unnest(to_tsvector('english', query_text)) t
    LEFT JOIN lexeme_stats ls ON ls.collection = ANY(collections) AND ls.lexeme = t.lexeme
    GROUP BY t.lexeme
), weighted AS (
    SELECT terms.lexeme, terms.df, ln(1 + (stats.n - terms.df + 0.5) / (terms.df + 0.5)) AS idf,
           terms.df <= 0.5 * stats.n AS selective
    FROM terms, stats WHERE terms.df > 0
), q AS (
    SELECT coalesce(
        (SELECT string_agg(quote_literal(lexeme), ' | ') FROM weighted WHERE selective),
        (SELECT string_agg(quote_literal(lexeme), ' | ') FROM weighted))::tsquery AS query
), candidates AS (
    SELECT c.id, c.tsv, c.token_count FROM chunks c, q
    WHERE q.query IS NOT NULL AND c.collection = ANY(collections) AND c.tsv @@ q.query
)
SELECT cand.id,
       sum(w.idf * (coalesce(array_length(u.positions, 1), 1) * (k1 + 1))
           / (coalesce(array_length(u.positions, 1), 1)
              + k1 * (1 - b + b * greatest(cand.token_count, 1) / stats.avgdl))) AS score
FROM candidates cand
CROSS JOIN stats
CROSS JOIN LATERAL unnest(cand.tsv) u
JOIN weighted w ON w.lexeme = u.lexeme
GROUP BY cand.id
ORDER BY score DESC
LIMIT match_count
$$;

-- Pure vector search (cosine) over one embedding model's chunks.
CREATE OR REPLACE FUNCTION match_chunks(
    query_embedding vector(384), match_count integer, collections text[] DEFAULT NULL,
    embedding_model_name text DEFAULT NULL)
RETURNS TABLE (id uuid, document_id uuid, content text, similarity double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
SELECT c.id, c.document_id, c.content, 1 - (c.embedding <=> query_embedding) AS similarity
FROM chunks c
WHERE (collections IS NULL OR c.collection = ANY(collections))
  AND (embedding_model_name IS NULL OR c.embedding_model = embedding_model_name)
ORDER BY c.embedding <=> query_embedding
LIMIT match_count
$$;

-- Hybrid search in the shape users of the seed systems know: reciprocal-rank fusion of the vector
-- ranking and the BM25 ranking, each over-fetched, with per-side weights.
CREATE OR REPLACE FUNCTION hybrid_search(
    query_embedding vector(384), query_text text, match_count integer,
    full_text_weight double precision DEFAULT 1.0, semantic_weight double precision DEFAULT 1.0,
    rrf_k integer DEFAULT 60, collections text[] DEFAULT NULL, embedding_model_name text DEFAULT NULL)
RETURNS TABLE (id uuid, document_id uuid, content text, semantic_similarity double precision,
               keyword_score double precision, rrf_score double precision)
LANGUAGE sql STABLE AS $$
WITH semantic AS (
    SELECT m.id, m.similarity, row_number() OVER (ORDER BY m.similarity DESC) AS rank_ix
    FROM match_chunks(query_embedding, match_count * 4, collections, embedding_model_name) m
), keyword AS (
    SELECT k.id, k.score, row_number() OVER (ORDER BY k.score DESC) AS rank_ix
    FROM bm25_search(query_text, match_count * 4,
                     coalesce(collections, ARRAY(SELECT collection FROM collection_stats))) k
)
SELECT c.id, c.document_id, c.content, s.similarity, k.score,
       coalesce(semantic_weight / (rrf_k + s.rank_ix), 0.0)
       + coalesce(full_text_weight / (rrf_k + k.rank_ix), 0.0) AS rrf_score
FROM semantic s
FULL OUTER JOIN keyword k ON k.id = s.id
JOIN chunks c ON c.id = coalesce(s.id, k.id)
ORDER BY rrf_score DESC
LIMIT match_count
$$;

-- Backfill statistics for chunks written before this migration.
INSERT INTO lexeme_stats (collection, lexeme, df)
SELECT c.collection, u.lexeme, count(*) FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) u GROUP BY 1, 2
ON CONFLICT DO NOTHING;
INSERT INTO collection_stats (collection, chunks, tokens)
SELECT collection, count(*), sum(token_count) FROM chunks GROUP BY collection
ON CONFLICT DO NOTHING;
