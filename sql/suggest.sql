-- Suggestions (search-as-you-type): the terms each document contributes and their per-collection sums.

-- name: subtract
-- Take the documents' terms out of the sums (before their terms are replaced or the documents deleted);
-- returns the sums that dropped to zero, for `prune`. Ordered, so concurrent writers lock rows alike.
WITH gone AS (
    DELETE FROM document_terms t USING documents d
    WHERE t.document_id = ANY(:ids::uuid[]) AND d.id = t.document_id
    RETURNING d.collection, t.norm, t.kind, t.mentions
), agg AS (
    SELECT collection, norm, kind, count(*) AS documents, sum(mentions) AS mentions
    FROM gone GROUP BY collection, norm, kind ORDER BY collection, norm, kind
)
UPDATE suggest_terms s SET documents = s.documents - agg.documents, mentions = s.mentions - agg.mentions
FROM agg
WHERE s.collection = agg.collection AND s.norm = agg.norm AND s.kind = agg.kind
RETURNING s.collection, s.norm, s.kind, s.documents;

-- name: prune
-- Remove sums no document contributes to any more.
DELETE FROM suggest_terms s
USING unnest(:collections::text[], :norms::text[], :kinds::text[]) AS z(collection, norm, kind)
WHERE s.collection = z.collection AND s.norm = z.norm AND s.kind = z.kind AND s.documents <= 0;

-- name: add
-- Add the documents' terms (already in document_terms) to the sums.
INSERT INTO suggest_terms AS s (collection, norm, kind, display, documents, mentions)
SELECT d.collection, t.norm, t.kind, min(t.display), count(*), sum(t.mentions)
FROM document_terms t JOIN documents d ON d.id = t.document_id
WHERE t.document_id = ANY(:ids::uuid[])
GROUP BY d.collection, t.norm, t.kind ORDER BY d.collection, t.norm, t.kind
ON CONFLICT (collection, norm, kind) DO UPDATE
    SET documents = s.documents + EXCLUDED.documents, mentions = s.mentions + EXCLUDED.mentions,
        display = CASE WHEN s.documents <= 0 THEN EXCLUDED.display ELSE s.display END;

-- name: complete
-- Completions of a prefix in the collections (:collections): :low <= norm < :high is the prefix's byte range (norm
-- is in the "C" collation). Only offerable terms are read (the partial indexes' condition, repeated
-- literally so the planner uses them: in a document, and for phrases frequent). Three parts, each
-- bounded, the caller merging them:
-- - the range, at most :range_limit terms in index order, the most used :k of them: exact for most prefixes;
-- - when the range is fuller than that (a short, common prefix), the :k most used matches among each
--   collection's :top_per_collection most used terms;
-- - the term equal to the whole prefix, however rare.
WITH ranged AS MATERIALIZED (
    SELECT collection, norm, kind, display, documents, mentions
    FROM suggest_terms
    WHERE collection = ANY(:collections::text[]) AND norm >= :low AND norm < :high
      AND documents > 0 AND (kind <> 'phrase' OR documents >= 2 OR mentions >= 3)
    LIMIT :range_limit
)
(SELECT * FROM ranged ORDER BY documents DESC, mentions DESC, norm LIMIT :k)
UNION ALL
(SELECT top.collection, top.norm, top.kind, top.display, top.documents, top.mentions
 FROM unnest(:collections::text[]) AS c(name)
 CROSS JOIN LATERAL (
     SELECT collection, norm, kind, display, documents, mentions
     FROM suggest_terms
     WHERE collection = c.name AND documents > 0 AND (kind <> 'phrase' OR documents >= 2 OR mentions >= 3)
     ORDER BY documents DESC, mentions DESC
     LIMIT :top_per_collection
 ) AS top
 WHERE (SELECT count(*) >= :range_limit FROM ranged) AND top.norm >= :low AND top.norm < :high
 ORDER BY top.documents DESC, top.mentions DESC, top.norm
 LIMIT :k)
UNION ALL
(SELECT collection, norm, kind, display, documents, mentions
 FROM suggest_terms
 WHERE collection = ANY(:collections::text[]) AND norm = :low
   AND documents > 0 AND (kind <> 'phrase' OR documents >= 2 OR mentions >= 3));

-- name: collection_names
SELECT name FROM collections ORDER BY name;

-- name: documents_without_terms
-- The collection's documents with no term but their title: stored before suggestions existed, or
-- bulk-loaded past the writer (`graphrag suggest --rebuild` fills them in).
SELECT d.id, d.title FROM documents d
WHERE d.collection = :collection
  AND NOT EXISTS (SELECT 1 FROM document_terms t WHERE t.document_id = d.id AND t.kind <> 'title')
ORDER BY d.id;

-- name: counts
SELECT kind, count(*) AS terms, coalesce(sum(documents), 0)::bigint AS contributions
FROM suggest_terms WHERE collection = :collection AND documents > 0 GROUP BY kind ORDER BY kind;
