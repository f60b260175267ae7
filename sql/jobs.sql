-- Asynchronous ingestion jobs (see migrations/005_jobs.sql and graphrag/jobs.py).

-- name: job_columns
-- What a client sees of a job (included by the statements below).
id, kind, collection, status, attempts, created_at, started_at, finished_at, result, error

-- name: enqueue
INSERT INTO jobs (kind, collection, options, content)
VALUES (:kind, :collection, :options::jsonb, :content)
RETURNING /*INCLUDE job_columns*/;

-- name: get_job
SELECT /*INCLUDE job_columns*/ FROM jobs WHERE id = :id;

-- name: list_jobs
-- Newest first, of :collections (NULL = all) and :status (NULL = any).
SELECT /*INCLUDE job_columns*/, count(*) OVER () AS total
FROM jobs
WHERE (:collections::text[] IS NULL OR collection = ANY(:collections::text[])) AND (:status::text IS NULL OR status = :status)
ORDER BY created_at DESC, id
LIMIT :limit OFFSET :offset;

-- name: count_jobs
SELECT count(*) AS total FROM jobs
WHERE (:collections::text[] IS NULL OR collection = ANY(:collections::text[])) AND (:status::text IS NULL OR status = :status);

-- name: claim
-- The oldest due queued job, taken by one worker: SKIP LOCKED lets concurrent claimers (API
-- processes, replicas) pass over a row another is taking instead of waiting for it.
UPDATE jobs
SET status = 'running', attempts = attempts + 1, claim = :claim, started_at = now(), heartbeat_at = now()
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
UPDATE jobs SET heartbeat_at = now() WHERE id = :id AND claim = :claim AND status = 'running' RETURNING id;

-- name: finish_done
UPDATE jobs
SET status = 'done', result = :result::json, finished_at = now(), content = NULL, claim = NULL
WHERE id = :id AND claim = :claim AND status = 'running'
RETURNING id;

-- name: finish_failed
UPDATE jobs
SET status = 'failed', error = :error::json, finished_at = now(), content = NULL, claim = NULL
WHERE id = :id AND claim = :claim AND status = 'running'
RETURNING id;

-- name: retry_later
-- A transient failure (a store away): queued again after :delay_s seconds.
UPDATE jobs
SET status = 'queued', claim = NULL, last_error = :reason, run_after = now() + make_interval(secs => :delay_s::float8)
WHERE id = :id AND claim = :claim AND status = 'running'
RETURNING id;

-- name: release
-- Graceful shutdown interrupted the attempt: queued again at once, the attempt not counted.
UPDATE jobs
SET status = 'queued', claim = NULL, attempts = greatest(attempts - 1, 0)
WHERE id = :id AND claim = :claim AND status = 'running'
RETURNING id;

-- name: requeue_stale
-- Running jobs whose lease lapsed (:lease_s seconds without a heartbeat: their process died) are queued
-- again, or failed with :error once they have had :max_attempts attempts. Two processes running this at once do
-- not both act on a row: the second re-checks the WHERE clause after the first one's update.
UPDATE jobs
SET status       = CASE WHEN attempts >= :max_attempts THEN 'failed' ELSE 'queued' END,
    claim        = NULL,
    last_error   = 'lease expired',
    finished_at  = CASE WHEN attempts >= :max_attempts THEN now() END,
    content      = CASE WHEN attempts >= :max_attempts THEN NULL ELSE content END,
    error        = CASE WHEN attempts >= :max_attempts THEN :error::json END
WHERE status = 'running' AND heartbeat_at < now() - make_interval(secs => :lease_s::float8)
RETURNING id, status, attempts;

-- name: purge_finished
-- Finished jobs older than :retention_h hours go (their content went when they finished).
DELETE FROM jobs WHERE status IN ('done', 'failed') AND finished_at < now() - make_interval(secs => :retention_h::float8 * 3600);
