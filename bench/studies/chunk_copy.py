# One-off study, as run at commit bee8072 plus the batched chunk COPY (2026-11-27); not maintained: check out that commit to run it.
"""COPY 2,000 chunk rows (1,000 documents of 2 chunks, random unit vectors) into the local store, inside a
transaction that is rolled back: one DELETE and COPY per document against one of each for all. Prints
wall seconds and the CPU seconds of the PostgreSQL processes.

    GRAPHRAG_HOME=.graphrag-test python bench/studies/chunk_copy.py
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid

import numpy as np
import psutil

from graphrag.config import Settings
from graphrag.runtime import open_services
from graphrag.stores.repo.documents import CHUNK_COLUMNS

MODEL = "all-MiniLM-L6-v2"
WORDS = ["alpha", "beta", "gamma", "delta", "protein", "cell", "gene"]


def pg_cpu() -> float:
    return sum(p.cpu_times().user + p.cpu_times().system for p in psutil.process_iter() if "postgres" in p.name())


async def main() -> None:
    async with open_services(Settings()) as rt:
        rng = np.random.default_rng(0)
        for rnd in range(3):
            for mode in ("per_doc", "batched"):
                async with rt.postgres.pool.acquire() as con:
                    tr = con.transaction()
                    await tr.start()
                    await con.execute("INSERT INTO embedding_models (name, provider, spec, dim) "
                                      "VALUES ($1, 'local', 'x', 384) ON CONFLICT DO NOTHING", MODEL)
                    await con.execute("INSERT INTO collections (name, embedding_model, text_config) "
                                      "VALUES ('copybench', $1, 'english') ON CONFLICT DO NOTHING", MODEL)
                    docs = []
                    for i in range(1000):
                        did = await con.fetchval(
                            "INSERT INTO documents (collection, source, title, content_hash, metadata, tags) "
                            "VALUES ('copybench', $1, 't', 'h', '{}'::jsonb, '{}') RETURNING id", f"s{i}")
                        rows = []
                        for k in range(2):
                            v = rng.standard_normal(384).astype(np.float32)
                            text = f"chunk {i} {k} " + " ".join(random.choice(WORDS) for _ in range(150))
                            rows.append((uuid.uuid4(), did, "copybench", k, text, ["t"], 0, 10, 150, False, "{}",
                                         v / np.linalg.norm(v), MODEL, "english"))
                        docs.append((did, rows))
                    c0, t0 = pg_cpu(), time.perf_counter()
                    if mode == "per_doc":
                        for did, rows in docs:
                            await con.execute("DELETE FROM chunks WHERE document_id = $1", did)
                            await con.copy_records_to_table("chunks", records=rows, columns=list(CHUNK_COLUMNS))
                    else:
                        await con.execute("DELETE FROM chunks WHERE document_id = ANY($1::uuid[])", [d for d, _ in docs])
                        await con.copy_records_to_table("chunks", records=[r for _, rows in docs for r in rows],
                                                        columns=list(CHUNK_COLUMNS))
                    print(rnd, mode, "wall", round(time.perf_counter() - t0, 2), "pg cpu", round(pg_cpu() - c0, 2))
                    await tr.rollback()


if __name__ == "__main__":
    asyncio.run(main())
