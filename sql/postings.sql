-- Keyword postings (migrations/008_postings.sql), written with the BM25 statistics (documents.sql
-- stats_add / stats_subtract) in the same transaction.

-- name: postings_add
-- The postings of the documents' chunks (their impact uses the collection's mean length now).
INSERT INTO chunk_postings (chunk_id, lexeme, collection, tf, dl, impact)
SELECT chunk_id, lexeme, collection, tf, dl, impact FROM chunk_postings_due WHERE document_id = ANY(:ids::uuid[])
ON CONFLICT (chunk_id, lexeme) DO UPDATE
    SET collection = EXCLUDED.collection, tf = EXCLUDED.tf, dl = EXCLUDED.dl, impact = EXCLUDED.impact;

-- name: postings_remove
-- The documents' chunks' postings, before the chunks go.
DELETE FROM chunk_postings p USING chunks c WHERE c.document_id = ANY(:ids::uuid[]) AND p.chunk_id = c.id;
