// Graph leg: link the query to entities, expand over RELATED_TO, score chunks through MENTIONS.

// name: link_entities_fulltext
UNWIND $queries AS q
CALL db.index.fulltext.queryNodes('entity_name', q) YIELD node, score
WHERE $collections IS NULL OR node.collection IN $collections
WITH q, node, score ORDER BY score DESC
WITH q, collect({id: node.id, name: node.name, label: node.label, mentions: node.mentions, score: score})[0..$k] AS hits
RETURN q AS query, hits;

// name: link_mentions_vector
// $index is the vector index of the collection's embedding model (models.entity_vector_slot).
UNWIND $embeddings AS embedding
CALL db.index.vector.queryNodes($index, $k, embedding) YIELD node, score
WITH node, score WHERE ($collections IS NULL OR node.collection IN $collections) AND score >= $min_score
RETURN node.id AS id, node.name AS name, node.label AS label, node.mentions AS mentions, score;

// name: neighbours
// One hop of the walk, with only what the walk needs (names and labels come back with the scored
// chunks, relation evidence from context_relations): the Python driver's cost is per value returned.
UNWIND $ids AS id
MATCH (e:Entity {id: id})
CALL (e) {
  MATCH (e)-[r:RELATED_TO]-(n:Entity)
  RETURN n.id AS nid, n.mentions AS mentions, r.weight AS weight ORDER BY weight DESC LIMIT $per_node
}
RETURN e.id AS id, collect([nid, mentions, weight]) AS ns;

// name: score_chunks
// Chunks scored through MENTIONS from the walk's top entities ($entities: [{id, w}], w = the entity's
// PageRank times its hub damping, in PageRank order). For each entity, the chunks that mention it
// most (entities with the same normalised name but another NER label count as the same thing). A
// chunk gains w x focus x aboutness from each entity: focus = (1 + ln count) / sqrt(entities the
// chunk mentions), aboutness = $title_boost when the entity names the chunk's document. Summed here
// so that only the best $limit chunks travel, not every (entity, chunk) pair.
UNWIND range(0, size($entities) - 1) AS i
WITH i, $entities[i] AS ent
MATCH (e:Entity {id: ent.id})
CALL (e) {
  MATCH (v:Entity {collection: e.collection, norm: e.norm})<-[m:MENTIONS]-(c:Chunk)
  // Bounded work per entity: a hub mentioned in more than $scan chunks (damped by its IDF anyway)
  // has its best chunks picked among $scan of its mentions, not among all of them.
  WITH c, m LIMIT $scan
  RETURN c, m.count AS count ORDER BY count DESC LIMIT $per_entity
}
MATCH (d:Document {id: c.document_id})
WITH i, ent, e, c, count, d, COUNT { (c)-[:MENTIONS]->() } AS degree
WITH i, e, c, ent.w * (1 + log(toFloat(coalesce(count, 1)))) / sqrt(toFloat(CASE WHEN degree > 1 THEN degree ELSE 1 END))
     * CASE WHEN toLower(d.title) CONTAINS toLower(e.name) THEN $title_boost ELSE 1.0 END AS part
ORDER BY i
WITH c, sum(part) AS score, collect([e.id, e.name, e.label])[0..5] AS via
ORDER BY score DESC, c.id
LIMIT $limit
RETURN c.id AS chunk, score, via;

// name: named_documents
// Documents named after what the query names ($norms: normalised mentions, in query order), with
// their first chunk: an encyclopedic page about an entity the question names is direct evidence.
UNWIND range(0, size($norms) - 1) AS i
MATCH (d:Document {title_norm: $norms[i]})
WHERE $collections IS NULL OR d.collection IN $collections
MATCH (d)-[:HAS_CHUNK]->(c:Chunk {index: 0})
WITH i, d, c ORDER BY i, size(d.title), d.title
RETURN c.id AS chunk, d.title AS title
LIMIT $limit;

// name: context_relations
// The relations among the walk's top entities, strongest first, with their evidence chunks.
MATCH (a:Entity)-[r:RELATED_TO]-(b:Entity)
WHERE a.id IN $ids AND b.id IN $ids AND a.id < b.id
RETURN a.name AS source, b.name AS target, r.predicates AS predicates, r.weight AS weight,
       r.evidence_chunk_ids[0..5] AS evidence
ORDER BY weight DESC, source, target
LIMIT $limit;

// name: chunk_entities
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})-[m:MENTIONS]->(e:Entity)
WITH chunk_id, e, m ORDER BY m.count DESC
WITH chunk_id, collect({id: e.id, name: e.name, label: e.label, mentions: e.mentions})[0..8] AS ents
UNWIND ents AS e
RETURN chunk_id, e.id AS id, e.name AS name, e.label AS label, e.mentions AS mentions;

// name: entity_named_documents
// How entity-centric a collection is: of a sample of its documents, how many are named after an
// entity their first chunk mentions (encyclopedic pages are; papers and reports mostly are not).
MATCH (d:Document)
WHERE $collections IS NULL OR d.collection IN $collections
WITH d LIMIT $sample
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(:Chunk {index: 0})-[:MENTIONS]->(e:Entity)
WHERE toLower(e.name) = toLower(d.title) OR toLower(d.title) STARTS WITH toLower(e.name) + ' ('
RETURN count(DISTINCT d) AS documents, count(DISTINCT CASE WHEN e IS NOT NULL THEN d END) AS named;
