-- Search-as-you-type suggestions: entity names, document titles and key phrases of each collection.
--
-- document_terms holds what each document contributes, so that a replace or a delete takes back
-- exactly that; suggest_terms is their sum per collection, kept in step by the writer and the delete
-- path in the same transaction as the chunks (sql/suggest.sql). `norm` (the case-folded text) is in
-- the "C" collation, so a prefix is a plain byte range of a btree, and the INCLUDE columns make the
-- suggestion query index-only scans.

CREATE TABLE IF NOT EXISTS document_terms (
    document_id uuid    NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    kind        text    NOT NULL CHECK (kind IN ('entity', 'title', 'phrase')),
    norm        text    COLLATE "C" NOT NULL,
    display     text    NOT NULL,
    mentions    integer NOT NULL CHECK (mentions > 0),
    PRIMARY KEY (document_id, kind, norm)
);

CREATE TABLE IF NOT EXISTS suggest_terms (
    collection text    NOT NULL,
    norm       text    COLLATE "C" NOT NULL,
    kind       text    NOT NULL,
    display    text    NOT NULL,
    documents  integer NOT NULL,
    mentions   bigint  NOT NULL,
    CONSTRAINT suggest_terms_key PRIMARY KEY (collection, norm, kind)
);
-- The suggestion query reads only the terms it may offer: those still in a document, and of the
-- phrases the frequent ones (in 2 documents, or 3 times); most phrases are neither. One index serves
-- prefix ranges, the other walks a collection's most used terms (for short, common prefixes).
CREATE INDEX IF NOT EXISTS suggest_terms_prefix ON suggest_terms (collection, norm)
    INCLUDE (kind, display, documents, mentions)
    WHERE documents > 0 AND (kind <> 'phrase' OR documents >= 2 OR mentions >= 3);
CREATE INDEX IF NOT EXISTS suggest_terms_popular ON suggest_terms (collection, documents DESC, mentions DESC)
    INCLUDE (norm, kind, display)
    WHERE documents > 0 AND (kind <> 'phrase' OR documents >= 2 OR mentions >= 3);

-- Titles of the documents stored before this migration (entities and phrases live in the graph:
-- `graphrag suggest --rebuild` reads them from there).
INSERT INTO document_terms (document_id, kind, norm, display, mentions)
SELECT id, 'title', lower(normalize(regexp_replace(btrim(title), '\s+', ' ', 'g'), NFKC)),
       regexp_replace(btrim(title), '\s+', ' ', 'g'), 1
FROM documents WHERE btrim(title) <> '' AND length(btrim(title)) <= 200
ON CONFLICT DO NOTHING;
INSERT INTO suggest_terms (collection, norm, kind, display, documents, mentions)
SELECT d.collection, t.norm, t.kind, min(t.display), count(*), sum(t.mentions)
FROM document_terms t JOIN documents d ON d.id = t.document_id
GROUP BY d.collection, t.norm, t.kind
ON CONFLICT DO NOTHING;
