-- Result options applied after fusion (graphrag/search/extras.py).

-- name: document_windows
-- Each hit's document's chunks within $3 positions of the hit's chunk ($1 documents, $2 their hits'
-- chunk indexes), in order, with the document's chunk count: a chunk has at least one token, so a
-- budget of $3 tokens never reaches further. Range scans of the (document_id, chunk_index) key.
WITH hits AS (
    SELECT h.document_id, h.chunk_index FROM unnest($1::uuid[], $2::int[]) AS h(document_id, chunk_index)
), totals AS (
    SELECT c.document_id, count(*) AS total FROM chunks c JOIN hits USING (document_id) GROUP BY c.document_id
)
SELECT c.document_id, c.chunk_index, c.content, c.char_start, c.char_end, c.token_count, t.total
FROM hits h
JOIN chunks c ON c.document_id = h.document_id
             AND c.chunk_index BETWEEN h.chunk_index - $3::int AND h.chunk_index + $3::int
JOIN totals t ON t.document_id = h.document_id
ORDER BY c.document_id, c.chunk_index;

-- name: word_lexemes
-- The lexemes of words as each one's collection's text-search configuration makes them.
SELECT w.collection, w.word,
       tsvector_to_array(to_tsvector(coalesce(c.text_config, 'english'::regconfig), w.word)) AS lexemes
FROM unnest($1::text[], $2::text[]) AS w(collection, word)
LEFT JOIN collections c ON c.name = w.collection;
