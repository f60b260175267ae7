"""Every statement of sql/*.sql is prepared by the real PostgreSQL and every statement of cypher/*.cypher is
planned (EXPLAIN) by the real Neo4j: a statement that no longer parses, or names a missing table, column,
function or procedure, fails here, not in production."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from graphrag.communities import build
from graphrag.runtime import Runtime
from graphrag.stores import queries

#: Pieces of text included into other statements (``/*INCLUDE name*/`` or assembled by the search code);
#: they are not statements on their own. Everything else is prepared.
SQL_FRAGMENTS = {
    ("jobs", "job_columns"),
    ("extended", "representation_terms"),
    ("search", "bm25_terms"),
    ("search", "bm25_weights"),
    ("search", "bm25_chunk_scores"),
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
    text = queries.sql(file, name)
    if "/*INDEX*/" in text:  # an index name, filled in from collection_vector_indexes (repo/collections.py)
        return text.replace("/*INDEX*/", "chunks_hnsw_384_0123456789abcdef")
    return queries.variant(file, name, "TRUE" if "/*FILTER*/" in text else None, 384).text


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


#: Everything the product's Cypher writes (MERGE, CREATE, SET), and the property map of a community (built
#: in Python, set whole): a label, relationship type or property key a statement reads that the test
#: database has not seen yet must at least be one of these, else it is misspelt.
WRITTEN = "\n".join([*(queries.cypher(f, n) for f, n in CYPHER if re.search(r"\b(MERGE|CREATE|SET)\b",
                                                                           queries.cypher(f, n))),
                     *queries.cypher_script("schema"), Path(build.__file__).read_text(encoding="utf-8")])
_UNKNOWN = re.compile(r"the missing (?:label name|property name|relationship type) is: ([A-Za-z_][A-Za-z0-9_]*)")


@pytest.mark.parametrize(("file", "name"), [s for s in CYPHER if s not in CYPHER_NOT_PLANNED],
                         ids=[f"{f}.{n}" for f, n in CYPHER if (f, n) not in CYPHER_NOT_PLANNED])
async def test_cypher_statement_is_planned(runtime: Runtime, file: str, name: str) -> None:
    text = queries.cypher(file, name).replace("/*PROPERTY*/", "embedding")
    params: dict[str, Any] = {p: None for p in queries.cypher_parameters(text)}
    # The product's driver turns notifications off; this session asks for the server's warnings.
    async with runtime.neo4j.driver.session(database=runtime.neo4j.database,
                                            notifications_min_severity="WARNING") as session:
        summary = await (await session.run("EXPLAIN " + text, params)).consume()
    assert summary.plan is not None
    for note in summary.summary_notifications:
        unknown = _UNKNOWN.search(note.description or "")
        if unknown is not None:
            assert re.search(rf"\b{unknown.group(1)}\b", WRITTEN), f"{file}.{name}: {note.description}"
        else:
            pytest.fail(f"{file}.{name}: {note.code}: {note.description}")


async def test_a_broken_statement_fails_these_checks(runtime: Runtime) -> None:
    """The checks above are not vacuous: a missing column and a misspelt procedure are refused, and a
    misspelt label is reported under a name nothing writes."""
    import asyncpg
    from neo4j.exceptions import ClientError

    async with runtime.postgres.pool.acquire() as conn, conn.transaction():
        with pytest.raises(asyncpg.UndefinedColumnError):
            await conn.prepare(queries.compile_named("SELECT no_such_column FROM documents WHERE id = :id")[0])
    with pytest.raises(ClientError):
        await runtime.neo4j.driver.execute_query("EXPLAIN CALL db.no_such_procedure()",
                                                 database_=runtime.neo4j.database)
    async with runtime.neo4j.driver.session(database=runtime.neo4j.database,
                                            notifications_min_severity="WARNING") as session:
        summary = await (await session.run("EXPLAIN MATCH (e:Entiy) RETURN e.nmae")).consume()
    names = {m.group(1) for n in summary.summary_notifications if (m := _UNKNOWN.search(n.description or ""))}
    assert names == {"Entiy", "nmae"} and not any(re.search(rf"\b{n}\b", WRITTEN) for n in names)
