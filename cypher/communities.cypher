// Communities of a collection's entity graph (graphrag/communities): detection input, report
// material, storage and the global search over community reports.
// (:Entity)-[:IN_COMMUNITY {centrality}]->(:Community {id, collection, level, title, report, size, rank,
//   signature, chunk_ids, parent, generated, computed_at, <embedding property of the model>})
// (:Community {level: n})-[:PARENT_OF]->(:Community {level: n + 1})

// name: schema_constraint
CREATE CONSTRAINT community_id IF NOT EXISTS FOR (c:Community) REQUIRE c.id IS UNIQUE;

// name: schema_collection_index
CREATE INDEX community_collection IF NOT EXISTS FOR (c:Community) ON (c.collection, c.level);

// name: schema_fulltext
CREATE FULLTEXT INDEX community_text IF NOT EXISTS FOR (c:Community) ON EACH [c.title, c.report];

// name: create_vector_index
// The vector index of one embedding model's report property. A property name cannot be a parameter:
// /*PROPERTY*/ is filled from communities.build.community_vector_slot (checked to be [a-z0-9_] only).
CREATE VECTOR INDEX $index IF NOT EXISTS FOR (c:Community) ON (c./*PROPERTY*/) OPTIONS $options;

// name: vector_indexes
SHOW VECTOR INDEXES YIELD name, labelsOrTypes, options WHERE 'Community' IN labelsOrTypes
RETURN name, options.indexConfig.`vector.dimensions` AS dim;

// name: entity_graph
// The collection's RELATED_TO edges (detection input), with their strongest predicates.
MATCH (a:Entity {collection: $collection})-[r:RELATED_TO]->(b:Entity)
RETURN a.id AS source, b.id AS target, r.weight AS weight, coalesce(r.predicates, [])[0..3] AS predicates;

// name: entity_info
UNWIND $ids AS id
MATCH (e:Entity {id: id})
RETURN e.id AS id, e.name AS name, e.label AS label, coalesce(e.mentions, 0) AS mentions;

// name: entity_chunks
// For each entity, the chunks that mention it most (report material: which chunks to read).
UNWIND $ids AS id
MATCH (e:Entity {id: id})
CALL (e) {
  MATCH (e)<-[m:MENTIONS]-(c:Chunk)
  RETURN c.id AS chunk, m.count AS count ORDER BY count DESC, chunk LIMIT $per_entity
}
RETURN id, collect([chunk, count]) AS chunks;

// name: delete_communities
// A collection's communities, in batches (the caller repeats it until nothing is left).
MATCH (c:Community {collection: $collection})
WITH c LIMIT $batch
DETACH DELETE c
RETURN count(*) AS deleted;

// name: create_communities
UNWIND $rows AS row
CREATE (c:Community)
SET c = row.props, c[$property] = row.embedding, c.computed_at = datetime($computed_at);

// name: link_members
UNWIND $links AS link
MATCH (e:Entity {id: link[0]}), (c:Community {id: link[1]})
CREATE (e)-[:IN_COMMUNITY {centrality: link[2]}]->(c);

// name: link_parents
UNWIND $pairs AS pair
MATCH (p:Community {id: pair[0]}), (c:Community {id: pair[1]})
CREATE (p)-[:PARENT_OF]->(c);

// name: list_communities
MATCH (c:Community)
WHERE ($collections IS NULL OR c.collection IN $collections) AND ($level IS NULL OR c.level = $level)
RETURN c.id AS id, c.collection AS collection, c.level AS level, c.title AS title, c.size AS size,
       c.rank AS rank, c.parent AS parent, c.signature AS signature, c.generated AS generated,
       toString(c.computed_at) AS computed_at
ORDER BY c.collection, c.level, c.rank DESC, c.id
LIMIT $limit;

// name: global_scan
// Exact similarity of every community report of the named collections to the query (there are far
// fewer communities than chunks). vector.similarity.cosine is (1 + cos) / 2, like the index's score.
MATCH (c:Community)
WHERE c.collection IN $collections AND c[$property] IS NOT NULL
WITH c, vector.similarity.cosine(c[$property], $embedding) AS score
ORDER BY score DESC, c.id
LIMIT $k
RETURN c.id AS id, score;

// name: global_index
// All collections: the model's vector index.
CALL db.index.vector.queryNodes($index, $k, $embedding) YIELD node, score
RETURN node.id AS id, score;

// name: global_text
// Reports whose title or text matches the query's words, with their similarity to the query.
CALL db.index.fulltext.queryNodes('community_text', $query) YIELD node, score
WHERE ($collections IS NULL OR node.collection IN $collections) AND node[$property] IS NOT NULL
WITH node, score ORDER BY score DESC, node.id LIMIT $k
RETURN node.id AS id, vector.similarity.cosine(node[$property], $embedding) AS score;

// name: global_top
// When the query says nothing specific: the most important reports (by rank), coarse level first.
MATCH (c:Community)
WHERE ($collections IS NULL OR c.collection IN $collections) AND c[$property] IS NOT NULL
WITH c ORDER BY c.level, c.rank DESC, c.id LIMIT $k
RETURN c.id AS id, vector.similarity.cosine(c[$property], $embedding) AS score;

// name: community_details
// The reports of ranked communities with their most central entities.
UNWIND $ids AS id
MATCH (c:Community {id: id})
CALL (c) {
  MATCH (e:Entity)-[m:IN_COMMUNITY]->(c)
  RETURN e ORDER BY m.centrality DESC, e.id LIMIT $entities
}
WITH c, collect({id: e.id, name: e.name, label: e.label}) AS entities
RETURN c.id AS id, c.collection AS collection, c.level AS level, c.title AS title, c.report AS report,
       c.size AS size, c.rank AS rank, c.parent AS parent, c.signature AS signature,
       coalesce(c.chunk_ids, []) AS chunk_ids, coalesce(c.generated, false) AS generated,
       toString(c.computed_at) AS computed_at, entities;
