// Graph leg: link the query to entities, expand over RELATED_TO, score chunks through MENTIONS.

// name: link_entities_fulltext
UNWIND $queries AS q
CALL db.index.fulltext.queryNodes('entity_name', q) YIELD node, score
WHERE $collections IS NULL OR node.collection IN $collections
WITH q, node, score ORDER BY score DESC
WITH q, collect({id: node.id, name: node.name, label: node.label, mentions: node.mentions, score: score})[0..$k] AS hits
RETURN q AS query, hits;

// name: link_entities_vector
CALL db.index.vector.queryNodes('entity_embedding', $k, $embedding) YIELD node, score
WITH node, score WHERE ($collections IS NULL OR node.collection IN $collections) AND score >= $min_score
RETURN node.id AS id, node.name AS name, node.label AS label, node.mentions AS mentions, score;

// name: link_mentions_vector
UNWIND $embeddings AS embedding
CALL db.index.vector.queryNodes('entity_embedding', $k, embedding) YIELD node, score
WITH node, score WHERE ($collections IS NULL OR node.collection IN $collections) AND score >= $min_score
RETURN node.id AS id, node.name AS name, node.label AS label, node.mentions AS mentions, score;

// name: neighbours
UNWIND $ids AS id
MATCH (e:Entity {id: id})-[r:RELATED_TO]-(n:Entity)
WITH e, r, n ORDER BY r.weight DESC
WITH e, collect({id: n.id, name: n.name, label: n.label, mentions: n.mentions, weight: r.weight,
                 predicates: r.predicates, evidence: r.evidence_chunk_ids[0..5]})[0..$per_node] AS ns
RETURN e.id AS id, ns;

// name: entity_chunks
// For each entity, the chunks that mention it most, with how many entities the chunk mentions in all
// (focus) and whether the entity names the chunk's document (aboutness).
// Entities with the same normalised name but another NER label count as the same thing here.
UNWIND $ids AS id
MATCH (e:Entity {id: id})
MATCH (v:Entity {collection: e.collection, norm: e.norm})<-[m:MENTIONS]-(c:Chunk)
WITH e, c, m ORDER BY m.count DESC
WITH e, collect({c: c, count: m.count})[0..$per_entity] AS top
UNWIND top AS t
WITH e, t.c AS c, t.count AS count
MATCH (d:Document {id: c.document_id})
RETURN e.id AS id, c.id AS chunk, count, COUNT { (c)-[:MENTIONS]->() } AS degree,
       toLower(d.title) CONTAINS toLower(e.name) AS in_title;

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
