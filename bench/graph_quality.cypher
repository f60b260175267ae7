// Bench-only statements of bench/graph_quality.py. Loaded by name (bench/common.py).

// name: collection_entities
// Every entity of a collection with how many chunks and documents mention it.
MATCH (e:Entity) WHERE e.collection = $collection
OPTIONAL MATCH (c:Chunk)-[:MENTIONS]->(e)
RETURN e.name AS name, e.label AS label, e.key AS key, count(c) AS chunks,
       count(DISTINCT c.document_id) AS documents
ORDER BY chunks DESC, name;

// name: collection_relation_count
MATCH (a:Entity)-[r:RELATED_TO]->(:Entity) WHERE a.collection = $collection
RETURN count(r) AS relations;

// name: document_entities
// The entities mentioned by the chunks of the documents whose source ends with $suffix.
MATCH (d:Document) WHERE d.collection = $collection AND d.source ENDS WITH $suffix
MATCH (d)-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(e:Entity)
RETURN DISTINCT e.key AS key;
