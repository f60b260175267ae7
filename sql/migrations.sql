-- Statements of the migration runner itself (the migrations are in sql/migrations/NNN_name.sql).

-- name: create_migrations_table
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    text PRIMARY KEY,
    checksum   text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);

-- name: lock_migrations
-- Serialises concurrent starters (several API workers, CLI + tests) on one advisory lock.
SELECT pg_advisory_xact_lock(hashtext('graphrag.migrations'));

-- name: applied_migrations
SELECT version, checksum FROM schema_migrations ORDER BY version;

-- name: record_migration
INSERT INTO schema_migrations (version, checksum) VALUES (:version, :checksum);

-- name: advisory_lock
-- A named lock across processes sharing the database, e.g. around the graph schema at start.
SELECT pg_advisory_lock(hashtext(:name));

-- name: advisory_unlock
SELECT pg_advisory_unlock(hashtext(:name));
