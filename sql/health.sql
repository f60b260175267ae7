-- name: server_version
SELECT current_setting('server_version') AS version;

-- name: pgvector_version
SELECT extversion FROM pg_extension WHERE extname = 'vector';

-- name: set_local
SELECT set_config($1, $2, true);
