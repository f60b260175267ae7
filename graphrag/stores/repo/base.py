"""Runs named SQL statements with values given by name, on a pool or on one connection."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeAlias

import asyncpg

from graphrag.observability import tracing
from graphrag.stores import queries

#: Where statements run: the pool (one connection per call) or a connection (a unit of work's).
Target: TypeAlias = "asyncpg.Pool | asyncpg.Connection"


#: Set while a pooled connection that served only plain reads goes back to the pool: its reset can be skipped.
_PLAIN_READ: ContextVar[bool] = ContextVar("graphrag_plain_read", default=False)
_SESSION_WORDS = re.compile(r"set_config|advisory|\b(?:listen|notify|declare|prepare|temp|temporary|set|lock)\b", re.I)


async def reset_connection(conn: asyncpg.Connection) -> None:
    """The pool's reset of a connection coming back: asyncpg's full reset (``RESET ALL``, advisory locks,
    cursors, listeners: one round trip) unless the checkout only ran a plain read, which changes no
    session state. The search path's reads are most of the checkouts, and each reset cost as much as
    its statement."""
    if not _PLAIN_READ.get():
        await conn.reset()


@functools.lru_cache(maxsize=1024)
def _plain_read(text: str) -> bool:
    """A SELECT (or WITH ... SELECT) that cannot change the session: no settings, locks, cursors or temp
    tables. Conservative: any word that might is enough to keep the reset."""
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("--"))
    return code.lstrip().upper().startswith(("SELECT", "WITH")) and not _SESSION_WORDS.search(code)


def span(summary: str) -> Any:
    """A span for a named statement (when tracing is on): its name, never its values."""
    return tracing.span(f"postgresql {summary}", {"db.system.name": "postgresql", "db.query.summary": summary})


@dataclass(frozen=True)
class Condition:
    """A SQL condition for a statement's ``/*FILTER*/`` marker: our own fragments over the statement's
    ``c`` (chunks) and ``d`` (documents) rows, with ``:filter_n`` parameters whose values are
    ``params`` (see :func:`graphrag.stores.filters.compile_filter`)."""

    sql: str = "TRUE"
    params: Mapping[str, Any] = field(default_factory=dict)


class Sql:
    """Runs ``sql/<file>.sql`` statements; values are keyword arguments checked against the statement."""

    def __init__(self, target: Target) -> None:
        self.target = target

    async def _read(self, method: str, text: str, values: Any, **kwargs: Any) -> Any:
        """``method`` (fetch, fetchrow, fetchval) of the statement on the target; on the pool, a plain read
        returns its connection without the reset (:func:`reset_connection`)."""
        if not isinstance(self.target, asyncpg.Pool) or not _plain_read(text):
            return await getattr(self.target, method)(text, *values, **kwargs)
        plain = None
        try:
            async with self.target.acquire() as conn:
                result = await getattr(conn, method)(text, *values, **kwargs)
                plain = _PLAIN_READ.set(True)  # only once it succeeded: a failed statement gets the full reset
            return result
        finally:
            if plain is not None:
                _PLAIN_READ.reset(plain)

    async def fetch(self, file: str, name: str, /, **params: Any) -> list[asyncpg.Record]:
        """The statement's rows."""
        st = queries.statement(file, name)
        with span(st.summary):
            return await self._read("fetch", st.text, st.bind(params))

    async def fetchrow(self, file: str, name: str, /, **params: Any) -> asyncpg.Record | None:
        """The statement's first row, or None."""
        st = queries.statement(file, name)
        with span(st.summary):
            return await self._read("fetchrow", st.text, st.bind(params))

    async def fetchval(self, file: str, name: str, /, *, timeout_s: float | None = None, **params: Any) -> Any:
        """The first column of the statement's first row. ``timeout_s`` replaces the pool's per-statement
        timeout, for the few statements that run for minutes (building an index)."""
        st = queries.statement(file, name)
        with span(st.summary):
            # None: the pool's command timeout, as asyncpg reads it.
            return await self._read("fetchval", st.text, st.bind(params), timeout=timeout_s)

    async def execute(self, file: str, name: str, /, **params: Any) -> str:
        """Run the statement; its status string (``"DELETE 3"``)."""
        st = queries.statement(file, name)
        with span(st.summary):
            return await self.target.execute(st.text, *st.bind(params))

    async def executemany(self, file: str, name: str, rows: list[dict[str, Any]]) -> None:
        """Run the statement once per row of named values."""
        st = queries.statement(file, name)
        bound = [st.bind(r) for r in rows]
        with span(st.summary):
            await self.target.executemany(st.text, bound)

    async def fetch_where(self, file: str, name: str, /, *, where: Condition, dim: int | None = None,
                          settings: Mapping[str, str] | None = None, **params: Any) -> list[asyncpg.Record]:
        """The rows of a statement with markers: ``where`` fills ``/*FILTER*/``, ``dim`` the dimension
        markers. ``settings`` (``hnsw.ef_search`` ...) hold for this statement only: they are set in one
        round trip on the checked-out connection, and the pool's reset (``RESET ALL`` on release) takes
        them back; so they need a pool target. No transaction is opened: a single statement is atomic,
        and BEGIN/COMMIT would cost two more round trips."""
        st = queries.variant(file, name, where.sql, dim)
        values = st.bind({**params, **where.params})
        with span(st.summary):
            if not settings:
                return await self._read("fetch", st.text, values)
            if not isinstance(self.target, asyncpg.Pool):
                raise TypeError("statement settings need a pool target (they are reset when the connection goes back)")
            setter = queries.statement("search", "checkout_settings")
            async with self.target.acquire() as conn:
                await conn.execute(setter.text, *setter.bind({"names": list(settings),
                                                              "values": list(settings.values())}))
                return await conn.fetch(st.text, *values)

    def cursor(self, file: str, name: str, /, *, prefetch: int, **params: Any) -> Any:
        """A server-side cursor over the statement's rows (``async for``); the target must be a connection
        inside a transaction."""
        st = queries.statement(file, name)
        return self.target.cursor(st.text, *st.bind(params), prefetch=prefetch)

    async def copy(self, table: str, records: list[tuple[Any, ...]], columns: list[str]) -> None:
        """COPY rows into a table (the bulk path of writes; no statement text)."""
        with span(f"copy.{table}"):
            await self.target.copy_records_to_table(table, records=records, columns=columns)


class Area:
    """Base of a typed repository: the statements of one area, bound to one :class:`Sql`."""

    def __init__(self, sql: Sql) -> None:
        self._sql = sql
