// Suggestion terms read back from the graph (`graphrag suggest --rebuild`).

// name: document_entities
// One page of a collection's documents, each with its entities (name, label of its mentions, count).
MATCH (d:Document {collection: $collection})
WHERE d.id IN $document_ids
MATCH (d)-[:HAS_CHUNK]->(:Chunk)-[m:MENTIONS]->(e:Entity)
RETURN d.id AS document_id, e.name AS name, coalesce(m.label, e.label) AS label, sum(m.count) AS mentions
