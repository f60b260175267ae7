-- A collection's own HNSW index: partial on the collection and its dimension. The dimension's shared
-- index (004) serves every collection; a search of one collection filters that index's neighbours,
-- and when the query's nearest chunks belong to other collections the scan reads through all of
-- them first. A large collection that shares its dimension with others gets an index of its own,
-- which a search of that collection (a custom plan: the collection is a constant) uses instead.
CREATE TABLE IF NOT EXISTS collection_vector_indexes (
    collection text        NOT NULL,
    dim        integer     NOT NULL,
    index_name text        NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (collection, dim)
);

CREATE OR REPLACE FUNCTION graphrag_ensure_collection_vector_index(coll text, coll_dim integer) RETURNS text
    LANGUAGE plpgsql AS $$
DECLARE
    -- md5: collection names allow '.', '-' and 64 characters; an index name must stay an identifier.
    idx text := format('chunks_hnsw_%s_%s', coll_dim, left(md5(coll), 16));
    ops text := CASE WHEN coll_dim <= 2000 THEN 'vector_cosine_ops' ELSE 'halfvec_cosine_ops' END;
BEGIN
    IF coll_dim IS NULL OR coll_dim < 1 OR coll_dim > 4000 THEN
        RAISE EXCEPTION 'embedding dimension % cannot be indexed (1 to 4000)', coll_dim;
    END IF;
    -- The graph of a large collection builds several times faster when it fits in memory.
    PERFORM set_config('maintenance_work_mem', '512MB', true);
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON chunks USING hnsw ((embedding::%s) %s) '
                   'WITH (m = 16, ef_construction = 64) WHERE vector_dims(embedding) = %s AND collection = %L',
                   idx, graphrag_vector_type(coll_dim), ops, coll_dim, coll);
    INSERT INTO collection_vector_indexes (collection, dim, index_name) VALUES (coll, coll_dim, idx)
    ON CONFLICT (collection, dim) DO NOTHING;
    RETURN idx;
END
$$;
