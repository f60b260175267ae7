-- Asynchronous ingestion jobs (POST /documents with `Prefer: respond-async`). The job holds what the
-- synchronous call would have been given, so any API process (worker, replica) can run it, and a
-- job survives a restart. Workers claim queued jobs with FOR UPDATE SKIP LOCKED and renew a lease
-- (heartbeat_at) while they run; a running job whose lease lapsed is queued again, up to a limit.
CREATE TABLE IF NOT EXISTS jobs (
    id           uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    kind         text        NOT NULL CHECK (kind IN ('text', 'file')),
    collection   text        NOT NULL,
    options      jsonb       NOT NULL DEFAULT '{}'::jsonb,  -- filename, title, source, metadata, tags, replace
    content      bytea,                 -- the text (UTF-8) or the file's bytes; dropped when the job ends
    status       text        NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'done', 'failed')),
    attempts     integer     NOT NULL DEFAULT 0,
    claim        uuid,                  -- the running attempt's token: only its holder may finish the job
    last_error   text,                  -- why the last attempt was retried (not shown to clients)
    created_at   timestamptz NOT NULL DEFAULT now(),
    run_after    timestamptz NOT NULL DEFAULT now(),
    started_at   timestamptz,
    heartbeat_at timestamptz,
    finished_at  timestamptz,
    -- json, not jsonb: the body keeps its key order, as the synchronous call writes it.
    result       json,                  -- done: the body the synchronous call answers
    error        json                   -- failed: problem details
);
-- Uploads are mostly compressed already (PDF, DOCX): store them as they are.
ALTER TABLE jobs ALTER COLUMN content SET STORAGE EXTERNAL;
CREATE INDEX IF NOT EXISTS jobs_queued ON jobs (created_at) WHERE status = 'queued';
CREATE INDEX IF NOT EXISTS jobs_running ON jobs (heartbeat_at) WHERE status = 'running';
CREATE INDEX IF NOT EXISTS jobs_finished ON jobs (finished_at) WHERE status IN ('done', 'failed');
CREATE INDEX IF NOT EXISTS jobs_by_collection ON jobs (collection, created_at DESC);
