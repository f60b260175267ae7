-- Asynchronous ingestion jobs (see migrations/005_jobs.sql and graphrag/jobs.py).

-- name: job_columns
-- What a client sees of a job (included by the statements below).
id, kind, collection, status, attempts, created_at, started_at, finished_at, result, error

-- name: enqueue
INSERT INTO jobs (kind, collection, options, content)
VALUES ($1, $2, $3::jsonb, $4)
RETURNING /*INCLUDE job_columns*/;

-- name: get_job
SELECT /*INCLUDE job_columns*/ FROM jobs WHERE id = $1;

-- name: list_jobs
-- Newest first; $1: collections (NULL = all), $2: status (NULL = any).
SELECT /*INCLUDE job_columns*/, count(*) OVER () AS total
FROM jobs
WHERE ($1::text[] IS NULL OR collection = ANY($1::text[])) AND ($2::text IS NULL OR status = $2)
ORDER BY created_at DESC, id
LIMIT $3 OFFSET $4;

-- name: count_jobs
SELECT count(*) AS total FROM jobs
WHERE ($1::text[] IS NULL OR collection = ANY($1::text[])) AND ($2::text IS NULL OR status = $2);

-- name: claim
-- The oldest due queued job, taken by one worker: SKIP LOCKED lets concurrent claimers (API
-- processes, replicas) pass over a row another is taking instead of waiting for it.
UPDATE jobs
SET status = 'running', attempts = attempts + 1, claim = $1, started_at = now(), heartbeat_at = now()
WHERE id = (
    SELECT id FROM jobs
    WHERE status = 'queued' AND run_after <= now()
    ORDER BY created_at, id
    LIMIT 1
    FOR UPDATE SKIP LOCKED
)
RETURNING id, kind, collection, options, content, attempts;

-- name: heartbeat
-- Renews the lease; no row back means the lease was lost (the job was queued again meanwhile).
UPDATE jobs SET heartbeat_at = now() WHERE id = $1 AND claim = $2 AND status = 'running' RETURNING id;

-- name: finish_done
UPDATE jobs
SET status = 'done', result = $3::json, finished_at = now(), content = NULL, claim = NULL
WHERE id = $1 AND claim = $2 AND status = 'running'
RETURNING id;

-- name: finish_failed
UPDATE jobs
SET status = 'failed', error = $3::json, finished_at = now(), content = NULL, claim = NULL
WHERE id = $1 AND claim = $2 AND status = 'running'
RETURNING id;

-- name: retry_later
-- A transient failure (a store away): queued again after $3 seconds.
UPDATE jobs
SET status = 'queued', claim = NULL, last_error = $4, run_after = now() + make_interval(secs => $3::float8)
WHERE id = $1 AND claim = $2 AND status = 'running'
RETURNING id;

-- name: release
-- Graceful shutdown interrupted the attempt: queued again at once, the attempt not counted.
UPDATE jobs
SET status = 'queued', claim = NULL, attempts = greatest(attempts - 1, 0)
WHERE id = $1 AND claim = $2 AND status = 'running'
RETURNING id;

-- name: requeue_stale
-- Running jobs whose lease lapsed ($1 seconds without a heartbeat: their process died) are queued
-- again, or failed with $3 once they have had $2 attempts. Two processes running this at once do
-- not both act on a row: the second re-checks the WHERE clause after the first one's update.
UPDATE jobs
SET status       = CASE WHEN attempts >= $2 THEN 'failed' ELSE 'queued' END,
    claim        = NULL,
    last_error   = 'lease expired',
    finished_at  = CASE WHEN attempts >= $2 THEN now() END,
    content      = CASE WHEN attempts >= $2 THEN NULL ELSE content END,
    error        = CASE WHEN attempts >= $2 THEN $3::json END
WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => $1::float8)
RETURNING id, status, attempts;

-- name: purge_finished
-- Finished jobs older than $1 hours go (their content went when they finished).
DELETE FROM jobs WHERE status IN ('done', 'failed') AND finished_at < now() - make_interval(secs => $1::float8 * 3600);
