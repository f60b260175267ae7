-- Initial schema: documents and chunks with pgvector embeddings and a generated tsvector.
CREATE EXTENSION IF NOT EXISTS vector;

-- array_to_string is only STABLE; generated columns need IMMUTABLE, and for text[] it is.
CREATE OR REPLACE FUNCTION graphrag_join(text[]) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$ SELECT array_to_string($1, ' ') $$;

CREATE TABLE IF NOT EXISTS documents (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    collection    text        NOT NULL,
    source        text        NOT NULL,
    title         text        NOT NULL DEFAULT '',
    content_hash  text        NOT NULL,
    metadata      jsonb       NOT NULL DEFAULT '{}'::jsonb,
    tags          text[]      NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT documents_collection_source_key UNIQUE (collection, source)
);

CREATE TABLE IF NOT EXISTS chunks (
    id              uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    document_id     uuid    NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    collection      text    NOT NULL,
    chunk_index     integer NOT NULL,
    content         text    NOT NULL,
    heading_path    text[]  NOT NULL DEFAULT '{}',
    char_start      integer NOT NULL,
    char_end        integer NOT NULL,
    token_count     integer NOT NULL,
    has_code        boolean NOT NULL DEFAULT false,
    metadata        jsonb   NOT NULL DEFAULT '{}'::jsonb,
    embedding       vector(384),
    embedding_model text    NOT NULL,
    -- Headings weigh more than body text; 'english' is a constant regconfig so the expression is immutable.
    tsv             tsvector GENERATED ALWAYS AS (
                        setweight(to_tsvector('english', graphrag_join(heading_path)), 'A')
                        || setweight(to_tsvector('english', content), 'B')
                    ) STORED,
    CONSTRAINT chunks_document_index_key UNIQUE (document_id, chunk_index),
    CONSTRAINT chunks_offsets_check CHECK (char_start >= 0 AND char_end >= char_start)
);

CREATE INDEX IF NOT EXISTS chunks_embedding_hnsw ON chunks USING hnsw (embedding vector_cosine_ops)
    WITH (m = 16, ef_construction = 64);
CREATE INDEX IF NOT EXISTS chunks_tsv_gin ON chunks USING gin (tsv);
CREATE INDEX IF NOT EXISTS chunks_collection_idx ON chunks (collection, embedding_model);
CREATE INDEX IF NOT EXISTS chunks_document_idx ON chunks (document_id);
CREATE INDEX IF NOT EXISTS documents_collection_idx ON documents (collection);
CREATE INDEX IF NOT EXISTS documents_metadata_gin ON documents USING gin (metadata jsonb_path_ops);
