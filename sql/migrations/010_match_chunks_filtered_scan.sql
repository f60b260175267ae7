-- match_chunks (and hybrid_search through it) for psql users: a search restricted to some
-- collections walks the dimension's shared HNSW index, whose first ef_search neighbours may all
-- belong to other collections; the filter then left fewer rows than asked for (or none). An
-- iterative scan keeps reading the index past them (and past ef_search rows when more are asked
-- for). Relaxed order, then sorted again: a strict-order scan drops a row that a later pass finds
-- nearer than one already returned, so it could still come back short. The setting holds for the
-- call only.
CREATE OR REPLACE FUNCTION match_chunks(
    query_embedding vector, match_count integer, collections text[] DEFAULT NULL,
    embedding_model_name text DEFAULT NULL)
RETURNS TABLE (id uuid, document_id uuid, content text, similarity double precision)
LANGUAGE plpgsql STABLE
SET hnsw.iterative_scan = 'relaxed_order'
AS $$
DECLARE
    vtype text := graphrag_vector_type(vector_dims(query_embedding));
BEGIN
    RETURN QUERY EXECUTE format(
        'WITH found AS MATERIALIZED (
             SELECT c.id, c.document_id, c.content, c.embedding::%1$s <=> $1::%1$s AS distance
             FROM chunks c
             WHERE vector_dims(c.embedding) = %2$s
               AND ($3::text[] IS NULL OR c.collection = ANY($3::text[]))
               AND ($4::text IS NULL OR c.embedding_model = $4::text)
             ORDER BY c.embedding::%1$s <=> $1::%1$s
             LIMIT $2)
         SELECT id, document_id, content, (1 - distance)::double precision FROM found ORDER BY distance + 0',
        vtype, vector_dims(query_embedding))
    USING query_embedding, match_count, collections, embedding_model_name;
END
$$;
