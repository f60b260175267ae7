// Graph writes of ingestion. All statements take lists, so a batch of documents is one transaction.
// RELATED_TO keeps per-chunk evidence in parallel lists (evidence_chunk_ids[i] has weight chunk_weights[i];
// predicate_evidence holds "lemma@chunk_id"), so a document's contribution can be taken back exactly.

// name: document_chunk_ids
UNWIND $doc_ids AS doc_id
MATCH (:Document {id: doc_id})-[:HAS_CHUNK]->(c:Chunk)
RETURN collect(c.id) AS ids;

// name: take_back_relations
MATCH (c:Chunk) WHERE c.id IN $chunk_ids
MATCH (c)-[:MENTIONS]->(:Entity)-[r:RELATED_TO]-(:Entity)
WITH DISTINCT r
WITH r, [i IN range(0, size(r.evidence_chunk_ids) - 1) WHERE NOT r.evidence_chunk_ids[i] IN $chunk_ids] AS keep
WITH r, [i IN keep | r.evidence_chunk_ids[i]] AS ids, [i IN keep | r.chunk_weights[i]] AS weights,
     [p IN r.predicate_evidence WHERE NOT split(p, '@')[1] IN $chunk_ids] AS preds
FOREACH (_ IN CASE WHEN size(ids) = 0 THEN [1] ELSE [] END | DELETE r)
FOREACH (_ IN CASE WHEN size(ids) > 0 THEN [1] ELSE [] END |
  SET r.evidence_chunk_ids = ids, r.chunk_weights = weights,
      r.weight = reduce(s = 0, w IN weights | s + w), r.predicate_evidence = preds,
      r.predicates = reduce(acc = [], p IN preds |
        CASE WHEN split(p, '@')[0] IN acc THEN acc ELSE acc + split(p, '@')[0] END));

// name: delete_document_nodes
// Removes chunks and documents, then entities no chunk mentions any more; returns the ids of the
// entities that other chunks still mention (their counts and chunk lists are refreshed next).
OPTIONAL MATCH (c:Chunk) WHERE c.id IN $chunk_ids
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
WITH collect(DISTINCT c) AS chunks, collect(DISTINCT e) AS entities
FOREACH (c IN chunks | DETACH DELETE c)
WITH entities
OPTIONAL MATCH (d:Document) WHERE d.id IN $doc_ids
DETACH DELETE d
WITH DISTINCT entities
UNWIND entities AS e
WITH e, COUNT { (e)<-[:MENTIONS]-() } AS n
FOREACH (_ IN CASE WHEN n = 0 THEN [1] ELSE [] END | DETACH DELETE e)
WITH e, n WHERE n > 0
RETURN collect(e.id) AS kept;

// name: write_documents
UNWIND $docs AS doc
MERGE (d:Document {id: doc.id})
SET d.collection = doc.collection, d.source = doc.source, d.title = doc.title, d.title_norm = doc.title_norm
WITH d, doc
UNWIND doc.chunks AS ch
// c.degree: the entities the chunk mentions (fixed for its life: an entity goes only with its last mention).
CREATE (c:Chunk {id: ch.id, document_id: doc.id, collection: doc.collection, index: ch.index, text: ch.text,
                 degree: ch.degree})
CREATE (d)-[:HAS_CHUNK]->(c);

// name: link_chunks
UNWIND $pairs AS p
MATCH (a:Chunk {id: p[0]}), (b:Chunk {id: p[1]})
CREATE (a)-[:NEXT]->(b);

// name: merge_entities
// e.aliases: other names documents define for the entity (graphrag/ingest/aliases.py), kept as a set.
UNWIND $entities AS e
MERGE (n:Entity {id: e.id})
ON CREATE SET n.collection = e.collection, n.name = e.name, n.label = e.label, n.key = e.key,
              n.mentions = 0, n += e.vectors
SET n.norm = e.norm,
    n.aliases = CASE WHEN size(coalesce(e.aliases, [])) = 0 THEN n.aliases
                     ELSE reduce(acc = coalesce(n.aliases, []), a IN e.aliases |
                                 CASE WHEN a IN acc OR size(acc) >= 16 THEN acc ELSE acc + a END) END;

// name: create_mentions
// m.label: the label the mentioning document gave the entity (the entity's label is their majority).
UNWIND $mentions AS m
MATCH (c:Chunk {id: m.chunk_id}), (e:Entity {id: m.entity_id})
CREATE (c)-[:MENTIONS {count: m.count, label: m.label}]->(e);

// name: refresh_entity_mentions
// Mention count, the label most mentions of the collection carry (one entity per name), and the
// entity's chunk list: its $keep chunks of highest focus, (1 + ln count) / sqrt(entities the chunk
// mentions), best first, in three parallel lists (chunk ids, focus, and whether the entity's name is
// in the chunk's document title: the graph leg's title boost, read here once instead of on every
// search; a document's title changes only with its chunks, which refreshes their entities); and its neighbour
// list: its $neighbours strongest RELATED_TO neighbours by summed weight (ties by id), with their
// element ids (the graph leg reaches a neighbour by its element id, checked against its id). The graph leg
// reads these lists instead of a hub's mentions and relationships on every search. A write refreshes
// the entities it touches, which are all whose lists it can change: a relation's weight changes only
// through chunks that mention both of its entities.
UNWIND $entity_ids AS id
MATCH (e:Entity {id: id})
CALL (e) {
  MATCH (e)<-[m:MENTIONS]-(c)
  WITH c, m.count AS count, coalesce(c.degree, COUNT { (c)-[:MENTIONS]->() }) AS degree
  WITH c, (1 + log(toFloat(CASE WHEN count > 1 THEN count ELSE 1 END)))
          / sqrt(toFloat(CASE WHEN degree > 1 THEN degree ELSE 1 END)) AS focus
  ORDER BY focus DESC, c.id
  LIMIT $keep
  WITH c, focus, toLower(COLLECT { MATCH (c)<-[:HAS_CHUNK]-(d:Document) RETURN d.title }[0]) AS title
  RETURN collect(c.id) AS chunk_ids, collect(focus) AS focus,
         collect(coalesce(title CONTAINS toLower(e.name), false)) AS titled
}
CALL (e) {
  MATCH (e)-[r:RELATED_TO]-(n)
  WHERE n <> e
  WITH n, sum(r.weight) AS w
  ORDER BY w DESC, n.id
  LIMIT $neighbours
  RETURN collect(n.id) AS neighbour_ids, collect(w) AS neighbour_weights, collect(elementId(n)) AS neighbour_elements
}
// chunk_documents (the chunk list's third field before the title flags) is removed.
SET e.mentions = COUNT { (e)<-[:MENTIONS]-() },
    e.label = coalesce(COLLECT { MATCH (e)<-[m:MENTIONS]-() WHERE m.label IS NOT NULL
                                 WITH m.label AS label, sum(m.count) AS weight ORDER BY weight DESC, label
                                 RETURN label }[0], e.label),
    e.chunk_ids = chunk_ids, e.chunk_focus = focus, e.chunk_titled = titled, e.chunk_documents = null,
    e.neighbour_ids = neighbour_ids, e.neighbour_weights = neighbour_weights, e.neighbour_elements = neighbour_elements;

// name: merge_relations
UNWIND $relations AS r
MATCH (a:Entity {id: r.source}), (b:Entity {id: r.target})
MERGE (a)-[rel:RELATED_TO]->(b)
ON CREATE SET rel.evidence_chunk_ids = [], rel.chunk_weights = [], rel.predicate_evidence = [], rel.weight = 0
SET rel.evidence_chunk_ids = rel.evidence_chunk_ids + r.chunk_ids,
    rel.chunk_weights = rel.chunk_weights + r.weights,
    rel.weight = rel.weight + reduce(s = 0, w IN r.weights | s + w),
    rel.predicate_evidence = rel.predicate_evidence + r.predicate_evidence
SET rel.predicates = reduce(acc = [], p IN rel.predicate_evidence |
      CASE WHEN split(p, '@')[0] IN acc THEN acc ELSE acc + split(p, '@')[0] END);

// name: collection_counts
// Every collection's documents, chunks, entities and RELATED_TO relationships (by their source entity),
// in one pass over each label: a count per collection would read all chunks once per collection.
// An entity's relationships are its degree (no expansion). Collections without documents are left out.
CALL () {
  MATCH (d:Document)
  RETURN d.collection AS collection, count(d) AS documents, 0 AS chunks, 0 AS entities, 0 AS relations
  UNION ALL
  MATCH (c:Chunk)
  RETURN c.collection AS collection, 0 AS documents, count(c) AS chunks, 0 AS entities, 0 AS relations
  UNION ALL
  MATCH (e:Entity)
  RETURN e.collection AS collection, 0 AS documents, 0 AS chunks, count(e) AS entities,
         sum(COUNT { (e)-[:RELATED_TO]->() }) AS relations
}
WITH collection, sum(documents) AS documents, sum(chunks) AS chunks, sum(entities) AS entities,
     sum(relations) AS relations
WHERE documents > 0
RETURN collection, documents, chunks, entities, relations;

// name: collection_graph_counts
// One collection's entities and RELATED_TO relationships (the ingest summary's totals).
RETURN COUNT { MATCH (e:Entity) WHERE e.collection = $collection } AS entities,
       COUNT { MATCH (e:Entity)-[:RELATED_TO]->() WHERE e.collection = $collection } AS relations;

// name: document_ids
MATCH (d:Document) WHERE d.collection = $collection RETURN d.id AS id;

// name: chunk_ids_of_collection
// For repair: every document of a collection with its chunk ids (documents without chunks included).
MATCH (d:Document) WHERE d.collection = $collection
OPTIONAL MATCH (d)-[:HAS_CHUNK]->(c:Chunk)
RETURN d.id AS document_id, collect(c.id) AS chunk_ids;

// name: stray_chunks
// Chunks of the collection whose document node is gone.
MATCH (c:Chunk) WHERE c.collection = $collection AND NOT EXISTS { (:Document)-[:HAS_CHUNK]->(c) }
RETURN c.id AS id, c.document_id AS document_id;

// name: delete_stray_chunks
// Returns the entities the deleted chunks mentioned (their counts and chunk lists are refreshed next).
MATCH (c:Chunk) WHERE c.id IN $ids
OPTIONAL MATCH (c)-[:MENTIONS]->(e:Entity)
WITH collect(DISTINCT c) AS chunks, collect(DISTINCT e.id) AS entities
FOREACH (c IN chunks | DETACH DELETE c)
RETURN entities;

// name: prune_orphan_entities
// Entities of the collection that no chunk mentions any more; returns how many, and the entities
// related to them (their neighbour lists are refreshed next).
MATCH (e:Entity) WHERE e.collection = $collection AND NOT EXISTS { (e)<-[:MENTIONS]-() }
WITH collect(e) AS orphans
WITH orphans, COLLECT { UNWIND orphans AS o MATCH (o)-[:RELATED_TO]-(n) WHERE NOT n IN orphans
                        RETURN DISTINCT n.id } AS neighbours
FOREACH (e IN orphans | DETACH DELETE e)
RETURN size(orphans) AS removed, neighbours;

// name: recount_entity_mentions
// Entities whose stored mention count drifted from their mentions (their lists are refreshed next).
MATCH (e:Entity) WHERE e.collection = $collection
WITH e, COUNT { (e)<-[:MENTIONS]-() } AS n WHERE coalesce(e.mentions, -1) <> n
SET e.mentions = n
RETURN collect(e.id) AS recounted;

// name: documents_without_title_norm
// Graphs written before documents carried their title key (see backfill.py).
MATCH (d:Document) WHERE d.title_norm IS NULL
RETURN d.id AS id, coalesce(d.title, '') AS title
LIMIT $limit;

// name: set_title_norms
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
SET d.title_norm = row.title_norm;

// name: entities_without_lists
// Graphs written before entities carried their chunk and neighbour lists as they are now (see backfill.py).
MATCH (e:Entity)
WHERE e.chunk_ids IS NULL OR e.chunk_titled IS NULL OR e.neighbour_ids IS NULL OR e.neighbour_elements IS NULL
RETURN e.id AS id
LIMIT $limit;

// name: backfill_done
// Backfills run once per graph: a marker node says this one finished (start-up stays a lookup).
MATCH (m:GraphragBackfill {name: $backfill}) RETURN m.name AS name;

// name: mark_backfill_done
MERGE (m:GraphragBackfill {name: $backfill}) SET m.finished_at = datetime();

// name: drop_collection_communities
// A collection's nodes, label by label through their indexes, in batches (the caller repeats each
// until nothing is left): its communities, its chunks, its documents, then its entities.
MATCH (n:Community) WHERE n.collection = $collection AND n.level IS NOT NULL
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted;

// name: drop_collection_chunks
MATCH (:Document {collection: $collection})-[:HAS_CHUNK]->(n:Chunk)
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted;

// name: drop_collection_documents
MATCH (n:Document {collection: $collection})
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted;

// name: drop_collection_entities
MATCH (n:Entity) WHERE n.collection = $collection AND n.key IS NOT NULL
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted;
