"""Typed repositories: one method per SQL statement, grouped by area.

Only ``graphrag/stores`` knows statement names and query text. Code elsewhere uses
``postgres.q.<area>.<method>(...)`` (each call on a pooled connection of its own) or, for several
statements in one transaction, ``async with postgres.unit_of_work() as uow: uow.<area>.<method>(...)``.
"""

from __future__ import annotations

import asyncpg

from graphrag.stores.repo.aliases import AliasesQueries
from graphrag.stores.repo.base import Sql, Target
from graphrag.stores.repo.collections import CollectionsQueries
from graphrag.stores.repo.communities import CommunitiesQueries
from graphrag.stores.repo.documents import DocumentsQueries
from graphrag.stores.repo.jobs import JobsQueries
from graphrag.stores.repo.outbox import OutboxQueries
from graphrag.stores.repo.portable import PortableQueries
from graphrag.stores.repo.representations import RepresentationsQueries
from graphrag.stores.repo.search import SearchQueries
from graphrag.stores.repo.terms import TermsQueries


class PgQueries:
    """Every area's typed statements, bound to one target (the pool, or a unit of work's connection)."""

    def __init__(self, target: Target) -> None:
        self.sql = Sql(target)
        self.aliases = AliasesQueries(self.sql)
        self.collections = CollectionsQueries(self.sql)
        self.communities = CommunitiesQueries(self.sql)
        self.documents = DocumentsQueries(self.sql)
        self.jobs = JobsQueries(self.sql)
        self.outbox = OutboxQueries(self.sql)
        self.portable = PortableQueries(self.sql)
        self.representations = RepresentationsQueries(self.sql)
        self.search = SearchQueries(self.sql)
        self.terms = TermsQueries(self.sql)


class UnitOfWork(PgQueries):
    """The typed statements bound to one connection inside one transaction (see
    :meth:`graphrag.stores.postgres.PostgresStore.unit_of_work`)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        super().__init__(conn)
        self.conn = conn
