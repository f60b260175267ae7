// Entity look-ups over the vector and fulltext indexes.

// name: search_entities
// Name search over the fulltext index, most mentioned first among equally good matches.
CALL db.index.fulltext.queryNodes('entity_name', $query) YIELD node, score
WHERE $collections IS NULL OR node.collection IN $collections
RETURN node.id AS id, node.collection AS collection, node.name AS name, node.label AS label,
       coalesce(node.mentions, 0) AS mentions, score
ORDER BY score DESC, mentions DESC
LIMIT $k;

// name: entity_detail
MATCH (e:Entity {id: $id})
RETURN e.id AS id, e.collection AS collection, e.name AS name, e.label AS label, e.key AS key,
       coalesce(e.mentions, 0) AS mentions;

// name: entity_relations
// The strongest relations of an entity, with the chunks that evidence them.
MATCH (e:Entity {id: $id})-[r:RELATED_TO]-(n:Entity)
RETURN n.id AS id, n.name AS name, n.label AS label, r.weight AS weight, r.predicates AS predicates,
       r.evidence_chunk_ids[0..$evidence] AS evidence_chunk_ids, startNode(r) = e AS outgoing
ORDER BY r.weight DESC, n.name
LIMIT $k;

// name: entity_mentions
// The chunks that mention an entity most.
MATCH (e:Entity {id: $id})<-[m:MENTIONS]-(c:Chunk)
RETURN c.id AS chunk_id, c.document_id AS document_id, m.count AS count
ORDER BY m.count DESC, c.id
LIMIT $k;

// name: entity_vector_indexes
SHOW VECTOR INDEXES YIELD name, labelsOrTypes, properties, options
RETURN name, properties, options.indexConfig.`vector.dimensions` AS dim;

// name: create_entity_vector_index
// The vector index of one embedding model's entity property. A property name cannot be a parameter:
// /*PROPERTY*/ is filled from models.entity_vector_slot (checked to be [a-z0-9_] only).
CREATE VECTOR INDEX $index IF NOT EXISTS FOR (e:Entity) ON (e./*PROPERTY*/) OPTIONS $options;

// name: entities_without_vector
// A collection's entities that have no name embedding by the model whose property is $property.
MATCH (e:Entity) WHERE e.collection = $collection AND e[$property] IS NULL
RETURN e.id AS id, e.name AS name
LIMIT $limit;

// name: set_entity_vectors
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e[$property] = row.vector;

// name: drop_entity_vectors
// After a re-embed: the old model's entity vectors of the collection are not used any more.
MATCH (e:Entity) WHERE e.collection = $collection AND e[$property] IS NOT NULL
WITH e LIMIT 10000
SET e[$property] = null
RETURN count(e) AS cleared;
