-- Bench-only statements of bench/global_eval.py. Loaded by name (bench/common.py).

-- name: collection_sources
SELECT source FROM documents WHERE collection = $1;
