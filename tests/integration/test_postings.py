"""The keyword postings (migrations/008_postings.sql) against the real PostgreSQL: kept in step with the
chunks on ingest, update and delete, and scoring exactly the BM25 of the tsvector-based SQL function."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag.ingest.pipeline import Ingestor
from graphrag.runtime import Runtime
from graphrag.search.legs import BM25_B, BM25_K1, keyword_leg, keyword_scores
from graphrag.search.recipes import derive
from tests.helpers import explain

DOCS = {
    "tides.md": "# Tides\n\nTides are the rise and fall of sea levels caused by the Moon. Spring tides are strong tides.",
    "moon.md": "# The Moon\n\nThe Moon orbits the Earth. Its gravity raises the tides of the oceans.",
    "bread.md": "# Bread\n\nSourdough bread rises slowly with wild yeast and lactic acid bacteria.",
}


async def _postings(runtime: Runtime, collection: str) -> dict[tuple[str, str], int]:
    rows = await runtime.postgres.pool.fetch(
        "SELECT chunk_id::text AS chunk_id, lexeme, tf FROM chunk_postings WHERE collection = $1", collection)
    return {(r["chunk_id"], r["lexeme"]): r["tf"] for r in rows}


async def _from_tsvectors(runtime: Runtime, collection: str) -> dict[tuple[str, str], int]:
    """What the postings must hold: every (chunk, lexeme) of the chunks' tsvectors with its frequency."""
    rows = await runtime.postgres.pool.fetch(
        "SELECT c.id::text AS chunk_id, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS tf "
        "FROM chunks c CROSS JOIN LATERAL unnest(c.tsv) u WHERE c.collection = $1", collection)
    return {(r["chunk_id"], r["lexeme"]): r["tf"] for r in rows}


async def test_postings_follow_ingest_update_and_delete(tmp_path: Path, ingestor: Ingestor, runtime: Runtime,
                                                        collection: str) -> None:
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    report = await ingestor.ingest_paths([tmp_path], collection=collection)
    assert report.ingested == len(DOCS), report.failed
    first = await _postings(runtime, collection)
    assert first and first == await _from_tsvectors(runtime, collection)
    assert any(lexeme == "sourdough" for _, lexeme in first)

    # An edited document: its old chunks' postings go, the new ones come, in the same transaction.
    (tmp_path / "bread.md").write_text("# Bread\n\nRye bread is dense and keeps for a week.")
    await ingestor.ingest_paths([tmp_path], collection=collection)
    second = await _postings(runtime, collection)
    assert second == await _from_tsvectors(runtime, collection)
    lexemes = {lexeme for _, lexeme in second}
    assert "rye" in lexemes and "sourdough" not in lexemes

    # A deleted document leaves no posting behind.
    assert await ingestor.delete(collection=collection, source=str((tmp_path / "moon.md").resolve())) == 1
    third = await _postings(runtime, collection)
    assert third == await _from_tsvectors(runtime, collection)
    assert "orbit" not in {lexeme for _, lexeme in third}


async def test_keyword_leg_scores_are_the_bm25_of_the_sql_function(tmp_path: Path, ingestor: Ingestor,
                                                                   runtime: Runtime, collection: str) -> None:
    """On a collection small enough that no term's postings are cut, the leg returns exactly what the
    user-facing ``bm25_search`` function (scoring the tsvectors) returns, and its twin statement
    (score fusion's keyword evidence) agrees with both."""
    for name, text in DOCS.items():
        (tmp_path / name).write_text(text)
    await ingestor.ingest_paths([tmp_path], collection=collection)
    query = "why do the tides rise with the moon"
    config = derive("keyword", collections=(collection,))
    leg = await keyword_leg(runtime.postgres, query, config)
    reference = await runtime.postgres.pool.fetch("SELECT id::text AS id, score FROM bm25_search($1, 10, $2::text[], $3, $4)",
                                                  query, [collection], BM25_K1, BM25_B)
    assert [h[0] for h in leg.hits] == [r["id"] for r in reference]
    for (chunk_id, score, extra), row in zip(leg.hits, reference, strict=True):
        assert score == pytest.approx(row["score"], rel=1e-9), chunk_id
        assert set(extra["matched"]) <= {"tide", "rise", "moon"} and extra["matched"]
    twin = await keyword_scores(runtime.postgres, query, [h[0] for h in leg.hits], config)
    assert twin == pytest.approx({chunk_id: score for chunk_id, score, _ in leg.hits}, rel=1e-9)


async def test_keyword_leg_reads_the_postings_index(runtime: Runtime, collection: str) -> None:
    """The leg's candidates come from ordered ranges of the postings index, never a scan of chunks."""
    async with runtime.postgres.pool.acquire() as conn, conn.transaction():
        await conn.execute("SET LOCAL enable_seqscan = off")
        plan = await explain(conn, "search", "keyword_leg", texts=["tides moon"], weights=[1.0],
                             collections=[collection], limit=10, k1=BM25_K1, b=BM25_B)
    assert "chunk_postings_by_impact" in plan, plan
    assert "Seq Scan on chunks" not in plan, plan
