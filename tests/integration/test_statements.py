"""Every statement of sql/*.sql is prepared by the real PostgreSQL and every statement of cypher/*.cypher is
planned (EXPLAIN) by the real Neo4j: a statement that no longer parses, or names a missing table, column,
function or procedure, fails here, not in production."""

from __future__ import annotations

from typing import Any

import pytest

from graphrag.runtime import Runtime
from graphrag.stores import queries

#: Pieces of text included into other statements (``/*INCLUDE name*/`` or assembled by the search code);
#: they are not statements on their own. Everything else is prepared.
SQL_FRAGMENTS = {
    ("jobs", "job_columns"),
    ("extended", "representation_terms"),
    ("search", "bm25_terms"),
}

#: Commands Neo4j does not plan: a system-database command and schema commands (index and constraint
#: creation, which the schema tests run for real).
CYPHER_NOT_PLANNED = {
    ("admin", "change_initial_password"),
    ("communities", "schema_constraint"), ("communities", "schema_collection_index"),
    ("communities", "schema_fulltext"), ("communities", "create_vector_index"),
    ("entities", "create_entity_vector_index"),
}

SQL = [(f, n) for f in queries.files("sql") for n in queries.names("sql", f)]
CYPHER = [(f, n) for f in queries.files("cypher") if f != "schema" for n in queries.names("cypher", f)]


def _expanded_sql(file: str, name: str) -> str:
    """The statement as the product runs it: markers filled in, ``:name`` parameters compiled."""
    text = queries.sql(file, name).replace("/*FILTER*/", "TRUE")
    text = queries.with_dimension(text, 384)
    return queries.compile_named(text)[0]


def test_the_skip_lists_name_existing_statements() -> None:
    assert SQL_FRAGMENTS <= set(SQL)
    assert CYPHER_NOT_PLANNED <= set(CYPHER)
    assert len(SQL) > 100 and len(CYPHER) > 50


@pytest.mark.parametrize(("file", "name"), [s for s in SQL if s not in SQL_FRAGMENTS],
                         ids=[f"{f}.{n}" for f, n in SQL if (f, n) not in SQL_FRAGMENTS])
async def test_sql_statement_prepares(runtime: Runtime, file: str, name: str) -> None:
    text = _expanded_sql(file, name)
    async with runtime.postgres.pool.acquire() as conn, conn.transaction():
        # Prepared inside a transaction that is rolled back: nothing runs, nothing stays.
        prepared = await conn.prepare(text)
        assert prepared.get_query() == text
        params = queries.statement(file, name).params
        if params:
            assert len(prepared.get_parameters()) == len(params)


@pytest.mark.parametrize(("file", "name"), [s for s in CYPHER if s not in CYPHER_NOT_PLANNED],
                         ids=[f"{f}.{n}" for f, n in CYPHER if (f, n) not in CYPHER_NOT_PLANNED])
async def test_cypher_statement_is_planned(runtime: Runtime, file: str, name: str) -> None:
    text = queries.cypher(file, name).replace("/*PROPERTY*/", "embedding")
    params: dict[str, Any] = {p: None for p in queries.cypher_parameters(text)}
    summary = (await runtime.neo4j.driver.execute_query("EXPLAIN " + text, params,
                                                        database_=runtime.neo4j.database)).summary
    assert summary.plan is not None


async def test_a_broken_statement_fails_these_checks(runtime: Runtime) -> None:
    """The checks above are not vacuous: a missing column and a misspelt procedure are refused."""
    import asyncpg
    from neo4j.exceptions import ClientError

    async with runtime.postgres.pool.acquire() as conn, conn.transaction():
        with pytest.raises(asyncpg.UndefinedColumnError):
            await conn.prepare(queries.compile_named("SELECT no_such_column FROM documents WHERE id = :id")[0])
    with pytest.raises(ClientError):
        await runtime.neo4j.driver.execute_query("EXPLAIN CALL db.no_such_procedure()",
                                                 database_=runtime.neo4j.database)
