-- Keyword postings: one row per (chunk, lexeme) with the term frequency and the chunk's length, so the
-- keyword leg scores BM25 from an index-ordered read of the query terms' postings instead of
-- detoasting and unnesting the tsvector of every candidate. ``impact`` is the BM25 term-frequency
-- factor (k1 = 0.9, b = 0.4) with the collection's mean length when the row was written: it only
-- orders a term's postings (the leg reads the strongest first); scores use tf, dl and today's mean.
-- Kept in step with chunks by the writer, in the transaction that writes or deletes them.
CREATE TABLE IF NOT EXISTS chunk_postings (
    chunk_id   uuid     NOT NULL,
    lexeme     text     NOT NULL,
    collection text     NOT NULL,
    tf         smallint NOT NULL,
    dl         integer  NOT NULL,
    impact     real     NOT NULL,
    PRIMARY KEY (chunk_id, lexeme)
);

-- What the postings of the stored chunks are: the one definition the backfill below and the writer
-- (sql/postings.sql) read.
CREATE OR REPLACE VIEW chunk_postings_due AS
SELECT c.document_id, c.id AS chunk_id, u.lexeme, c.collection,
       least(coalesce(array_length(u.positions, 1), 1), 32767)::smallint AS tf,
       greatest(c.token_count, 1) AS dl,
       (coalesce(array_length(u.positions, 1), 1) * 1.9
        / (coalesce(array_length(u.positions, 1), 1)
           + 0.9 * (0.6 + 0.4 * greatest(c.token_count, 1)
                          / greatest(s.tokens::float8 / greatest(s.chunks, 1), 1))))::real AS impact
FROM chunks c
JOIN collection_stats s ON s.collection = c.collection
CROSS JOIN LATERAL unnest(c.tsv) u;

INSERT INTO chunk_postings (chunk_id, lexeme, collection, tf, dl, impact)
SELECT chunk_id, lexeme, collection, tf, dl, impact FROM chunk_postings_due
ON CONFLICT DO NOTHING;

CREATE INDEX IF NOT EXISTS chunk_postings_by_impact
    ON chunk_postings (collection, lexeme, impact DESC) INCLUDE (chunk_id, tf, dl);
ANALYZE chunk_postings;
