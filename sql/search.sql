-- Search legs. /*FILTER*/ is replaced by a condition compiled from the JSON filter language
-- (graphrag/stores/filters.py): only our own fragments and :filter_n parameters, never user text.

-- name: vector_leg
-- /*VECTOR*/ and /*DIM*/ are the model's dimension (queries.with_dimension): they select the
-- partial HNSW index of that dimension.
SELECT c.id, 1 - (c.embedding::/*VECTOR*/ <=> :embedding::/*VECTOR*/) AS similarity
FROM chunks c JOIN documents d ON d.id = c.document_id
WHERE vector_dims(c.embedding) = /*DIM*/
  AND (:collections::text[] IS NULL OR c.collection = ANY(:collections::text[])) AND c.embedding_model = :model AND (/*FILTER*/)
ORDER BY c.embedding::/*VECTOR*/ <=> :embedding::/*VECTOR*/
LIMIT :limit;

-- name: bm25_terms
-- A fragment, not a statement: the terms of the weighted query strings :texts (the query, and its
-- expansions when query expansion is on) with their weights :weights (1 for the query's own words, less for
-- expanded terms; a term in several strings takes its largest weight), their document frequencies
-- over the requested collections (:collections, NULL = all), and the collection size and mean chunk length.
-- Included by keyword_leg and keyword_scores, so both score with the same statistics.
cols AS (
    SELECT coalesce(:collections::text[], ARRAY(SELECT collection FROM collection_stats)) AS names
), stats AS (
    SELECT greatest(sum(s.chunks), 1)::double precision AS n,
           greatest(sum(s.tokens)::double precision / greatest(sum(s.chunks), 1), 1) AS avgdl
    FROM collection_stats s, cols WHERE s.collection = ANY(cols.names)
), lexemes AS (
    SELECT lx AS lexeme, max(q.weight) AS weight
    FROM unnest(:texts::text[], :weights::float8[]) AS q(text, weight)
    CROSS JOIN (SELECT DISTINCT coalesce(gc.text_config, 'english'::regconfig) AS cfg
                FROM cols, unnest(cols.names) AS n(name) LEFT JOIN collections gc ON gc.name = n.name) cfgs
    CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector(cfgs.cfg, q.text))) AS lx
    GROUP BY lx
), terms AS (
    SELECT t.lexeme, t.weight, coalesce(sum(ls.df), 0)::double precision AS df
    FROM lexemes t
    CROSS JOIN cols
    LEFT JOIN lexeme_stats ls ON ls.collection = ANY(cols.names) AND ls.lexeme = t.lexeme
    GROUP BY t.lexeme, t.weight
)

-- name: keyword_leg
-- BM25 (each term's IDF times its weight) with OR semantics (see bm25_search in
-- migrations/002_search.sql), restricted by the filter.
-- Scored from the postings table (migrations/008_postings.sql): each query term contributes its
-- strongest postings, read in impact order from the index, at most greatest(1000, 20 x the candidates
-- wanted) per term: impact-ordered term-at-a-time evaluation with a per-term cut. A term's postings
-- beyond the cut are its weakest (low term frequency in long chunks), so a chunk missing one loses
-- little; rare terms, which decide most rankings, are read whole. Every score is the exact BM25 of
-- the postings read. The filter (which needs the documents row) is checked on the ranked candidates
-- in score order, so it runs for about :limit rows, not for all of them.
WITH /*INCLUDE bm25_terms*/, weighted AS MATERIALIZED (
    -- Per term, BM25 as idf * (k1 + 1) * tf / (tf + k1 * (1 - b) + k1 * b / avgdl * dl).
    SELECT terms.lexeme, terms.weight * ln(1 + (stats.n - terms.df + 0.5) / (terms.df + 0.5)) * (:k1::float8 + 1) AS gain,
           :k1::float8 * (1 - :b::float8) AS base, :k1::float8 * :b::float8 / stats.avgdl AS per_token,
           -- A term in more than half of the chunks scores, but finds no chunk on its own (unless
           -- every term is that common), as in bm25_search.
           terms.df <= 0.5 * stats.n OR bool_and(terms.df > 0.5 * stats.n) OVER () AS selective
    FROM terms, stats WHERE terms.df > 0
), ranked AS (
    SELECT p.chunk_id AS id, sum(w.gain * p.tf / (p.tf + w.base + w.per_token * p.dl)) AS score
    FROM weighted w CROSS JOIN cols
    CROSS JOIN LATERAL unnest(cols.names) AS searched(collection)
    -- One ordered index range per (collection, term): = on both keys lets the index give impact order.
    CROSS JOIN LATERAL (
        SELECT cp.chunk_id, cp.tf, cp.dl FROM chunk_postings cp
        WHERE cp.collection = searched.collection AND cp.lexeme = w.lexeme
        ORDER BY cp.impact DESC
        LIMIT greatest(1000, 20 * :limit)) p
    GROUP BY p.chunk_id
    HAVING bool_or(w.selective)
    ORDER BY score DESC
    OFFSET 0  -- keeps the sort below the filter, so LIMIT stops the filter early
)
SELECT r.id, r.score,
       ARRAY(SELECT cp.lexeme FROM chunk_postings cp
             WHERE cp.chunk_id = r.id AND cp.lexeme = ANY(ARRAY(SELECT lexeme FROM weighted))) AS matched
FROM ranked r
JOIN chunks c ON c.id = r.id
JOIN documents d ON d.id = c.document_id
WHERE (:collections::text[] IS NULL OR c.collection = ANY(:collections::text[])) AND (/*FILTER*/)
ORDER BY r.score DESC
LIMIT :limit;

-- name: bm25_weights
-- A fragment, not a statement (after bm25_terms): each term's BM25 factors, as keyword_leg computes
-- them but without its `selective` flag.
weighted AS MATERIALIZED (
    SELECT terms.lexeme, terms.weight * ln(1 + (stats.n - terms.df + 0.5) / (terms.df + 0.5)) * (:k1::float8 + 1) AS gain,
           :k1::float8 * (1 - :b::float8) AS base, :k1::float8 * :b::float8 / stats.avgdl AS per_token
    FROM terms, stats WHERE terms.df > 0
)

-- name: bm25_chunk_scores
-- A fragment, not a statement (after bm25_weights): the BM25 score of each of the chunks :chunk_ids
-- that has a query term, from all its postings.
SELECT p.chunk_id AS id, sum(w.gain * p.tf / (p.tf + w.base + w.per_token * p.dl)) AS score
FROM chunk_postings p
JOIN weighted w ON w.lexeme = p.lexeme
WHERE p.chunk_id = ANY(:chunk_ids::uuid[]) AND p.lexeme = ANY(ARRAY(SELECT lexeme FROM weighted))
GROUP BY p.chunk_id

-- name: keyword_scores
-- The BM25 score the keyword leg would give the chunks :chunk_ids (candidates other legs found), with the
-- same IDF and length normalisation as keyword_leg, from all their postings; score fusion fills in
-- the keyword evidence of those candidates with it. Chunks without a query term are not returned.
WITH /*INCLUDE bm25_terms*/, /*INCLUDE bm25_weights*/
/*INCLUDE bm25_chunk_scores*/;

-- name: completion_scores
-- Both completions of score fusion in one round trip: the BM25 score keyword_scores gives the chunks
-- :chunk_ids (the candidates the keyword leg did not return), and the query similarity chunk_similarity
-- gives the chunks :vector_ids of :model (those the vector leg did not return). A row per chunk and
-- kind: kind 'keyword' (chunks without a query term are left out) or 'vector'.
WITH /*INCLUDE bm25_terms*/, /*INCLUDE bm25_weights*/
SELECT k.id, 'keyword' AS kind, k.score FROM (/*INCLUDE bm25_chunk_scores*/) k
UNION ALL
SELECT c.id, 'vector', 1 - (c.embedding <=> :embedding::vector)
FROM chunks c
WHERE c.id = ANY(:vector_ids::uuid[]) AND c.embedding_model = :model;

-- name: chunk_rows
-- The hits' rows, re-checked against collections and the filter (the graph leg relies on this). The
-- vectors only when :vectors (MMR compares them); otherwise they are neither read nor sent.
SELECT c.id, c.document_id, c.collection, c.chunk_index, c.content, c.heading_path, c.char_start, c.char_end,
       c.token_count, c.has_code, c.metadata, CASE WHEN :vectors::boolean THEN c.embedding END AS embedding,
       c.embedding_model, d.source, d.title, d.metadata AS document_metadata, d.tags
FROM chunks c JOIN documents d ON d.id = c.document_id
WHERE c.id = ANY(:ids::uuid[]) AND (:collections::text[] IS NULL OR c.collection = ANY(:collections::text[])) AND (/*FILTER*/);

-- name: chunk_similarity
-- The query similarity of chunks of :model that the vector leg did not return (score completion for
-- fusion): computed here, so that fusion reads a float per candidate instead of its vector and text.
SELECT c.id, 1 - (c.embedding <=> :embedding::vector) AS similarity
FROM chunks c
WHERE c.id = ANY(:ids::uuid[]) AND c.embedding_model = :model;

-- name: checkout_settings
-- Settings for the statement run on one pool checkout (Sql.fetch_where); the pool runs
-- RESET ALL when the connection goes back, which restores the defaults.
SELECT set_config(s.name, s.value, false) FROM unnest(:names::text[], :values::text[]) AS s(name, value);

-- name: collection_chunk_count
SELECT coalesce(sum(chunks), 0)::bigint FROM collection_stats WHERE :collections::text[] IS NULL OR collection = ANY(:collections::text[]);
