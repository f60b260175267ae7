-- Any embedding model and dimension, and a text-search configuration per collection.
--
-- Vectors are stored as plain `vector` (no fixed dimension). Each dimension in use gets its own
-- partial HNSW index over `embedding::vector(N)` (halfvec past 2,000 dimensions, pgvector's limit for
-- vector indexes), created by graphrag_ensure_vector_index() when a model is first registered; the
-- vector leg repeats that expression, so the planner picks the index.

-- Models that embedded something here: the name chunks record, how to load it again, its dimension.
CREATE TABLE IF NOT EXISTS embedding_models (
    name       text        PRIMARY KEY,
    provider   text        NOT NULL,
    spec       text        NOT NULL,
    dim        integer     NOT NULL CHECK (dim BETWEEN 1 AND 16000),
    base_url   text,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Each collection records its model and text-search configuration; `reembed_model` is set while
-- `graphrag reembed` prepares new vectors (in chunks.embedding_next) that have not been switched in.
CREATE TABLE IF NOT EXISTS collections (
    name            text        PRIMARY KEY,
    embedding_model text        NOT NULL REFERENCES embedding_models (name),
    text_config     regconfig   NOT NULL DEFAULT 'english',
    reembed_model   text        REFERENCES embedding_models (name),
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

DROP INDEX IF EXISTS chunks_embedding_hnsw;
ALTER TABLE chunks ALTER COLUMN embedding TYPE vector;
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS embedding_next vector;
-- The configuration's name travels with each chunk (as text: binary COPY cannot send a regconfig).
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS text_config text NOT NULL DEFAULT 'english';

-- The tsvector follows the chunk's own configuration. The cast of a configuration name is only
-- STABLE (names resolve through search_path); the built-in configurations live in pg_catalog, which
-- is always searched first, and a collection's name is checked against pg_ts_config when it is
-- created, so the result is fixed per row, as a generated column needs.
CREATE OR REPLACE FUNCTION graphrag_tsv(config text, heading_path text[], content text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT setweight(to_tsvector(config::regconfig, graphrag_join(heading_path)), 'A')
           || setweight(to_tsvector(config::regconfig, content), 'B')
$$;
DROP INDEX IF EXISTS chunks_tsv_gin;
ALTER TABLE chunks DROP COLUMN IF EXISTS tsv;
ALTER TABLE chunks ADD COLUMN tsv tsvector GENERATED ALWAYS AS (graphrag_tsv(text_config, heading_path, content)) STORED;
CREATE INDEX IF NOT EXISTS chunks_tsv_gin ON chunks USING gin (tsv);

-- One HNSW index per dimension, over the rows of that dimension only.
CREATE OR REPLACE FUNCTION graphrag_vector_type(dim integer) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$
    SELECT CASE WHEN dim <= 2000 THEN format('vector(%s)', dim) ELSE format('halfvec(%s)', dim) END
$$;

CREATE OR REPLACE FUNCTION graphrag_ensure_vector_index(dim integer) RETURNS text
    LANGUAGE plpgsql AS $$
DECLARE
    index_name text := format('chunks_embedding_hnsw_%s', dim);
    ops text := CASE WHEN dim <= 2000 THEN 'vector_cosine_ops' ELSE 'halfvec_cosine_ops' END;
BEGIN
    IF dim IS NULL OR dim < 1 OR dim > 4000 THEN
        RAISE EXCEPTION 'embedding dimension % cannot be indexed (1 to 4000)', dim;
    END IF;
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON chunks USING hnsw ((embedding::%s) %s) '
                   'WITH (m = 16, ef_construction = 64) WHERE vector_dims(embedding) = %s',
                   index_name, graphrag_vector_type(dim), ops, dim);
    RETURN index_name;
END
$$;

-- Collections and models that exist already (all of them embedded by the 384-dim packaged model).
INSERT INTO embedding_models (name, provider, spec, dim)
SELECT DISTINCT c.embedding_model, 'sentence-transformers', 'sentence-transformers:' || c.embedding_model,
       vector_dims(c.embedding)
FROM chunks c WHERE c.embedding IS NOT NULL
ON CONFLICT (name) DO NOTHING;
INSERT INTO collections (name, embedding_model)
SELECT DISTINCT ON (c.collection) c.collection, c.embedding_model FROM chunks c
ORDER BY c.collection, c.embedding_model
ON CONFLICT (name) DO NOTHING;
SELECT graphrag_ensure_vector_index(dim) FROM (SELECT DISTINCT dim FROM embedding_models) d;
SELECT graphrag_ensure_vector_index(384);

-- The user-facing SQL functions take a query vector of any dimension and use that dimension's index.
DROP FUNCTION IF EXISTS hybrid_search(vector, text, integer, double precision, double precision, integer, text[], text);
DROP FUNCTION IF EXISTS match_chunks(vector, integer, text[], text);

CREATE FUNCTION match_chunks(
    query_embedding vector, match_count integer, collections text[] DEFAULT NULL,
    embedding_model_name text DEFAULT NULL)
RETURNS TABLE (id uuid, document_id uuid, content text, similarity double precision)
LANGUAGE plpgsql STABLE AS $$
DECLARE
    vtype text := graphrag_vector_type(vector_dims(query_embedding));
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT c.id, c.document_id, c.content, (1 - (c.embedding::%1$s <=> $1::%1$s))::double precision
         FROM chunks c
         WHERE vector_dims(c.embedding) = %2$s
           AND ($3::text[] IS NULL OR c.collection = ANY($3::text[]))
           AND ($4::text IS NULL OR c.embedding_model = $4::text)
         ORDER BY c.embedding::%1$s <=> $1::%1$s
         LIMIT $2', vtype, vector_dims(query_embedding))
    USING query_embedding, match_count, collections, embedding_model_name;
END
$$;

CREATE FUNCTION hybrid_search(
    query_embedding vector, query_text text, match_count integer,
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

-- bm25_search parses the query with each searched collection's own configuration.
CREATE OR REPLACE FUNCTION bm25_search(
    query_text text, match_count integer, collections text[], k1 double precision DEFAULT 0.9,
    b double precision DEFAULT 0.4)
RETURNS TABLE (id uuid, score double precision)
LANGUAGE sql STABLE PARALLEL SAFE AS $$
WITH stats AS (
    SELECT greatest(sum(s.chunks), 1)::double precision AS n,
           greatest(sum(s.tokens)::double precision / greatest(sum(s.chunks), 1), 1) AS avgdl
    FROM collection_stats s WHERE s.collection = ANY(collections)
), lexemes AS (
    SELECT DISTINCT t.lexeme
    FROM (SELECT DISTINCT coalesce(gc.text_config, 'english'::regconfig) AS cfg
          FROM unnest(collections) AS n(name) LEFT JOIN collections gc ON gc.name = n.name) cfgs
    CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector(cfgs.cfg, query_text))) AS t(lexeme)
), terms AS (
    SELECT t.lexeme, coalesce(sum(ls.df), 0)::double precision AS df
    FROM lexemes t
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
