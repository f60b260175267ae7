-- Bench-only statements of bench/generate.py (scale corpora) and bench/search.py.
-- Loaded by name (bench/common.py); values are parameters.

-- name: source_chunks
SELECT c.id, c.document_id, c.chunk_index, c.content, c.heading_path, c.token_count, c.embedding,
       c.embedding_model, d.source, d.title
FROM chunks c JOIN documents d ON d.id = c.document_id
WHERE c.collection = $1
ORDER BY d.source, c.chunk_index;

-- name: collection_documents
SELECT count(*) AS n FROM documents WHERE collection = $1;

-- name: delete_documents
DELETE FROM documents WHERE collection = $1;

-- name: delete_lexeme_stats
DELETE FROM lexeme_stats WHERE collection = $1;

-- name: delete_suggest_terms
-- The collection's suggestion sums (its documents' terms go with the documents).
DELETE FROM suggest_terms WHERE collection = $1;

-- name: delete_collection_stats
DELETE FROM collection_stats WHERE collection = $1;

-- name: add_lexeme_stats
-- BM25 statistics of a bulk-loaded collection in one pass (the ingest writer keeps them per batch).
INSERT INTO lexeme_stats (collection, lexeme, df)
SELECT $1, u.lexeme, count(*) FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) u
WHERE c.collection = $1 GROUP BY u.lexeme;

-- name: add_collection_stats
INSERT INTO collection_stats (collection, chunks, tokens)
SELECT $1, count(*), coalesce(sum(token_count), 0) FROM chunks WHERE collection = $1;

-- name: add_postings
-- The keyword leg's postings (sql/migrations/008_postings.sql), as the writer makes them, after the
-- collection's statistics (a posting's impact uses its mean chunk length).
INSERT INTO chunk_postings (chunk_id, lexeme, collection, tf, dl, impact)
SELECT chunk_id, lexeme, collection, tf, dl, impact FROM chunk_postings_due WHERE collection = $1
ON CONFLICT (chunk_id, lexeme) DO NOTHING;

-- name: delete_postings
DELETE FROM chunk_postings WHERE collection = $1;

-- name: drop_hnsw
-- The 384-dim index (all scale corpora derive from MiniLM vectors).
DROP INDEX IF EXISTS chunks_embedding_hnsw_384;

-- name: drop_gin
DROP INDEX IF EXISTS chunks_tsv_gin;

-- name: create_hnsw
-- Exactly the index graphrag_ensure_vector_index(384) makes (sql/migrations/004_models_and_languages.sql).
SELECT graphrag_ensure_vector_index(384);

-- name: register_collection
-- The scale collection records the model and configuration of the collection it derives from.
INSERT INTO collections (name, embedding_model, text_config)
SELECT $1, embedding_model, text_config FROM collections WHERE name = $2
ON CONFLICT (name) DO UPDATE SET embedding_model = EXCLUDED.embedding_model, text_config = EXCLUDED.text_config;

-- name: delete_collection_record
DELETE FROM collections WHERE name = $1;

-- name: create_gin
CREATE INDEX IF NOT EXISTS chunks_tsv_gin ON chunks USING gin (tsv);

-- name: analyze
ANALYZE chunks, documents, lexeme_stats, collection_stats;

-- name: relation_sizes
SELECT c.relname AS name, pg_total_relation_size(c.oid) AS total, pg_relation_size(c.oid) AS main
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = 'public' AND c.relkind IN ('r', 'i', 't')
  AND c.relname = ANY(ARRAY['documents', 'chunks', 'lexeme_stats', 'collection_stats', 'chunks_embedding_hnsw_384',
                            'chunks_tsv_gin', 'chunks_pkey', 'chunks_collection_idx', 'chunks_document_idx',
                            'chunks_document_index_key', 'documents_pkey', 'documents_collection_source_key',
                            'documents_collection_idx', 'documents_metadata_gin', 'lexeme_stats_pkey']);

-- name: database_size
SELECT pg_database_size(current_database()) AS bytes;

-- name: table_rows
SELECT collection, count(*) AS n FROM chunks GROUP BY collection ORDER BY collection;

-- name: document_sources
-- Document id -> the SciFact id it derives from (metadata.src) or its own source (the real collection).
SELECT d.id, coalesce(d.metadata ->> 'src', d.source) AS src FROM documents d WHERE d.collection = $1;

-- name: exact_neighbours
-- Exact cosine top-k of a collection (no index: the ground truth for the HNSW recall figure).
SELECT c.id FROM chunks c
WHERE c.collection = $2 AND c.embedding_model = $3
ORDER BY c.embedding <=> $1 LIMIT $4;

-- name: derived_chunks
-- Source chunk -> derived chunk of a generated collection (same chunk_index in the document it copies).
SELECT s.id::text AS source_id, c.id::text AS derived_id
FROM chunks c
JOIN documents d ON d.id = c.document_id
JOIN documents sd ON sd.collection = $2 AND sd.source = d.metadata ->> 'src'
JOIN chunks s ON s.document_id = sd.id AND s.chunk_index = c.chunk_index
WHERE c.collection = $1;

-- name: set_local
-- One setting for the rest of the transaction (the plans of bench/search.py under a leg's settings).
SELECT set_config($1, $2, true);
