"""graphrag: a hybrid knowledge-graph RAG service (pgvector + full-text + Neo4j) for AI agents."""

__version__ = "0.1.0"
