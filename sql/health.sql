-- name: server_version
SELECT current_setting('server_version') AS version;

-- name: pgvector_version
SELECT extversion FROM pg_extension WHERE extname = 'vector';
