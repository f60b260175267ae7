// Graph reads of a search beside the graph leg (which is one statement: graph_leg.cypher): the entities
// of result chunks, a collection's graph prior, and the name linking that auto's global routing uses.

// name: link_entities_fulltext
// The entities each Lucene query finds in the entity-name full-text index, best first ($k per query).
UNWIND $queries AS q
CALL db.index.fulltext.queryNodes('entity_name', q) YIELD node, score
WHERE $collections IS NULL OR node.collection IN $collections
WITH q, node, score ORDER BY score DESC
WITH q, collect({id: node.id, name: node.name, label: node.label, mentions: node.mentions, score: score})[0..$k] AS hits
RETURN q AS query, hits;

// name: chunk_entities
// The entities each chunk mentions most (up to 8), as ONE record: the Python driver spends about
// 0.1 ms per record it receives, more than this whole statement takes in Neo4j.
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})-[m:MENTIONS]->(e:Entity)
WITH chunk_id, e, m ORDER BY m.count DESC
WITH chunk_id, collect([e.id, e.name, e.label, e.mentions])[0..8] AS entities
RETURN collect([chunk_id, entities]) AS chunks;

// name: entity_named_documents
// How entity-centric a collection is: of a sample of its documents, how many are named after an
// entity their first chunk mentions (encyclopedic pages are; papers and reports mostly are not).
MATCH (d:Document)
WHERE $collections IS NULL OR d.collection IN $collections
WITH d LIMIT $sample
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(:Chunk {index: 0})-[:MENTIONS]->(e:Entity)
WHERE toLower(e.name) = toLower(d.title) OR toLower(d.title) STARTS WITH toLower(e.name) + ' ('
RETURN count(DISTINCT d) AS documents, count(DISTINCT CASE WHEN e IS NOT NULL THEN d END) AS named;
