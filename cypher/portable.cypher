// Portable collections (graphrag/portable.py): the graph side of `graphrag export`. Imports write
// the graph through the outbox (cypher/ingest.cypher), like ingestion does.

// name: graph_counts
// Documents and chunks the graph holds for a collection (an export first checks they match PostgreSQL).
RETURN COUNT { MATCH (d:Document) WHERE d.collection = $collection } AS documents,
       COUNT { MATCH (c:Chunk) WHERE c.collection = $collection } AS chunks;

// name: export_mentions
// One record per chunk (the driver's cost is per record and value): [entity key, count, label] each.
UNWIND $chunk_ids AS cid
MATCH (c:Chunk {id: cid})
RETURN cid AS chunk_id, [(c)-[m:MENTIONS]->(e:Entity) | [e.key, m.count, m.label]] AS mentions;

// name: export_entities
// $property: the entity vector property of the collection's model (models.entity_vector_slot).
UNWIND $keys AS key
MATCH (e:Entity {collection: $collection, key: key})
RETURN e.key AS key, e.name AS name, e.label AS label, e.norm AS norm, e[$property] AS vector,
       e.aliases AS aliases;

// name: export_relations
// Every RELATED_TO of the collection with the last document (highest id) among its evidence
// chunks' documents: the export writes a relation into the part of that document, so that an import
// writes it whole, after every chunk it cites, and its evidence keeps its order.
MATCH (a:Entity)-[r:RELATED_TO]->(b:Entity)
WHERE a.collection = $collection
CALL (r) {
  UNWIND r.evidence_chunk_ids AS cid
  MATCH (c:Chunk {id: cid})
  RETURN max(c.document_id) AS owner
}
RETURN owner, a.key AS source_key, b.key AS target_key, r.evidence_chunk_ids AS chunk_ids,
       r.chunk_weights AS weights, r.predicate_evidence AS predicate_evidence
ORDER BY owner, source_key, target_key;
