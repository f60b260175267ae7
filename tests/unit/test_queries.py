"""The named-statement loader (pure logic)."""

from __future__ import annotations

import re

import pytest

from graphrag.stores import queries


def test_named_statements_are_split_and_trimmed() -> None:
    text = "-- header\n-- name: a\nSELECT 1;\n\n// name: b\nRETURN $x;\n"
    assert queries._parse_named(text) == {"a": "SELECT 1", "b": "RETURN $x"}


def test_duplicate_names_are_rejected() -> None:
    with pytest.raises(ValueError, match="twice"):
        queries._parse_named("-- name: a\nSELECT 1;\n-- name: a\nSELECT 2;")


def test_unknown_statement_names_the_file() -> None:
    with pytest.raises(KeyError, match="sql/documents.sql"):
        queries.sql("documents", "no_such_statement")


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
    for name in ("keyword_leg", "keyword_scores", "completion_scores"):
        assert "INCLUDE" not in queries.sql("search", name) and "lexeme_stats" in queries.sql("search", name)


def test_named_parameters_compile_to_positional() -> None:
    text, params = queries.compile_named(
        "SELECT :a::text, ':not' AS s -- :nor\n, arr[1:n], :b, :a /* :no */ FROM t WHERE x = $$ :q $$")
    assert params == ("a", "b")
    assert text == "SELECT $1::text, ':not' AS s -- :nor\n, arr[1:n], $2, $1 /* :no */ FROM t WHERE x = $$ :q $$"
    assert queries.compile_named("SELECT 1 -- $1") == ("SELECT 1 -- $1", ())
    for positional in ("SELECT $1", "SELECT :a, $1"):
        with pytest.raises(queries.ParameterError, match=r"\$n parameters"):
            queries.compile_named(positional)


def test_binding_by_name_names_missing_and_unknown_parameters() -> None:
    st = queries.statement("jobs", "heartbeat")
    assert st.params == ("id", "claim") and "$2" in st.text and ":id" not in st.text
    assert st.bind({"claim": 2, "id": 1}) == [1, 2]
    with pytest.raises(queries.ParameterError, match=r"sql/jobs.sql heartbeat: missing :claim; unknown :nope"):
        st.bind({"id": 1, "nope": 3})


def test_cypher_parameters_are_checked_by_name() -> None:
    assert queries.cypher_parameters("MATCH (n {id: $id}) // $not\nRETURN '$no', $x") == {"id", "x"}
    name = queries.names("cypher", "admin")[0]
    wanted = queries.cypher_parameters(queries.cypher("admin", name))
    with pytest.raises(queries.ParameterError, match="unknown \\$bogus"):
        queries.checked_cypher("admin", name, {**{p: 1 for p in wanted}, "bogus": 1})


def test_every_statement_file_takes_values_by_name() -> None:
    # The loader refuses $n, so every statement compiles (markers filled in as the stores do).
    for file in queries.files("sql"):
        for name in queries.names("sql", file):
            text = queries.sql(file, name)
            st = queries.variant(file, name, "TRUE" if "/*FILTER*/" in text else None,
                                 384 if "/*DIM*/" in text else None)
            numbers = {int(n) for n in re.findall(r"\$(\d+)", st.text)}
            assert numbers == set(range(1, len(st.params) + 1)), (file, name)


def test_a_filter_condition_fills_the_marker_and_keeps_its_own_names() -> None:
    st = queries.variant("search", "vector_leg", "(d.source = :filter_1)", 384)
    assert set(st.params) == {"embedding", "collections", "model", "limit", "filter_1"}
    assert "vector(384)" in st.text and "/*" not in st.text.split("FROM", 1)[1].split("ORDER")[0]
    with pytest.raises(queries.ParameterError, match="no /\\*FILTER"):
        queries.variant("search", "collection_chunk_count", "TRUE")


def test_named_values_are_checked_before_anything_runs() -> None:
    st = queries.statement("jobs", "heartbeat")
    with pytest.raises(queries.ParameterError, match="missing :id"):
        st.bind({"claim": 2})


def test_only_reads_that_cannot_change_the_session_skip_the_pool_reset() -> None:
    from graphrag.stores.repo.base import _plain_read

    assert _plain_read("-- a comment\nSELECT c.id FROM chunks c WHERE c.id = ANY($1)")
    assert _plain_read("WITH x AS (SELECT 1) SELECT * FROM x OFFSET 3")
    for text in ("SELECT set_config('work_mem', '1MB', false)", "SELECT pg_advisory_lock(1)",
                 "UPDATE jobs SET status = 'done'", "SHOW work_mem", "SET work_mem = '1MB'",
                 "WITH t AS (SELECT 1) SELECT * FROM t FOR UPDATE; LOCK TABLE chunks",
                 "SELECT 1; LISTEN x", "-- SELECT\nDECLARE c CURSOR FOR SELECT 1"):
        assert not _plain_read(text), text
    # Every search statement but the one that applies settings is a plain read.
    for name in ("vector_leg", "keyword_leg", "keyword_scores", "chunk_rows", "chunk_similarity", "completion_scores"):
        assert _plain_read(queries.sql("search", name)), name
    assert not _plain_read(queries.sql("search", "checkout_settings"))
