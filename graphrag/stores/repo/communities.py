"""Typed statements of ``sql/communities.sql`` (what a collection held when its communities were computed)."""

from __future__ import annotations

from graphrag.stores.repo.base import Area


class CommunitiesQueries(Area):
    """Collection signatures: any ingest that adds, replaces or deletes a document changes them."""

    async def signatures(self, collections: list[str]) -> dict[str, str]:
        """``collection -> signature`` of the collections that hold documents."""
        rows = await self._sql.fetch("communities", "collection_signatures", collections=collections)
        return {r["collection"]: r["signature"] for r in rows}
