-- match_chunks (and hybrid_search through it) for psql users: a search restricted to some
-- collections walks the dimension's shared HNSW index, whose first ef_search neighbours may all
-- belong to other collections; the filter then left fewer rows than asked for (or none). An
-- iterative scan in strict order keeps reading the index until the collection's rows are found,
-- and the rows still come nearest first (and more than ef_search of them when asked). The setting
-- holds for the call only.
CREATE OR REPLACE FUNCTION match_chunks(
    query_embedding vector, match_count integer, collections text[] DEFAULT NULL,
    embedding_model_name text DEFAULT NULL)
RETURNS TABLE (id uuid, document_id uuid, content text, similarity double precision)
LANGUAGE plpgsql STABLE
SET hnsw.iterative_scan = 'strict_order'
AS $$
DECLARE
    vtype text := graphrag_vector_type(vector_dims(query_embedding));
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT c.id, c.document_id, c.content, (1 - (c.embedding::%1$s <=> $1::%1$s))::double precision
         FROM chunks c
         WHERE vector_dims(c.embedding) = %2$s
           AND ($3::text[] IS NULL OR c.collection = ANY($3::text[]))
           AND ($4::text IS NULL OR c.embedding_model = $4::text)
         ORDER BY c.embedding::%1$s <=> $1::%1$s
         LIMIT $2', vtype, vector_dims(query_embedding))
    USING query_embedding, match_count, collections, embedding_model_name;
END
$$;
