// Entity look-ups over the vector and fulltext indexes.

// name: entities_by_vector
CALL db.index.vector.queryNodes('entity_embedding', $k, $embedding) YIELD node, score
WHERE node.collection IN $collections
RETURN node.id AS id, node.name AS name, node.label AS label, score
ORDER BY score DESC;

// name: entities_by_name
CALL db.index.fulltext.queryNodes('entity_name', $query) YIELD node, score
WHERE node.collection IN $collections
RETURN node.id AS id, node.name AS name, node.label AS label, score
ORDER BY score DESC
LIMIT $k;

// name: delete_collection
MATCH (n) WHERE n.collection = $collection DETACH DELETE n;

// name: upsert_entities
UNWIND $entities AS e
MERGE (n:Entity {id: e.id})
SET n.collection = e.collection, n.name = e.name, n.label = e.label, n.key = e.key, n.embedding = e.embedding;
