// Bench-only statements of bench/global_eval.py. Loaded by name (bench/common.py).

// name: chunk_communities
// The level-0 communities each chunk touches: those of the entities it mentions.
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})-[:MENTIONS]->(:Entity)-[:IN_COMMUNITY]->(c:Community {level: 0})
RETURN chunk_id, collect(DISTINCT c.id) AS communities;

// name: level0_communities
MATCH (c:Community {collection: $collection, level: 0})
RETURN count(c) AS communities;
