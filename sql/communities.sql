-- Communities (graphrag/communities): what a collection held when its communities were computed.

-- name: collection_signatures
-- A collection's documents: how many and when the last one was written. Any ingest that adds,
-- replaces or deletes a document changes it, so reports computed under another signature are stale.
SELECT collection, count(*)::text || '@' || coalesce(to_char(max(updated_at) AT TIME ZONE 'UTC',
       'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), '') AS signature
FROM documents
WHERE collection = ANY(:collections::text[])
GROUP BY collection;
