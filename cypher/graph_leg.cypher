// The graph leg as one statement: link the query to entities, spread activation from them over
// RELATED_TO (two hops, hubs damped), score chunks through MENTIONS, and read the context relations
// and the documents named after what the query names. One round trip; only the best chunks travel.
//
// One map parameter, $leg (graphrag/search/graph.py builds it): Neo4j makes a plan per signature of
// parameter types (an empty list is typed apart from a list of maps, null apart from a list), and
// planning a statement this size takes seconds; as fields of one map, every search shares one plan.
// Its fields:
//   spans      [{q: Lucene query, toks: [name tokens]}]: name-like spans of the query (linked through
//               the entities' names and their aliases)
//   grams      [{norm, span, start, end}]: word n-grams of the spans (of a query without any), as
//               exact entity names; a match inside a longer match of the same span does not count
//   prf        [{chunk, w}]: passages the keyword leg ranked first; their entities seed too
//   titles     [title key]: documents named after a span (Document.title_norm)
//   collections (null = all), total: chunks in them (for the entities' IDF)
//   max_seeds, per_span, per_first, per_next, frontier, alpha, top_entities,
//   per_entity, title_boost, limit, context_entities, relation_limit, named_limit
//
// IDF of an entity: ln((total + 1) / (mentions + 0.5)) / ln(total + 1.5); its damping is the IDF
// with a floor of 0.05: a walk into a hub passes on little (graphrag/search/walk.py has the same
// walk in Python, which the tests compare with this one).

// name: graph_leg
CALL () {
  // Spans through the entity-name and entity-alias full-text indexes (another name a document or the
  // glossary gives an entity: "TNF" for tumor necrosis factor, "QF" for Quillfeather): Lucene finds
  // candidates, the share of the name or alias the span covers decides the link, the best one counting
  // (graphrag/search/linking.py name_overlap).
  UNWIND $leg.spans AS s
  CALL (s) {
    CALL db.index.fulltext.queryNodes('entity_name', s.q) YIELD node, score
    WHERE $leg.collections IS NULL OR node.collection IN $leg.collections
    WITH node ORDER BY score DESC LIMIT $leg.per_span
    RETURN node AS e, [coalesce(node.norm, '')] AS forms
    UNION ALL
    CALL db.index.fulltext.queryNodes('entity_alias', s.q) YIELD node, score
    WHERE $leg.collections IS NULL OR node.collection IN $leg.collections
    WITH node ORDER BY score DESC LIMIT $leg.per_span
    RETURN node AS e, [alias IN coalesce(node.aliases, []) | toLower(alias)] AS forms
  }
  UNWIND forms AS form
  WITH s, e, reduce(acc = [], t IN split(replace(replace(replace(replace(replace(form, '.', ' '),
       '-', ' '), '/', ' '), '&', ' '), '+', ' '), ' ') | CASE WHEN t = '' OR t IN acc THEN acc ELSE acc + t END) AS et
  WITH s, e, et, size([t IN et WHERE t IN s.toks]) AS common
  WHERE common > 0
  WITH e, CASE WHEN size(et) >= 2 AND common = size(et) THEN 0.8 ELSE 0.0 END AS contained,
       toFloat(common) / (size(s.toks) + size(et) - common) AS jaccard
  WITH e, max(CASE WHEN jaccard > contained THEN jaccard ELSE contained END) AS link
  WHERE link >= 0.5
  RETURN e, link, true AS named
  UNION ALL
  // Exact names among the spans' word n-grams (those of a query without spans), longest matches only.
  UNWIND $leg.grams AS g
  MATCH (e:Entity {norm: g.norm})
  WHERE $leg.collections IS NULL OR e.collection IN $leg.collections
  WITH g, collect(e) AS es
  WITH collect({g: g, es: es}) AS found
  UNWIND found AS f
  WITH f, found
  WHERE none(o IN found WHERE o.g.span = f.g.span AND o.g.start <= f.g.start AND o.g.end >= f.g.end
                              AND o.g.end - o.g.start > f.g.end - f.g.start)
  UNWIND f.es AS e
  RETURN e, 1.0 AS link, true AS named
  UNION ALL
  // Passage feedback: the entities the top passages mention most.
  UNWIND $leg.prf AS p
  MATCH (:Chunk {id: p.chunk})-[m:MENTIONS]->(e:Entity)
  WITH p, e, m ORDER BY m.count DESC
  WITH p, collect(e)[0..8] AS es
  UNWIND es AS e
  RETURN e, p.w AS link, false AS named
}
WITH e, max(link) AS link, max(CASE WHEN named THEN link ELSE 0.0 END) AS named_link,
     log(($leg.total + 1.0) / (coalesce(e.mentions, 1) + 0.5)) / log($leg.total + 1.5) AS idf
WITH e, link * idf AS seed, named_link
ORDER BY seed DESC, e.id
WITH collect({e: e, s: seed, link: named_link}) AS candidates
// How well the query itself names known entities (passage feedback does not count): its confidence.
WITH candidates[0..$leg.max_seeds] AS linked, reduce(m = 0.0, x IN candidates | CASE WHEN x.link > m THEN x.link ELSE m END) AS named_link
WITH linked, named_link, reduce(z = 0.0, x IN linked | z + CASE WHEN x.s > 0 THEN x.s ELSE 0.0 END) AS z
WITH linked, named_link, [x IN linked WHERE x.s > 0 | {n: x.e, a: x.s / z}] AS seeds

// Hop 1: each seed passes its activation to its strongest neighbours (its neighbour list), in
// proportion to ln(1 + relation weight) x the neighbour's damping.
CALL (seeds) {
  UNWIND seeds AS x
  CALL (x) {
    // The entity's neighbour list (kept by the graph writer): its strongest neighbours, best first.
    // By element id (a record read, no index seek), checked against the entity id the list names: a
    // node deleted since the list was written does not pass for another that reused its element id.
    WITH coalesce(x.n.neighbour_elements, [])[0..$leg.per_first] AS els, x.n.neighbour_ids AS ids,
         coalesce(x.n.neighbour_weights, []) AS ws
    UNWIND range(0, size(els) - 1) AS k
    MATCH (n) WHERE elementId(n) = els[k] AND n.id = ids[k]
    WITH n, ws[k] AS w, log(($leg.total + 1.0) / (coalesce(n.mentions, 1) + 0.5)) / log($leg.total + 1.5) AS idf
    RETURN collect({n: n, t: log(1 + w) * CASE WHEN idf > 0.05 THEN idf ELSE 0.05 END}) AS out
  }
  WITH x, out, reduce(z = 0.0, o IN out | z + o.t) AS z
  WHERE z > 0
  UNWIND out AS o
  WITH o.n AS n, sum(x.a * o.t / z) AS a
  RETURN collect({n: n, a: a}) AS hop1
}
// Hop 2: the same from the most activated nodes of hop 1.
CALL (hop1) {
  UNWIND hop1 AS x
  WITH x ORDER BY x.a DESC, x.n.id LIMIT $leg.frontier
  CALL (x) {
    // The entity's neighbour list (kept by the graph writer): its strongest neighbours, best first.
    // By element id (a record read, no index seek), checked against the entity id the list names: a
    // node deleted since the list was written does not pass for another that reused its element id.
    WITH coalesce(x.n.neighbour_elements, [])[0..$leg.per_next] AS els, x.n.neighbour_ids AS ids,
         coalesce(x.n.neighbour_weights, []) AS ws
    UNWIND range(0, size(els) - 1) AS k
    MATCH (n) WHERE elementId(n) = els[k] AND n.id = ids[k]
    WITH n, ws[k] AS w, log(($leg.total + 1.0) / (coalesce(n.mentions, 1) + 0.5)) / log($leg.total + 1.5) AS idf
    RETURN collect({n: n, t: log(1 + w) * CASE WHEN idf > 0.05 THEN idf ELSE 0.05 END}) AS out
  }
  WITH x, out, reduce(z = 0.0, o IN out | z + o.t) AS z
  WHERE z > 0
  UNWIND out AS o
  WITH o.n AS n, sum(x.a * o.t / z) AS a
  RETURN collect({n: n, a: a}) AS hop2
}
// Personalised PageRank truncated after two steps: alpha x (seeds + (1 - alpha) hop 1 + (1 - alpha)^2 hop 2).
// An entity's weight for chunk scoring is its activation times its damping.
CALL (seeds, hop1, hop2) {
  UNWIND [x IN seeds | {n: x.n, r: $leg.alpha * x.a}] + [x IN hop1 | {n: x.n, r: $leg.alpha * (1 - $leg.alpha) * x.a}]
         + [x IN hop2 | {n: x.n, r: $leg.alpha * (1 - $leg.alpha) * (1 - $leg.alpha) * x.a}] AS x
  WITH x.n AS n, sum(x.r) AS r
  WITH n, log(($leg.total + 1.0) / (coalesce(n.mentions, 1) + 0.5)) / log($leg.total + 1.5) AS idf, r
  WITH n, r * CASE WHEN idf > 0.05 THEN idf ELSE 0.05 END AS w
  ORDER BY w DESC, n.id
  LIMIT $leg.top_entities
  RETURN collect({e: n, w: w}) AS top
}
// Chunks through the top entities' chunk lists (kept by the graph writer, refresh_entity_mentions):
// each list holds an entity's best chunks by focus, (1 + ln count) / sqrt(entities the chunk
// mentions), so a hub costs one list read instead of a scan of its mentions. Entities of the same
// normalised name count as one: their lists are merged. A chunk gains w x focus, x $leg.title_boost
// when the list's entity names its document (the list's third field, set at write time: no Document
// is read here).
CALL (top) {
  UNWIND range(0, size(top) - 1) AS i
  WITH i, top[i].e AS e, top[i].w AS w
  CALL (e) {
    // Each list is sorted, so the best per_entity of the merged lists are among each list's first per_entity.
    MATCH (v:Entity {collection: e.collection, norm: e.norm})
    WITH v, coalesce(v.chunk_ids, [])[0..$leg.per_entity] AS ids
    UNWIND range(0, size(ids) - 1) AS k
    WITH ids[k] AS c, v.chunk_focus[k] AS focus, v.chunk_titled[k] AS titled
    ORDER BY focus DESC, c
    LIMIT $leg.per_entity
    RETURN c, focus, titled
  }
  WITH i, c, w * focus * CASE WHEN titled THEN $leg.title_boost ELSE 1.0 END AS part
  ORDER BY i
  // via: the chunk's first five top entities, as places in `walked` (names travel once, not per chunk).
  WITH c, collect(i)[0..5] AS via, sum(part) AS score
  ORDER BY score DESC, c
  LIMIT $leg.limit
  RETURN collect([c, score, via]) AS chunks
}
// The relations among the top entities, strongest first, with their evidence chunks.
CALL (top) {
  WITH [t IN top[0..$leg.context_entities] | t.e] AS ents
  UNWIND ents AS a
  MATCH (a)-[r:RELATED_TO]-(b:Entity)
  WHERE b IN ents AND a.id < b.id
  WITH a, b, r ORDER BY r.weight DESC, a.name, b.name
  LIMIT $leg.relation_limit
  RETURN collect([a.name, b.name, r.predicates, r.evidence_chunk_ids[0..5]]) AS relations
}
// Documents named after a span, with their first chunk.
CALL () {
  UNWIND range(0, size($leg.titles) - 1) AS i
  MATCH (d:Document {title_norm: $leg.titles[i]})
  WHERE $leg.collections IS NULL OR d.collection IN $leg.collections
  MATCH (d)-[:HAS_CHUNK]->(c:Chunk {index: 0})
  WITH i, d, c ORDER BY i, size(d.title), d.title
  LIMIT $leg.named_limit
  RETURN collect([c.id, d.title]) AS named
}
RETURN [x IN linked | [x.e.id, x.e.name, x.e.label, x.s, x.link]] AS linked, named_link,
       [t IN top | [t.e.id, t.w, t.e.name, t.e.label]] AS walked, chunks, relations, named;
