"""Ingestion: load -> chunk -> embed + extract -> write to PostgreSQL and Neo4j."""
