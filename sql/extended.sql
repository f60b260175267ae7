-- Extended search: titles, summaries and propositions (migrations/007_extended.sql).

-- name: collection_extended
SELECT extended FROM collections WHERE name = :collection;

-- name: set_collection_extended
UPDATE collections SET extended = :mode, updated_at = now() WHERE name = :collection;

-- name: ensure_representation_index
SELECT graphrag_ensure_representation_index(:dim);

-- name: delete_representations_of_documents
DELETE FROM representations WHERE document_id = ANY(:ids::uuid[]);

-- name: delete_representations_of_collection
DELETE FROM representations WHERE collection = :collection;

-- name: documents_to_represent
-- Documents among :ids (ids) of collection :collection with no representation made by generator :generator.
SELECT d.id, d.title FROM documents d
WHERE d.collection = :collection AND d.id = ANY(:ids::uuid[])
  AND NOT EXISTS (SELECT 1 FROM representations r WHERE r.document_id = d.id AND r.generator = :generator);

-- name: chunks_to_represent
SELECT id, document_id, chunk_index, content FROM chunks
WHERE document_id = ANY(:ids::uuid[]) ORDER BY document_id, chunk_index;

-- name: representation_vector
-- Nearest representations by cosine (the dimension's partial HNSW index, as the chunk vector leg).
-- Titles and summaries have no chunk: the filter's chunk metadata then falls back to the document's.
SELECT r.id, r.document_id, r.chunk_id, r.kind, r.content,
       1 - (r.embedding::/*VECTOR*/ <=> :embedding::/*VECTOR*/) AS similarity
FROM representations r
JOIN documents d ON d.id = r.document_id
LEFT JOIN chunks c ON c.id = r.chunk_id
WHERE vector_dims(r.embedding) = /*DIM*/
  AND (:collections::text[] IS NULL OR r.collection = ANY(:collections::text[])) AND r.embedding_model = :model AND (/*FILTER*/)
ORDER BY r.embedding::/*VECTOR*/ <=> :embedding::/*VECTOR*/
LIMIT :limit;

-- name: representation_terms
-- A fragment: the query's (:query) terms with their document frequencies among the chunks of the searched
-- collections (:collections, NULL = all). Representations restate their chunks, so the chunks' statistics give
-- their terms' IDF.
cols AS (
    SELECT coalesce(:collections::text[], ARRAY(SELECT collection FROM collection_stats)) AS names
), stats AS (
    SELECT greatest(sum(s.chunks), 1)::double precision AS n
    FROM collection_stats s, cols WHERE s.collection = ANY(cols.names)
), terms AS (
    SELECT t.lexeme, coalesce(sum(ls.df), 0)::double precision AS df
    FROM (SELECT DISTINCT lx
          FROM (SELECT DISTINCT coalesce(gc.text_config, 'english'::regconfig) AS cfg
                FROM cols, unnest(cols.names) AS n(name) LEFT JOIN collections gc ON gc.name = n.name) cfgs
          CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector(cfgs.cfg, :query))) AS lx) t(lexeme)
    CROSS JOIN cols
    LEFT JOIN lexeme_stats ls ON ls.collection = ANY(cols.names) AND ls.lexeme = t.lexeme
    GROUP BY t.lexeme
)

-- name: representation_keyword
-- BM25 over representations (OR semantics; candidates from the rarest terms, as the chunk keyword
-- leg), k1 = :k1, b = :b, mean length :mean_words words; the filter as in representation_vector.
-- A term no chunk has (df 0) is the rarest of all and always a candidate: an LLM summary's own words
-- (a paraphrase the document never uses) are what the representation is there to be found by.
WITH /*INCLUDE representation_terms*/, weighted AS (
    SELECT terms.lexeme, ln(1 + (stats.n - terms.df + 0.5) / (terms.df + 0.5)) AS idf,
           sum(terms.df) OVER (ORDER BY terms.df, terms.lexeme) AS df_through,
           terms.df = 0 OR terms.df = min(terms.df) FILTER (WHERE terms.df > 0) OVER () AS rarest,
           terms.df <= 0.5 * stats.n AS selective
    FROM terms, stats
), q AS (
    SELECT (SELECT string_agg(quote_literal(lexeme), ' | ') FROM weighted
            WHERE rarest OR (selective AND df_through <= greatest(2000, 80 * :limit)))::tsquery AS query,
           ARRAY(SELECT lexeme FROM weighted ORDER BY lexeme) AS lexemes,
           ARRAY(SELECT idf FROM weighted ORDER BY lexeme) AS idfs
), ranked AS (
    SELECT r.id,
           (SELECT sum(q.idfs[array_position(q.lexemes, u.lexeme)]
                       * (coalesce(array_length(u.positions, 1), 1) * (:k1::float8 + 1))
                       / (coalesce(array_length(u.positions, 1), 1)
                          + :k1::float8 * (1 - :b::float8 + :b::float8 * greatest(r.token_count, 1) / :mean_words::float8)))
            FROM unnest(ts_filter(setweight(setweight(r.tsv, 'D'), 'A', q.lexemes), '{a}')) u) AS score
    FROM representations r, q
    WHERE q.query IS NOT NULL AND (:collections::text[] IS NULL OR r.collection = ANY(:collections::text[])) AND r.tsv @@ q.query
    ORDER BY score DESC
    OFFSET 0  -- keeps the sort below the filter, so LIMIT stops the filter early
)
SELECT r.id, r.document_id, r.chunk_id, r.kind, r.content, ranked.score, r.embedding, r.embedding_model
FROM ranked
JOIN representations r ON r.id = ranked.id
JOIN documents d ON d.id = r.document_id
LEFT JOIN chunks c ON c.id = r.chunk_id
WHERE (/*FILTER*/)
ORDER BY ranked.score DESC
LIMIT :limit;

-- name: best_chunks_of_documents
-- The chunks of documents :document_ids most similar to the query vector :embedding (chunks of model :model only; others
-- rank after them in reading order), :per_document per document.
SELECT id, document_id, similarity FROM (
    SELECT c.id, c.document_id,
           CASE WHEN c.embedding_model = :model THEN 1 - (c.embedding <=> :embedding) END AS similarity,
           row_number() OVER (PARTITION BY c.document_id
                              ORDER BY CASE WHEN c.embedding_model = :model THEN c.embedding <=> :embedding END NULLS LAST,
                                       c.chunk_index) AS n
    FROM chunks c WHERE c.document_id = ANY(:document_ids::uuid[])
) t
WHERE n <= :per_document;

-- name: reembed_representation_todo
-- Representations of the collection without a vector of the new model; a proposition is embedded
-- under its document's title, as at ingestion.
SELECT r.id, CASE WHEN r.kind = 'proposition' AND btrim(d.title) <> '' THEN btrim(d.title) || ': ' || r.content
                  ELSE r.content END AS text
FROM representations r JOIN documents d ON d.id = r.document_id
WHERE r.collection = :collection AND r.embedding_next IS NULL
ORDER BY r.id
LIMIT :limit;

-- name: reembed_representation_counts
SELECT count(*) AS total, count(*) FILTER (WHERE embedding_next IS NOT NULL) AS done
FROM representations WHERE collection = :collection;

-- name: set_representation_vector
UPDATE representations SET embedding_next = :vector WHERE id = :id;

-- name: reset_representation_vectors
UPDATE representations SET embedding_next = NULL WHERE collection = :collection AND embedding_next IS NOT NULL;

-- name: switch_representations
UPDATE representations SET embedding = embedding_next, embedding_model = :model, embedding_next = NULL
WHERE collection = :collection;
