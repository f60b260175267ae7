-- Keyword postings (migrations/008_postings.sql), written with the BM25 statistics (documents.sql
-- stats_add / stats_subtract) in the same transaction.

-- name: postings_add
-- The documents' chunks' postings; impact orders a term's postings (k1 = 0.9, b = 0.4, the mean
-- length of the collection now).
INSERT INTO chunk_postings (chunk_id, lexeme, collection, tf, dl, impact)
SELECT c.id, u.lexeme, c.collection, least(coalesce(array_length(u.positions, 1), 1), 32767),
       greatest(c.token_count, 1),
       coalesce(array_length(u.positions, 1), 1) * 1.9
       / (coalesce(array_length(u.positions, 1), 1)
          + 0.9 * (0.6 + 0.4 * greatest(c.token_count, 1) / greatest(s.tokens::float8 / greatest(s.chunks, 1), 1)))
FROM chunks c
JOIN collection_stats s ON s.collection = c.collection
CROSS JOIN LATERAL unnest(c.tsv) u
WHERE c.document_id = ANY(:ids::uuid[])
ON CONFLICT (chunk_id, lexeme) DO UPDATE
    SET collection = EXCLUDED.collection, tf = EXCLUDED.tf, dl = EXCLUDED.dl, impact = EXCLUDED.impact;

-- name: postings_remove
-- The documents' chunks' postings, before the chunks go.
DELETE FROM chunk_postings p USING chunks c WHERE c.document_id = ANY(:ids::uuid[]) AND p.chunk_id = c.id;
