// Read-only queries for looking at the knowledge graph in Neo4j Browser (http://127.0.0.1:7474/browser/).
// Paste one statement (the lines under a "// name:" header) into the Browser editor and run it.
// Every value is a parameter; set them first in the Browser editor, e.g.:
//
//   :param collection => 'samples'
//   :param source => '/path/to/repo/samples/analytical-engine.md'
//   :param document_id => '<a Document.id, from the documents query>'
//   :param entity => 'charles babbage'
//   :param chunk_id => '<a Chunk.id, from document_graph or document_chunks>'
//   :param limit => 25
//
// or several at once:
//
//   :params {collection: 'samples', entity: 'charles babbage', limit: 25}
//
// `:params` alone lists the current values, `:params clear` removes them. Queries returning paths or nodes
// draw in the graph view; the others are tables. The drift checks return no rows on a healthy collection.
// Graph model: (:Document)-[:HAS_CHUNK]->(:Chunk)-[:NEXT]->(:Chunk), (:Chunk)-[:MENTIONS {count}]->(:Entity),
// (:Entity)-[:RELATED_TO {weight, predicates, evidence_chunk_ids, chunk_weights, predicate_evidence}]->(:Entity).
// After `graphrag communities`: (:Entity)-[:IN_COMMUNITY {centrality}]->(:Community {level, title, report})
// and (:Community {level: 0})-[:PARENT_OF]->(:Community {level: 1}).

// name: collections
// Every collection in the graph with its document, chunk, entity and relation counts, in one pass over
// each label (as `graphrag status` counts): a count per collection would read all chunks once per
// collection (2,713 collections and 39k chunks: minutes, against a second).
CALL () {
  MATCH (d:Document) WHERE d.collection IS NOT NULL
  RETURN d.collection AS collection, count(*) AS documents, 0 AS chunks, 0 AS entities, 0 AS relations
  UNION ALL
  MATCH (c:Chunk) WHERE c.collection IS NOT NULL
  RETURN c.collection AS collection, 0 AS documents, count(*) AS chunks, 0 AS entities, 0 AS relations
  UNION ALL
  MATCH (e:Entity) WHERE e.collection IS NOT NULL
  RETURN e.collection AS collection, 0 AS documents, 0 AS chunks, count(*) AS entities,
         sum(COUNT { (e)-[:RELATED_TO]->() }) AS relations  // an entity's degree, no expansion
}
RETURN collection, sum(documents) AS documents, sum(chunks) AS chunks, sum(entities) AS entities,
       sum(relations) AS relations
ORDER BY collection;

// name: collection_overview
// One collection's counts: documents, chunks, NEXT links, entities, MENTIONS, RELATED_TO and their evidence.
CALL () {
  MATCH (:Entity {collection: $collection})-[r:RELATED_TO]->()
  RETURN sum(size(r.evidence_chunk_ids)) AS relation_evidence,
         count(CASE WHEN size(r.predicates) > 0 THEN r END) AS relations_with_predicates
}
RETURN $collection AS collection,
       COUNT { MATCH (d:Document) WHERE d.collection = $collection } AS documents,
       COUNT { MATCH (c:Chunk) WHERE c.collection = $collection } AS chunks,
       COUNT { MATCH (c:Chunk)-[:NEXT]->() WHERE c.collection = $collection } AS next_links,
       COUNT { MATCH (e:Entity) WHERE e.collection = $collection } AS entities,
       COUNT { MATCH (c:Chunk)-[:MENTIONS]->() WHERE c.collection = $collection } AS mentions,
       COUNT { MATCH (e:Entity)-[:RELATED_TO]->() WHERE e.collection = $collection } AS relations,
       relation_evidence, relations_with_predicates;

// name: entity_labels
// How many entities of each NER label a collection holds, with their mention totals.
MATCH (e:Entity) WHERE e.collection = $collection
RETURN e.label AS label, count(e) AS entities, sum(coalesce(e.mentions, 0)) AS mentioning_chunks
ORDER BY entities DESC, label;

// name: documents
// The documents of a collection with their ids (for $document_id), sources and chunk/entity counts.
MATCH (d:Document) WHERE d.collection = $collection
RETURN d.id AS document_id, d.source AS source, d.title AS title,
       COUNT { (d)-[:HAS_CHUNK]->() } AS chunks,
       COUNT { MATCH (d)-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(e:Entity) RETURN DISTINCT e } AS entities
ORDER BY d.source
LIMIT toInteger($limit);

// name: document_graph
// A document with its chunks (NEXT in order) and the entities they mention, as paths for the graph view.
MATCH (d:Document {id: $document_id})
OPTIONAL MATCH chunk = (d)-[:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH next = (c)-[:NEXT]->(:Chunk)<-[:HAS_CHUNK]-(d)
OPTIONAL MATCH mention = (c)-[:MENTIONS]->(:Entity)
RETURN d, chunk, next, mention;

// name: document_graph_by_source
// The same graph, found by the document's source (its file path) within a collection.
MATCH (d:Document {source: $source}) WHERE d.collection = $collection
OPTIONAL MATCH chunk = (d)-[:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH next = (c)-[:NEXT]->(:Chunk)<-[:HAS_CHUNK]-(d)
OPTIONAL MATCH mention = (c)-[:MENTIONS]->(:Entity)
RETURN d, chunk, next, mention;

// name: document_chunks
// A document's chunks in order with their ids (for $chunk_id), text and the entities each mentions.
MATCH (d:Document {id: $document_id})-[:HAS_CHUNK]->(c:Chunk)
OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity)
WITH d, c, m, e ORDER BY m.count DESC, e.name
RETURN d.title AS document, c.index AS index, c.id AS chunk_id, left(c.text, 300) AS text,
       collect(e.name + ' (' + e.label + ') x' + toString(m.count)) AS entities
ORDER BY index;

// name: entity_neighbourhood
// An entity (by name, case-insensitive, within a collection), its relations, and the chunks that evidence them.
MATCH (e:Entity) WHERE e.collection = $collection AND toLower(e.name) = toLower($entity)
MATCH (e)-[r:RELATED_TO]-(n:Entity)
OPTIONAL MATCH (c:Chunk) WHERE c.id IN r.evidence_chunk_ids
OPTIONAL MATCH (d:Document {id: c.document_id})
WITH e, r, n, c, d ORDER BY c.id
WITH e, r, n, collect(CASE WHEN c IS NOT NULL
                            THEN {chunk_id: c.id, document: d.title, text: left(c.text, 300)} END) AS evidence
RETURN e.name AS entity, e.label AS label, CASE WHEN startNode(r) = e THEN '->' ELSE '<-' END AS direction,
       n.name AS neighbour, n.label AS neighbour_label, r.weight AS weight, r.predicates AS predicates,
       r.evidence_chunk_ids AS evidence_chunk_ids, r.chunk_weights AS chunk_weights, evidence
ORDER BY weight DESC, neighbour
LIMIT toInteger($limit);

// name: entity_neighbourhood_graph
// The same neighbourhood for the graph view: the entity, its related entities and the evidence chunks.
MATCH (e:Entity) WHERE e.collection = $collection AND toLower(e.name) = toLower($entity)
MATCH related = (e)-[r:RELATED_TO]-(:Entity)
WITH related, r ORDER BY r.weight DESC LIMIT toInteger($limit)
OPTIONAL MATCH evidence = (c:Chunk)-[:MENTIONS]->(x:Entity)
  WHERE c.id IN r.evidence_chunk_ids AND x IN [startNode(r), endNode(r)]
RETURN related, collect(evidence) AS evidence;

// name: entity_mentions
// The chunks that mention an entity (by name, case-insensitive), most mentions first.
MATCH (e:Entity) WHERE e.collection = $collection AND toLower(e.name) = toLower($entity)
MATCH (e)<-[m:MENTIONS]-(c:Chunk)
OPTIONAL MATCH (d:Document {id: c.document_id})
RETURN e.name AS entity, e.label AS label, m.count AS count, d.title AS document, c.id AS chunk_id,
       left(c.text, 300) AS text
ORDER BY count DESC, document, c.index
LIMIT toInteger($limit);

// name: most_connected_entities
// The most connected entities of a collection: RELATED_TO degree and weight, and how often chunks mention them.
MATCH (e:Entity) WHERE e.collection = $collection
WITH e, COUNT { (e)-[:RELATED_TO]-() } AS degree,
     reduce(s = 0, w IN [(e)-[r:RELATED_TO]-() | r.weight] | s + w) AS relation_weight,
     COUNT { (e)<-[:MENTIONS]-() } AS mentioning_chunks,
     reduce(s = 0, k IN [(e)<-[m:MENTIONS]-() | m.count] | s + k) AS mention_count
RETURN e.name AS entity, e.label AS label, degree, relation_weight, mentioning_chunks, mention_count,
       e.mentions AS mentions_property
ORDER BY degree DESC, mention_count DESC, entity
LIMIT toInteger($limit);

// name: most_connected_graph
// The most connected entities and the RELATED_TO edges among them, for the graph view.
MATCH (e:Entity) WHERE e.collection = $collection
WITH e ORDER BY COUNT { (e)-[:RELATED_TO]-() } DESC, e.mentions DESC LIMIT toInteger($limit)
WITH collect(e) AS top
UNWIND top AS a
OPTIONAL MATCH edge = (a)-[:RELATED_TO]->(b:Entity) WHERE b IN top
RETURN a, edge;

// name: chunks_sharing_entities
// Chunks that mention the same entities as a given chunk, the most shared entities first.
MATCH (c:Chunk {id: $chunk_id})-[:MENTIONS]->(e:Entity)<-[:MENTIONS]-(o:Chunk)
WHERE o <> c
WITH o, collect(DISTINCT e.name) AS shared
OPTIONAL MATCH (d:Document {id: o.document_id})
RETURN o.id AS chunk_id, d.title AS document, o.index AS index, size(shared) AS shared_count, shared,
       left(o.text, 300) AS text
ORDER BY shared_count DESC, document, index
LIMIT toInteger($limit);

// name: chunks_sharing_entities_graph
// The same, for the graph view: the chunk, its entities and the other chunks that mention them.
MATCH own = (c:Chunk {id: $chunk_id})-[:MENTIONS]->(e:Entity)
OPTIONAL MATCH other = (e)<-[:MENTIONS]-(o:Chunk) WHERE o <> c
RETURN own, other
LIMIT toInteger($limit);

// name: communities
// A collection's communities (after `graphrag communities --collection C`): level 0 coarse, most important first.
MATCH (c:Community) WHERE c.collection = $collection
RETURN c.level AS level, c.title AS title, c.size AS entities, c.rank AS rank, c.id AS community_id,
       c.parent AS parent, c.generated AS written_by_model, toString(c.computed_at) AS computed_at
ORDER BY level, rank DESC, title
LIMIT toInteger($limit);

// name: community_hierarchy_graph
// The coarse communities with their finer children and member entities, for the graph view.
MATCH (c:Community) WHERE c.collection = $collection AND c.level = 0
WITH c ORDER BY c.rank DESC LIMIT toInteger($limit)
OPTIONAL MATCH child = (c)-[:PARENT_OF]->(:Community)
OPTIONAL MATCH member = (:Entity)-[:IN_COMMUNITY]->(c)
RETURN c, collect(DISTINCT child) AS children, collect(DISTINCT member) AS members;

// name: entity_communities
// The communities an entity (by name, case-insensitive) belongs to at each level, with their reports.
MATCH (e:Entity) WHERE e.collection = $collection AND toLower(e.name) = toLower($entity)
MATCH (e)-[m:IN_COMMUNITY]->(c:Community)
RETURN e.name AS entity, c.level AS level, c.title AS title, c.size AS entities, m.centrality AS centrality,
       c.report AS report, c.id AS community_id
ORDER BY level
LIMIT toInteger($limit);

// name: drift_documents_without_chunks
// Documents of the collection that have no chunk.
MATCH (d:Document) WHERE d.collection = $collection AND NOT (d)-[:HAS_CHUNK]->(:Chunk)
RETURN d.id AS document_id, d.source AS source, d.title AS title
LIMIT toInteger($limit);

// name: drift_chunks_without_document
// Chunks whose document (by Chunk.document_id) is missing or does not link to them by HAS_CHUNK.
MATCH (c:Chunk) WHERE c.collection = $collection
  AND NOT EXISTS { MATCH (d:Document {id: c.document_id})-[:HAS_CHUNK]->(c) }
RETURN c.id AS chunk_id, c.document_id AS document_id, c.index AS index,
       EXISTS { MATCH (:Document {id: c.document_id}) } AS document_exists,
       [(p:Document)-[:HAS_CHUNK]->(c) | p.id] AS linked_from,
       left(c.text, 120) AS text
LIMIT toInteger($limit);

// name: drift_collection_mismatch
// A document and its chunk in different collections (chunk.collection <> document.collection).
MATCH (d:Document)-[:HAS_CHUNK]->(c:Chunk)
WHERE (d.collection = $collection OR c.collection = $collection) AND c.collection <> d.collection
RETURN d.id AS document_id, d.collection AS document_collection, c.id AS chunk_id,
       c.collection AS chunk_collection
LIMIT toInteger($limit);

// name: drift_graph_across_collections
// MENTIONS or RELATED_TO that crosses collections (entities are per collection).
MATCH (a)-[rel:MENTIONS|RELATED_TO]->(b:Entity)
WHERE (a.collection = $collection OR b.collection = $collection) AND a.collection <> b.collection
RETURN type(rel) AS relationship, labels(a)[0] AS from_label, a.id AS from_id, a.collection AS from_collection,
       b.id AS entity_id, b.name AS entity, b.collection AS entity_collection
LIMIT toInteger($limit);

// name: drift_entities_without_mentions
// Entities of the collection that no chunk mentions.
MATCH (e:Entity) WHERE e.collection = $collection AND NOT (e)<-[:MENTIONS]-(:Chunk)
RETURN e.id AS entity_id, e.name AS entity, e.label AS label, e.mentions AS mentions_property,
       COUNT { (e)-[:RELATED_TO]-() } AS relations
LIMIT toInteger($limit);

// name: drift_entity_mention_counts
// Entities whose `mentions` property disagrees with the number of chunks that MENTION them.
MATCH (e:Entity) WHERE e.collection = $collection
WITH e, COUNT { (e)<-[:MENTIONS]-(:Chunk) } AS actual
WHERE e.mentions IS NULL OR e.mentions <> actual
RETURN e.id AS entity_id, e.name AS entity, e.label AS label, e.mentions AS mentions_property, actual
LIMIT toInteger($limit);

// name: drift_relation_evidence
// RELATED_TO whose evidence chunks are gone (or in another collection) or whose evidence lists disagree.
MATCH (a:Entity)-[r:RELATED_TO]->(b:Entity) WHERE a.collection = $collection
WITH a, r, b, coalesce(r.evidence_chunk_ids, []) AS ids
OPTIONAL MATCH (c:Chunk) WHERE c.id IN ids AND c.collection = a.collection
WITH a, r, b, ids, collect(c.id) AS found
WITH a, r, b, ids, [id IN ids WHERE NOT id IN found] AS missing,
     [p IN coalesce(r.predicate_evidence, []) WHERE NOT split(p, '@')[1] IN ids] AS stray_predicates,
     reduce(s = 0, w IN coalesce(r.chunk_weights, []) | s + w) AS weight_sum
WHERE size(ids) = 0 OR size(missing) > 0 OR size(stray_predicates) > 0
   OR size(ids) <> size(coalesce(r.chunk_weights, []))
   OR r.weight IS NULL OR abs(r.weight - weight_sum) > 1e-6
RETURN a.name AS source, b.name AS target, r.weight AS weight, weight_sum, ids AS evidence_chunk_ids,
       missing AS missing_chunk_ids, size(coalesce(r.chunk_weights, [])) AS chunk_weights, stray_predicates
LIMIT toInteger($limit);
