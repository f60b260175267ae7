-- Document-level statements.

-- name: existing_documents
SELECT id, source, content_hash FROM documents WHERE collection = :collection AND source = ANY(:sources::text[]);

-- name: upsert_document
-- The row lock taken here serialises concurrent ingests of one source until the transaction ends.
INSERT INTO documents (collection, source, title, content_hash, metadata, tags)
VALUES (:collection, :source, :title, :content_hash, :metadata::jsonb, :tags)
ON CONFLICT (collection, source) DO UPDATE
    SET title = EXCLUDED.title, content_hash = EXCLUDED.content_hash, metadata = EXCLUDED.metadata,
        tags = EXCLUDED.tags, updated_at = now()
RETURNING id, (xmax = 0) AS inserted;

-- name: delete_chunks_of_documents
DELETE FROM chunks WHERE document_id = ANY(:ids::uuid[]);

-- name: delete_documents
DELETE FROM documents WHERE id = ANY(:ids::uuid[]) RETURNING id, source;

-- name: document_by_id
SELECT id, collection, source, title, content_hash, metadata, tags, created_at, updated_at
FROM documents WHERE id = :id;

-- name: document_by_source
SELECT id, collection, source, title FROM documents WHERE collection = :collection AND source = :source;

-- name: upload_identity
-- The upload stored under a file name: which file (the SHA-256 of its bytes) it was.
SELECT id, metadata ->> 'file_sha256' AS file_sha256 FROM documents WHERE collection = :collection AND source = :source;

-- name: sources_of_collection
SELECT id, source FROM documents WHERE collection = :collection;

-- name: document_ids
SELECT id FROM documents WHERE collection = :collection;

-- name: collection_counts
SELECT d.collection, count(DISTINCT d.id) AS documents, count(c.id) AS chunks
FROM documents d LEFT JOIN chunks c ON c.document_id = d.id
GROUP BY d.collection ORDER BY d.collection;

-- name: collection_totals
-- One collection's counts (the ingest summary's totals); both tables are indexed by collection.
SELECT (SELECT count(*) FROM documents WHERE collection = :collection) AS documents,
       (SELECT count(*) FROM chunks WHERE collection = :collection) AS chunks;

-- name: stats_subtract
-- Take the documents' chunks out of the BM25 statistics (before their chunks are deleted).
WITH gone AS (
    SELECT c.collection, u.lexeme, count(*) AS n
    FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) u
    WHERE c.document_id = ANY(:ids::uuid[])
    GROUP BY c.collection, u.lexeme ORDER BY c.collection, u.lexeme
), lex AS (
    UPDATE lexeme_stats s SET df = s.df - gone.n FROM gone
    WHERE s.collection = gone.collection AND s.lexeme = gone.lexeme
)
UPDATE collection_stats s SET chunks = s.chunks - t.chunks, tokens = s.tokens - t.tokens
FROM (SELECT collection, count(*) AS chunks, sum(token_count) AS tokens FROM chunks
      WHERE document_id = ANY(:ids::uuid[]) GROUP BY collection) t
WHERE s.collection = t.collection;

-- name: stats_add
-- Add the documents' chunks to the BM25 statistics (after their chunks are written).
WITH added AS (
    SELECT c.collection, u.lexeme, count(*) AS n
    FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) u
    WHERE c.document_id = ANY(:ids::uuid[])
    GROUP BY c.collection, u.lexeme ORDER BY c.collection, u.lexeme
), lex AS (
    INSERT INTO lexeme_stats (collection, lexeme, df) SELECT collection, lexeme, n FROM added
    ON CONFLICT (collection, lexeme) DO UPDATE SET df = lexeme_stats.df + EXCLUDED.df
)
INSERT INTO collection_stats (collection, chunks, tokens)
SELECT collection, count(*), sum(token_count) FROM chunks WHERE document_id = ANY(:ids::uuid[]) GROUP BY collection
ON CONFLICT (collection) DO UPDATE
    SET chunks = collection_stats.chunks + EXCLUDED.chunks, tokens = collection_stats.tokens + EXCLUDED.tokens;

-- name: list_documents
-- One page of documents (newest first), optionally of some collections, with chunk counts and the total.
SELECT d.id, d.collection, d.source, d.title, d.metadata, d.tags, d.created_at, d.updated_at,
       (SELECT count(*) FROM chunks c WHERE c.document_id = d.id) AS chunks,
       count(*) OVER () AS total
FROM documents d
WHERE :collections::text[] IS NULL OR d.collection = ANY(:collections::text[])
ORDER BY d.updated_at DESC, d.id
LIMIT :limit OFFSET :offset;

-- name: count_documents
SELECT count(*) AS total FROM documents WHERE :collections::text[] IS NULL OR collection = ANY(:collections::text[]);

-- name: document_chunks
SELECT id, chunk_index, content, heading_path, char_start, char_end, token_count, metadata
FROM chunks WHERE document_id = :document_id ORDER BY chunk_index;

-- name: chunks_by_id
SELECT c.id, c.document_id, c.collection, c.chunk_index, c.content, c.heading_path, c.metadata, d.source, d.title
FROM chunks c JOIN documents d ON d.id = c.document_id
WHERE c.id = ANY(:ids::uuid[]) AND (:collections::text[] IS NULL OR c.collection = ANY(:collections::text[]));

-- name: document_chunk_count
SELECT count(*) AS chunks FROM chunks WHERE document_id = :document_id;

-- name: collections_of
SELECT collection, array_agg(id) AS ids FROM documents WHERE id = ANY(:ids::uuid[]) GROUP BY collection;

-- name: documents_by_ids
SELECT id, collection, source, title FROM documents WHERE id = ANY(:ids::uuid[]);

-- name: chunks_of_documents
SELECT id, document_id, chunk_index, content, heading_path, char_start, char_end
FROM chunks WHERE document_id = ANY(:ids::uuid[]) ORDER BY document_id, chunk_index;

-- name: chunk_ids_of_collection
SELECT document_id, array_agg(id::text ORDER BY chunk_index) AS chunk_ids
FROM chunks WHERE collection = :collection GROUP BY document_id;

-- name: collections
SELECT DISTINCT collection FROM documents ORDER BY collection;
