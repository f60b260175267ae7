"""Runs named SQL statements with values given by name, on a pool or on one connection."""

from __future__ import annotations

from typing import Any, TypeAlias

import asyncpg

from graphrag.observability import tracing
from graphrag.stores import queries

#: Where statements run: the pool (one connection per call) or a connection (a unit of work's).
Target: TypeAlias = "asyncpg.Pool | asyncpg.Connection"


def span(summary: str) -> Any:
    """A span for a named statement (when tracing is on): its name, never its values."""
    return tracing.span(f"postgresql {summary}", {"db.system.name": "postgresql", "db.query.summary": summary})


class Sql:
    """Runs ``sql/<file>.sql`` statements; values are keyword arguments checked against the statement."""

    def __init__(self, target: Target) -> None:
        self.target = target

    @staticmethod
    def _prepare(file: str, name: str, params: dict[str, Any]) -> tuple[queries.Statement, list[Any]]:
        st = queries.statement(file, name)
        return st, st.bind(params)

    async def fetch(self, file: str, name: str, /, **params: Any) -> list[asyncpg.Record]:
        """The statement's rows."""
        st, args = self._prepare(file, name, params)
        with span(st.summary):
            return await self.target.fetch(st.text, *args)

    async def fetchrow(self, file: str, name: str, /, **params: Any) -> asyncpg.Record | None:
        """The statement's first row, or None."""
        st, args = self._prepare(file, name, params)
        with span(st.summary):
            return await self.target.fetchrow(st.text, *args)

    async def fetchval(self, file: str, name: str, /, **params: Any) -> Any:
        """The first column of the statement's first row."""
        st, args = self._prepare(file, name, params)
        with span(st.summary):
            return await self.target.fetchval(st.text, *args)

    async def execute(self, file: str, name: str, /, **params: Any) -> str:
        """Run the statement; its status string (``"DELETE 3"``)."""
        st, args = self._prepare(file, name, params)
        with span(st.summary):
            return await self.target.execute(st.text, *args)

    async def executemany(self, file: str, name: str, rows: list[dict[str, Any]]) -> None:
        """Run the statement once per row of named values."""
        st = queries.statement(file, name)
        with span(st.summary):
            await self.target.executemany(st.text, [st.bind(r) for r in rows])


    async def copy(self, table: str, records: list[tuple[Any, ...]], columns: list[str]) -> None:
        """COPY rows into a table (the bulk path of writes; no statement text)."""
        with span(f"copy.{table}"):
            await self.target.copy_records_to_table(table, records=records, columns=columns)


class Area:
    """Base of a typed repository: the statements of one area, bound to one :class:`Sql`."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql
