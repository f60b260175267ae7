-- Query expansion: the keyword leg's BM25 over weighted query strings (graphrag/search/expansion.py).
-- $1 holds the query and its expansions, $6 their weights (1 for the query's own words, less for
-- expanded terms); a term in several strings takes its largest weight. Otherwise these are
-- keyword_leg and keyword_scores of search.sql, with each term's IDF multiplied by its weight.

-- name: weighted_terms
-- A fragment: the terms of the weighted strings, with their weights and document frequencies.
cols AS (
    SELECT coalesce($2::text[], ARRAY(SELECT collection FROM collection_stats)) AS names
), stats AS (
    SELECT greatest(sum(s.chunks), 1)::double precision AS n,
           greatest(sum(s.tokens)::double precision / greatest(sum(s.chunks), 1), 1) AS avgdl
    FROM collection_stats s, cols WHERE s.collection = ANY(cols.names)
), lexemes AS (
    SELECT lx AS lexeme, max(q.weight) AS weight
    FROM unnest($1::text[], $6::float8[]) AS q(text, weight)
    CROSS JOIN (SELECT DISTINCT coalesce(gc.text_config, 'english'::regconfig) AS cfg
                FROM cols, unnest(cols.names) AS n(name) LEFT JOIN collections gc ON gc.name = n.name) cfgs
    CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector(cfgs.cfg, q.text))) AS lx
    GROUP BY lx
), terms AS (
    SELECT t.lexeme, t.weight, coalesce(sum(ls.df), 0)::double precision AS df
    FROM lexemes t
    CROSS JOIN cols
    LEFT JOIN lexeme_stats ls ON ls.collection = ANY(cols.names) AND ls.lexeme = t.lexeme
    GROUP BY t.lexeme, t.weight
)

-- name: weighted_score
-- A fragment: chunk c's BM25 score for the weighted terms q (as bm25_score in search.sql).
(SELECT sum(q.idfs[array_position(q.lexemes, u.lexeme)]
            * (coalesce(array_length(u.positions, 1), 1) * ($4::float8 + 1))
            / (coalesce(array_length(u.positions, 1), 1)
               + $4::float8 * (1 - $5::float8 + $5::float8 * greatest(c.token_count, 1) / q.avgdl)))
 FROM unnest(ts_filter(setweight(setweight(c.tsv, 'D'), 'A', q.lexemes), '{a}')) u)

-- name: weighted_keyword_leg
-- Candidates from the rarest terms within the same budget as keyword_leg; the filter after ranking.
WITH /*INCLUDE weighted_terms*/, weighted AS (
    SELECT terms.lexeme, terms.weight * ln(1 + (stats.n - terms.df + 0.5) / (terms.df + 0.5)) AS idf,
           sum(terms.df) OVER (ORDER BY terms.df, terms.lexeme) AS df_through,
           terms.df = min(terms.df) OVER () AS rarest,
           terms.df <= 0.5 * stats.n AS selective
    FROM terms, stats WHERE terms.df > 0
), q AS (
    SELECT (SELECT string_agg(quote_literal(lexeme), ' | ') FROM weighted
            WHERE rarest OR (selective AND df_through <= greatest(2000, 80 * $3)))::tsquery AS query,
           ARRAY(SELECT lexeme FROM weighted ORDER BY lexeme) AS lexemes,
           ARRAY(SELECT idf FROM weighted ORDER BY lexeme) AS idfs,
           (SELECT avgdl FROM stats) AS avgdl
), ranked AS (
    SELECT c.id,
           /*INCLUDE weighted_score*/ AS score
    FROM chunks c, q
    WHERE q.query IS NOT NULL AND ($2::text[] IS NULL OR c.collection = ANY($2::text[])) AND c.tsv @@ q.query
    ORDER BY score DESC
    OFFSET 0  -- keeps the sort below the filter, so LIMIT stops the filter early
)
SELECT r.id, r.score,
       tsvector_to_array(ts_filter(setweight(setweight(c.tsv, 'D'), 'A', q.lexemes), '{a}')) AS matched
FROM ranked r
CROSS JOIN q
JOIN chunks c ON c.id = r.id
JOIN documents d ON d.id = c.document_id
WHERE (/*FILTER*/)
ORDER BY r.score DESC
LIMIT $3;

-- name: weighted_keyword_scores
-- The scores weighted_keyword_leg would give the chunks $3 (candidates of other legs).
WITH /*INCLUDE weighted_terms*/, q AS (
    SELECT ARRAY(SELECT lexeme FROM terms WHERE df > 0 ORDER BY lexeme) AS lexemes,
           ARRAY(SELECT terms.weight * ln(1 + (stats.n - terms.df + 0.5) / (terms.df + 0.5)) FROM terms, stats
                 WHERE terms.df > 0 ORDER BY terms.lexeme) AS idfs,
           (SELECT avgdl FROM stats) AS avgdl
)
SELECT c.id,
       /*INCLUDE weighted_score*/ AS score
FROM chunks c, q
WHERE c.id = ANY($3::uuid[]) AND cardinality(q.lexemes) > 0;

-- name: collection_document_ids
-- A collection's documents in id order, one page after $2 (NULL: from the start), $3 per page.
SELECT id FROM documents WHERE collection = $1 AND ($2::uuid IS NULL OR id > $2) ORDER BY id LIMIT $3;

-- name: chunk_texts
SELECT document_id, content FROM chunks WHERE document_id = ANY($1::uuid[]) ORDER BY document_id, chunk_index;
