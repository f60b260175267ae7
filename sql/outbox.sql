-- The graph outbox (see migrations/003_graph_outbox.sql).

-- name: enqueue
INSERT INTO graph_outbox (collection, op, document_ids, payload, vectors)
VALUES (:collection, :op, :document_ids::uuid[], :payload::jsonb, :vectors)
RETURNING id;

-- name: head
-- The oldest pending entries, in order. The caller stops at the first one not yet due, so a
-- later entry for a document never overtakes an earlier one.
SELECT id, collection, op, document_ids, payload, vectors, attempts, next_attempt_at <= now() AS due
FROM graph_outbox WHERE state = 'pending'
ORDER BY id LIMIT :limit;

-- name: done
DELETE FROM graph_outbox WHERE id = :id;

-- name: retry_later
UPDATE graph_outbox
SET attempts = attempts + 1, last_error = :error, next_attempt_at = now() + make_interval(secs => :delay_s)
WHERE id = :id;

-- name: give_up
-- A write Neo4j keeps refusing (not an outage): set aside so the queue moves on; `graphrag repair` rebuilds it.
UPDATE graph_outbox SET state = 'failed', attempts = attempts + 1, last_error = :error WHERE id = :id;

-- name: summary
SELECT state, count(*) AS entries, min(created_at) AS oldest, max(attempts) AS max_attempts,
       (array_agg(last_error ORDER BY id DESC) FILTER (WHERE last_error IS NOT NULL))[1] AS last_error
FROM graph_outbox GROUP BY state;

-- name: pending_documents
SELECT DISTINCT unnest(document_ids) AS id FROM graph_outbox WHERE collection = :collection;

-- name: clear_failed
DELETE FROM graph_outbox WHERE state = 'failed' AND (:collection::text IS NULL OR collection = :collection);

-- name: drain_lock
-- One drainer at a time across processes, so entries are applied strictly in order.
SELECT pg_advisory_lock(hashtext('graphrag.graph_outbox'));

-- name: drain_unlock
SELECT pg_advisory_unlock(hashtext('graphrag.graph_outbox'));

-- name: set_aside
-- One document's part of an entry Neo4j refused, kept for `graphrag repair` and `graphrag status`.
INSERT INTO graph_outbox (collection, op, document_ids, payload, vectors, state, attempts, last_error)
VALUES (:collection, :op, :document_ids::uuid[], :payload::jsonb, :vectors, 'failed', 1, :error);

-- name: failed_documents
SELECT DISTINCT unnest(document_ids) AS id FROM graph_outbox WHERE state = 'failed' AND collection = :collection;

-- name: set_lock_timeout
-- How long the drainer waits for drain_lock (a setting of the connection, taken back by reset_lock_timeout).
SELECT set_config('lock_timeout', :timeout, false);

-- name: reset_lock_timeout
RESET lock_timeout;
