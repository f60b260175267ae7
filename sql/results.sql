-- Result options applied after fusion (graphrag/search/extras.py).

-- name: document_windows
-- Each hit's document's chunks within :radius positions of the hit's chunk (:document_ids documents, :chunk_indexes their hits'
-- chunk indexes), in order, with the document's chunk count: a chunk has at least one token, so a
-- budget of :radius tokens never reaches further. Range scans of the (document_id, chunk_index) key.
WITH hits AS (
    SELECT h.document_id, h.chunk_index FROM unnest(:document_ids::uuid[], :chunk_indexes::int[]) AS h(document_id, chunk_index)
), totals AS (
    SELECT c.document_id, count(*) AS total FROM chunks c JOIN hits USING (document_id) GROUP BY c.document_id
)
SELECT c.document_id, c.chunk_index, c.content, c.char_start, c.char_end, c.token_count, t.total
FROM hits h
JOIN chunks c ON c.document_id = h.document_id
             AND c.chunk_index BETWEEN h.chunk_index - :radius::int AND h.chunk_index + :radius::int
JOIN totals t ON t.document_id = h.document_id
ORDER BY c.document_id, c.chunk_index;

-- name: word_lexemes
-- The lexemes of words as each one's collection's text-search configuration makes them.
SELECT w.collection, w.word,
       tsvector_to_array(to_tsvector(coalesce(c.text_config, 'english'::regconfig), w.word)) AS lexemes
FROM unnest(:collections::text[], :words::text[]) AS w(collection, word)
LEFT JOIN collections c ON c.name = w.collection;
