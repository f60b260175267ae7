-- Extended search: per-document titles and summaries and per-chunk propositions, each embedded with
-- the collection's model and full-text indexed, so a search can match them first and return the
-- chunks they stand for (graphrag/ingest/representations.py, graphrag/search/extended.py).

-- The representation mode a collection was last ingested with (NULL = none): later ingests into the
-- collection keep making them, so a changed document never keeps a stale summary or loses its own.
ALTER TABLE collections ADD COLUMN IF NOT EXISTS extended text;
ALTER TABLE collections DROP CONSTRAINT IF EXISTS collections_extended_check;
ALTER TABLE collections ADD CONSTRAINT collections_extended_check CHECK (extended IN ('extractive', 'llm'));

-- Titles and summaries belong to a document (chunk_id NULL: all of the document's chunks are their
-- targets); a proposition belongs to the chunk it was taken from. Both foreign keys cascade, so a
-- deleted document, and the chunks a replaced document drops, take their representations with them.
CREATE TABLE IF NOT EXISTS representations (
    id              uuid    PRIMARY KEY DEFAULT gen_random_uuid(),
    collection      text    NOT NULL,
    document_id     uuid    NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    chunk_id        uuid    REFERENCES chunks (id) ON DELETE CASCADE,
    kind            text    NOT NULL CHECK (kind IN ('title', 'summary', 'proposition')),
    content         text    NOT NULL,
    token_count     integer NOT NULL DEFAULT 0,
    generator       text    NOT NULL,
    embedding       vector,
    embedding_model text    NOT NULL,
    embedding_next  vector,
    text_config     text    NOT NULL DEFAULT 'english',
    tsv             tsvector GENERATED ALWAYS AS (graphrag_tsv(text_config, '{}'::text[], content)) STORED,
    CONSTRAINT representations_target_check CHECK ((kind = 'proposition') = (chunk_id IS NOT NULL))
);

CREATE INDEX IF NOT EXISTS representations_document_idx ON representations (document_id);
CREATE INDEX IF NOT EXISTS representations_chunk_idx ON representations (chunk_id);
CREATE INDEX IF NOT EXISTS representations_collection_idx ON representations (collection, embedding_model);
CREATE INDEX IF NOT EXISTS representations_tsv_gin ON representations USING gin (tsv);

-- One HNSW index per dimension, as for chunks (graphrag_ensure_vector_index in 004).
CREATE OR REPLACE FUNCTION graphrag_ensure_representation_index(dim integer) RETURNS text
    LANGUAGE plpgsql AS $$
DECLARE
    index_name text := format('representations_embedding_hnsw_%s', dim);
    ops text := CASE WHEN dim <= 2000 THEN 'vector_cosine_ops' ELSE 'halfvec_cosine_ops' END;
BEGIN
    IF dim IS NULL OR dim < 1 OR dim > 4000 THEN
        RAISE EXCEPTION 'embedding dimension % cannot be indexed (1 to 4000)', dim;
    END IF;
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON representations USING hnsw ((embedding::%s) %s) '
                   'WITH (m = 16, ef_construction = 64) WHERE vector_dims(embedding) = %s',
                   index_name, graphrag_vector_type(dim), ops, dim);
    RETURN index_name;
END
$$;
SELECT graphrag_ensure_representation_index(dim) FROM (SELECT DISTINCT dim FROM embedding_models) d;
