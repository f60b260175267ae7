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
    """Runs ``sql/<file>.sql`` statements; values are keyword arguments checked against the statement.

    Positional values (``*args``) are accepted only by statements still written with ``$n`` (the
    search files, which move to names with the search code).
    """

    def __init__(self, target: Target) -> None:
        self.target = target

    @staticmethod
    def _prepare(file: str, name: str, args: tuple[Any, ...],
                 params: dict[str, Any]) -> tuple[queries.Statement, list[Any]]:
        st = queries.statement(file, name)
        if args:
            if st.params or params:
                raise queries.ParameterError(f"sql/{file}.sql {name} takes its values by name")
            return st, list(args)
        return st, st.bind(params)

    async def fetch(self, file: str, name: str, /, *args: Any, **params: Any) -> list[asyncpg.Record]:
        """The statement's rows."""
        st, values = self._prepare(file, name, args, params)
        with span(st.summary):
            return await self.target.fetch(st.text, *values)

    async def fetchrow(self, file: str, name: str, /, *args: Any, **params: Any) -> asyncpg.Record | None:
        """The statement's first row, or None."""
        st, values = self._prepare(file, name, args, params)
        with span(st.summary):
            return await self.target.fetchrow(st.text, *values)

    async def fetchval(self, file: str, name: str, /, *args: Any, **params: Any) -> Any:
        """The first column of the statement's first row."""
        st, values = self._prepare(file, name, args, params)
        with span(st.summary):
            return await self.target.fetchval(st.text, *values)

    async def execute(self, file: str, name: str, /, *args: Any, **params: Any) -> str:
        """Run the statement; its status string (``"DELETE 3"``)."""
        st, values = self._prepare(file, name, args, params)
        with span(st.summary):
            return await self.target.execute(st.text, *values)

    async def executemany(self, file: str, name: str, rows: list[dict[str, Any]] | list[tuple[Any, ...]]) -> None:
        """Run the statement once per row: named values (dicts), or positional ones for a ``$n`` statement."""
        st = queries.statement(file, name)
        bound = [st.bind(r) if isinstance(r, dict) else self._prepare(file, name, tuple(r), {})[1] for r in rows]
        with span(st.summary):
            await self.target.executemany(st.text, bound)


    def cursor(self, file: str, name: str, /, *, prefetch: int, **params: Any) -> Any:
        """A server-side cursor over the statement's rows (``async for``); the target must be a connection
        inside a transaction."""
        st, values = self._prepare(file, name, (), params)
        return self.target.cursor(st.text, *values, prefetch=prefetch)

    async def copy(self, table: str, records: list[tuple[Any, ...]], columns: list[str]) -> None:
        """COPY rows into a table (the bulk path of writes; no statement text)."""
        with span(f"copy.{table}"):
            await self.target.copy_records_to_table(table, records=records, columns=columns)


class Area:
    """Base of a typed repository: the statements of one area, bound to one :class:`Sql`."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql
