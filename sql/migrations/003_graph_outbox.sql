-- Transactional outbox for graph writes: PostgreSQL is the source of truth, and a document's graph
-- work is recorded in the same transaction as its chunks. A worker applies it to Neo4j in id order
-- (so in order per document), idempotently, retrying with backoff while Neo4j is away.
CREATE TABLE IF NOT EXISTS graph_outbox (
    id              bigserial PRIMARY KEY,
    collection      text        NOT NULL,
    op              text        NOT NULL CHECK (op IN ('replace', 'remove')),
    document_ids    uuid[]      NOT NULL,
    payload         jsonb       NOT NULL,
    vectors         bytea,                  -- entity embeddings, float32, in payload.entities order
    state           text        NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,
    last_error      text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    next_attempt_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS graph_outbox_pending ON graph_outbox (id) WHERE state = 'pending';
