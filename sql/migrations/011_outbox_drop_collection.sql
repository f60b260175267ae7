-- A whole collection's graph is removed through the outbox too ('drop', `graphrag delete --all`,
-- DELETE /collections/{name}): its PostgreSQL rows go in one transaction with the entry, and the graph
-- follows when Neo4j answers, as for documents.
ALTER TABLE graph_outbox DROP CONSTRAINT IF EXISTS graph_outbox_op_check;
ALTER TABLE graph_outbox ADD CONSTRAINT graph_outbox_op_check CHECK (op IN ('replace', 'remove', 'drop'));
