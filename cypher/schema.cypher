// Graph schema: uniqueness constraints, the entity vector index and the entity name fulltext index.
// Applied at start; every statement is idempotent (IF NOT EXISTS).

CREATE CONSTRAINT document_id IF NOT EXISTS FOR (d:Document) REQUIRE d.id IS UNIQUE;
CREATE CONSTRAINT chunk_id IF NOT EXISTS FOR (c:Chunk) REQUIRE c.id IS UNIQUE;
CREATE CONSTRAINT entity_id IF NOT EXISTS FOR (e:Entity) REQUIRE e.id IS UNIQUE;
CREATE INDEX entity_collection_key IF NOT EXISTS FOR (e:Entity) ON (e.collection, e.key);
CREATE INDEX entity_collection_norm IF NOT EXISTS FOR (e:Entity) ON (e.collection, e.norm);
// The graph leg looks the query's n-grams up as exact names, in any collection.
CREATE INDEX entity_norm IF NOT EXISTS FOR (e:Entity) ON (e.norm);
CREATE INDEX chunk_document IF NOT EXISTS FOR (c:Chunk) ON (c.document_id);
CREATE INDEX document_collection IF NOT EXISTS FOR (d:Document) ON (d.collection);
CREATE INDEX document_title_norm IF NOT EXISTS FOR (d:Document) ON (d.title_norm);
CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (e:Entity) ON (e.embedding)
  OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}};
CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (e:Entity) ON EACH [e.name];
// Other names of entities (abbreviations their documents define), for query expansion.
CREATE FULLTEXT INDEX entity_alias IF NOT EXISTS FOR (e:Entity) ON EACH [e.aliases];
// Backfill of Entity.norm (normalised name) for graphs written before it existed.
MATCH (e:Entity) WHERE e.norm IS NULL SET e.norm = split(e.key, '|')[0];
