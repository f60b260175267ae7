// Bench-only statements of bench/generate.py: read a source collection's graph, bulk-write a scale
// corpus with batched UNWIND, and remove one again. Loaded by name (bench/common.py).

// name: source_entities
MATCH (e:Entity) WHERE e.collection = $collection
RETURN e.id AS id, e.name AS name, e.label AS label, e.key AS key, e.norm AS norm, e.embedding AS embedding;

// name: source_mentions
MATCH (d:Document {collection: $collection})-[:HAS_CHUNK]->(c:Chunk)-[m:MENTIONS]->(e:Entity)
RETURN c.id AS chunk, e.id AS entity, m.count AS count;

// name: source_relations
MATCH (a:Entity)-[r:RELATED_TO]->(b:Entity) WHERE a.collection = $collection
RETURN a.id AS source, b.id AS target, r.evidence_chunk_ids AS chunks, r.chunk_weights AS weights,
       r.predicate_evidence AS predicate_evidence;

// name: bulk_entities
UNWIND $entities AS e
CREATE (:Entity {id: e.id, collection: e.collection, name: e.name, label: e.label, key: e.key, norm: e.norm,
                 embedding: e.embedding, mentions: 0});

// name: bulk_documents
UNWIND $docs AS doc
CREATE (d:Document {id: doc.id, collection: doc.collection, source: doc.source, title: doc.title})
WITH d, doc
UNWIND doc.chunks AS ch
CREATE (c:Chunk {id: ch.id, document_id: doc.id, collection: doc.collection, index: ch.index, text: ch.text})
CREATE (d)-[:HAS_CHUNK]->(c);

// name: bulk_next
UNWIND $pairs AS p
MATCH (a:Chunk {id: p[0]})
MATCH (b:Chunk {id: p[1]})
CREATE (a)-[:NEXT]->(b);

// name: bulk_mentions
UNWIND $mentions AS m
MATCH (c:Chunk {id: m[0]})
MATCH (e:Entity {id: m[1]})
CREATE (c)-[:MENTIONS {count: m[2]}]->(e);

// name: bulk_relations
UNWIND $relations AS r
MATCH (a:Entity {id: r.source})
MATCH (b:Entity {id: r.target})
CREATE (a)-[:RELATED_TO {evidence_chunk_ids: r.chunks, chunk_weights: r.weights, weight: r.weight,
                         predicate_evidence: r.predicate_evidence, predicates: r.predicates}]->(b);

// name: set_entity_mentions
UNWIND $rows AS row
MATCH (e:Entity {id: row[0]})
SET e.mentions = row[1];

// name: delete_unmentioned_entities
MATCH (e:Entity) WHERE e.collection = $collection AND e.mentions = 0
DETACH DELETE e;

// name: delete_chunks
// Auto-commit statement (CALL ... IN TRANSACTIONS): removes a collection's chunks in batches.
MATCH (:Document {collection: $collection})-[:HAS_CHUNK]->(c:Chunk)
CALL (c) { DETACH DELETE c } IN TRANSACTIONS OF 5000 ROWS;

// name: delete_documents
MATCH (d:Document {collection: $collection})
CALL (d) { DETACH DELETE d } IN TRANSACTIONS OF 5000 ROWS;

// name: delete_entities
MATCH (e:Entity) WHERE e.collection = $collection
CALL (e) { DETACH DELETE e } IN TRANSACTIONS OF 2000 ROWS;

// name: count_collection
MATCH (d:Document {collection: $collection}) RETURN count(d) AS n;

// name: refresh_collection_mentions
MATCH (e:Entity) WHERE e.collection = $collection
SET e.mentions = COUNT { (e)<-[:MENTIONS]-() }
RETURN e.id AS id, e.mentions AS mentions;
