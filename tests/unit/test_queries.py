"""The named-statement loader (pure logic)."""

from __future__ import annotations

import pytest

from graphrag.stores import queries


def test_named_statements_are_split_and_trimmed() -> None:
    text = "-- header\n-- name: a\nSELECT 1;\n\n// name: b\nRETURN $x;\n"
    assert queries._parse_named(text) == {"a": "SELECT 1", "b": "RETURN $x"}


def test_duplicate_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="twice"):
        queries._parse_named("-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;")


def test_unknown_statement_names_the_file() -> None:
    with pytest.raises(KeyError, match="sql/chunks.sql"):
        queries.sql("chunks", "no_such_statement")


def test_schema_script_and_migrations_load() -> None:
    statements = queries.cypher_script("schema")
    assert any("VECTOR INDEX entity_embedding" in s for s in statements)
    assert all(not s.endswith(";") for s in statements)
    versions = [v for v, _ in queries.migrations()]
    assert versions == sorted(versions) and versions[0].startswith("001")


def test_shared_fragments_are_included_by_name() -> None:
    text = "-- name: cte\nx AS (SELECT 1)\n-- name: a\nWITH /*INCLUDE cte*/ SELECT * FROM x;\n"
    assert queries._parse_named(text)["a"] == "WITH x AS (SELECT 1) SELECT * FROM x"
    with pytest.raises(ValueError, match="nope"):
        queries._parse_named("-- name: a\nWITH /*INCLUDE nope*/ SELECT 1;")
    # Both BM25 statements score with the one set of statistics.
    for name in ("keyword_leg", "keyword_scores"):
        assert "INCLUDE" not in queries.sql("search", name) and "lexeme_stats" in queries.sql("search", name)
