-- Collections and the embedding models they record (migrations/004_models_and_languages.sql).

-- name: register_model
-- A model's first use records it; later uses read back what was recorded (the dimension decides).
INSERT INTO embedding_models (name, provider, spec, dim, base_url)
VALUES (:name, :provider, :spec, :dim, :base_url)
ON CONFLICT (name) DO UPDATE SET name = EXCLUDED.name
RETURNING name, provider, spec, dim, base_url;

-- name: model_by_name
SELECT name, provider, spec, dim, base_url FROM embedding_models WHERE name = :name;

-- name: ensure_vector_index
SELECT graphrag_ensure_vector_index(:dim);

-- name: text_config_exists
SELECT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = :text_config) AS ok;

-- name: create_collection
INSERT INTO collections (name, embedding_model, text_config)
VALUES (:name, :model, :text_config::regconfig)
ON CONFLICT (name) DO NOTHING;

-- name: collection_info
-- What searches and writes need to know of some collections (all of them when :names is NULL).
SELECT gc.name, gc.embedding_model, gc.text_config::text AS text_config, gc.reembed_model,
       m.provider, m.spec, m.dim, m.base_url,
       r.provider AS reembed_provider, r.spec AS reembed_spec, r.dim AS reembed_dim, r.base_url AS reembed_base_url,
       (SELECT v.index_name FROM collection_vector_indexes v WHERE v.collection = gc.name AND v.dim = m.dim)
           AS vector_index
FROM collections gc
JOIN embedding_models m ON m.name = gc.embedding_model
LEFT JOIN embedding_models r ON r.name = gc.reembed_model
WHERE :names::text[] IS NULL OR gc.name = ANY(:names::text[])
ORDER BY gc.name;

-- name: lock_collection
-- Taken by a re-embed's start and switch: waits for the collection's writers (who hold it shared).
SELECT pg_advisory_xact_lock(hashtext('graphrag.collection'), hashtext(:collection));

-- name: lock_collection_shared
-- Taken by every write of chunks, which then checks the model it embedded with is still current.
SELECT pg_advisory_xact_lock_shared(hashtext('graphrag.collection'), hashtext(:collection));

-- name: collection_model
SELECT embedding_model, text_config::text AS text_config FROM collections WHERE name = :collection;

-- name: start_reembed
UPDATE collections SET reembed_model = :model, updated_at = now() WHERE name = :collection;

-- name: reset_reembed_vectors
-- A re-embed to another model than the one begun: vectors of the abandoned run are not reused.
UPDATE chunks SET embedding_next = NULL WHERE collection = :collection AND embedding_next IS NOT NULL;

-- name: reembed_todo
-- The next chunks without a new vector (resumable: finished chunks are never embedded twice).
SELECT c.id, c.content, c.heading_path, c.token_count
FROM chunks c
WHERE c.collection = :collection AND c.embedding_next IS NULL
ORDER BY c.id
LIMIT :limit;

-- name: reembed_counts
SELECT count(*) AS total, count(*) FILTER (WHERE embedding_next IS NOT NULL) AS done
FROM chunks WHERE collection = :collection;

-- name: set_reembed_vector
UPDATE chunks SET embedding_next = :vector WHERE id = :id;

-- name: switch_chunks
-- The switch, run in one transaction with switch_collection under the collection's lock: every
-- chunk's new vector becomes its vector.
UPDATE chunks SET embedding = embedding_next, embedding_model = :model, embedding_next = NULL
WHERE collection = :collection;

-- name: switch_collection
UPDATE collections SET embedding_model = :model, reembed_model = NULL, updated_at = now() WHERE name = :collection;

-- name: collections_due_vector_index
-- Collections of at least :min_chunks chunks that share their dimension's index with another
-- collection and have no index of their own for that dimension yet (migrations/009).
SELECT s.collection, m.dim
FROM collection_stats s
JOIN collections gc ON gc.name = s.collection
JOIN embedding_models m ON m.name = gc.embedding_model
WHERE s.chunks >= :min_chunks
  AND NOT EXISTS (SELECT 1 FROM collection_vector_indexes v WHERE v.collection = s.collection AND v.dim = m.dim)
  AND EXISTS (SELECT 1 FROM collection_stats o
              JOIN collections og ON og.name = o.collection
              JOIN embedding_models om ON om.name = og.embedding_model
              WHERE o.collection <> s.collection AND om.dim = m.dim AND o.chunks > 0)
ORDER BY s.collection;

-- name: ensure_collection_vector_index
SELECT graphrag_ensure_collection_vector_index(:collection, :dim);

-- name: collection_vector_indexes
SELECT collection, dim, index_name, created_at FROM collection_vector_indexes
WHERE :names::text[] IS NULL OR collection = ANY(:names::text[])
ORDER BY collection, dim;

-- name: drop_collection_rows
-- Everything the collection holds in PostgreSQL: documents (their chunks, terms and representations
-- by cascade), keyword postings and statistics, suggestion terms, graph outbox entries, jobs not
-- running, and the collection's row with its own vector indexes' rows; the documents and chunks
-- deleted, and the names of those indexes (dropped after the commit, without blocking searches).
WITH counts AS MATERIALIZED (
    SELECT (SELECT count(*) FROM documents WHERE collection = :collection) AS documents,
           (SELECT count(*) FROM chunks WHERE collection = :collection) AS chunks
), postings AS (DELETE FROM chunk_postings WHERE collection = :collection),
   lexemes AS (DELETE FROM lexeme_stats WHERE collection = :collection),
   stats AS (DELETE FROM collection_stats WHERE collection = :collection),
   terms AS (DELETE FROM suggest_terms WHERE collection = :collection),
   outbox AS (DELETE FROM graph_outbox WHERE collection = :collection),
   jobs AS (DELETE FROM jobs WHERE collection = :collection AND status <> 'running'),
   docs AS (DELETE FROM documents WHERE collection = :collection),
   indexes AS (DELETE FROM collection_vector_indexes WHERE collection = :collection RETURNING index_name),
   gone AS (DELETE FROM collections WHERE name = :collection)
SELECT counts.documents, counts.chunks,
       ARRAY(SELECT index_name FROM indexes ORDER BY index_name) AS indexes
FROM counts;

-- name: drop_vector_index
-- A collection's own HNSW index, after the drop committed. CONCURRENTLY: searches of the other
-- collections keep running. An index name cannot be a parameter: /*INDEX*/ is filled from
-- collection_vector_indexes (checked to be chunks_hnsw_<dim>_<16 hex digits>).
DROP INDEX CONCURRENTLY IF EXISTS /*INDEX*/;
