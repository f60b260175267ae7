// Query expansion from the collections' own entities (graphrag/search/expansion.py).

// name: entities_named
// Entities whose normalised name is one of the query's normalised word runs ($norms), with their
// aliases and the names of their strongest related entities (the caller keeps those that are the
// entity's acronym, or whose acronym the entity's name is).
UNWIND $norms AS norm
MATCH (e:Entity)
WHERE e.collection IN $collections AND e.norm = norm
RETURN norm, e.id AS id, e.name AS name, coalesce(e.aliases, []) AS aliases,
       COLLECT { MATCH (e)-[r:RELATED_TO]-(n:Entity) WITH n, r ORDER BY r.weight DESC LIMIT 50
                 RETURN n.name } AS neighbours
LIMIT 100;

// name: entities_aliased
// Entities one of whose aliases matches the Lucene query $query (the caller checks the match is exact).
CALL db.index.fulltext.queryNodes('entity_alias', $query) YIELD node, score
WHERE node.collection IN $collections
RETURN node.id AS id, node.name AS name, node.aliases AS aliases, score
ORDER BY score DESC
LIMIT 50;

// name: document_entity_keys
// The keys of the entities each document's chunks mention (an alias backfill matches the
// abbreviations a document defines against them, as ingestion does with its extraction).
UNWIND $doc_ids AS did
MATCH (d:Document {id: did})-[:HAS_CHUNK]->(:Chunk)-[:MENTIONS]->(e:Entity)
WHERE e.collection = $collection
RETURN did AS document_id, collect(DISTINCT e.key) AS keys;

// name: add_entity_aliases
// Aliases added to entities ($rows: [{id, aliases}]), kept as a set of at most 16 (as merge_entities).
UNWIND $rows AS r
MATCH (e:Entity {id: r.id})
WITH e, r, coalesce(e.aliases, []) AS before
SET e.aliases = reduce(acc = before, a IN r.aliases | CASE WHEN a IN acc OR size(acc) >= 16 THEN acc ELSE acc + a END)
WITH size(e.aliases) - size(before) AS added
RETURN count(CASE WHEN added > 0 THEN 1 END) AS entities, coalesce(sum(added), 0) AS added;
