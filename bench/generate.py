"""Scale corpora: collections of 10k, 100k or 1M chunks derived from a real ingested collection (SciFact).

No model runs. Each derived document is a copy of a source document; each of its chunks is the source
chunk's sentences recombined (one sentence dropped when there are three or more, one sentence of a
random other chunk inserted at a random place). Its embedding is the source chunk's real embedding plus
0.2 x the other chunk's embedding plus Gaussian noise (sigma 0.35 over the 384 dims), normalised, so a
derived chunk sits at cosine ~0.93 from its source; its entity mentions are the source chunk's (those
whose name survived the recombination, plus the inserted sentence's), its relations the source
relations with every evidence chunk replaced by its derived copies. Document metadata carries
``src`` (the SciFact ``_id``) and ``copy`` (the copy number), so results map back to the SciFact qrels.

Bulk load: PostgreSQL by COPY (documents, then chunks; the tsvector is a generated column), BM25
statistics in one INSERT ... SELECT; Neo4j by batched UNWIND (documents + chunks, NEXT, MENTIONS,
then entities' mention counts and RELATED_TO). With ``--indexes rebuild`` (default) the HNSW and GIN
indexes of ``chunks`` are dropped before the COPY and rebuilt after it (maintenance_work_mem 4GB,
2 parallel maintenance workers), which is how a bulk load is done; ``--indexes live`` keeps them and
measures COPY into indexed tables. The indexes cover the whole ``chunks`` table, so the rebuild time
covers every collection in it (reported as ``table_rows``).

    python bench/generate.py --chunks 10000                 # -> collection scale_10k
    python bench/generate.py --chunks 100000 --replace      # drop and regenerate scale_100k
    python bench/generate.py --chunks 1000000 --collection scale_1m
    python bench/generate.py --drop scale_1m                # remove a collection from both stores
    python bench/generate.py --finish scale_1m              # complete a run that stopped after the load

Writes bench/results/generate_<collection>.json (times, sizes, machine). Run from the repository root
(the local services under ./.graphrag are started on demand).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import re
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from bench.common import bench_cypher, bench_sql, dir_size, machine, write_result  # noqa: E402
from graphrag.config import Settings  # noqa: E402
from graphrag.ingest.backfill import backfill_entity_lists  # noqa: E402
from graphrag.ingest.payload import entity_id  # noqa: E402
from graphrag.ingest.vector_index import index_large_collections  # noqa: E402
from graphrag.runtime import open_services  # noqa: E402
from graphrag.stores.postgres import CHUNK_COLUMNS  # noqa: E402

SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\[(])")
NOISE_SIGMA = 0.35
OTHER_WEIGHT = 0.2
INDEX_TIMEOUT_S = 4 * 3600  # index builds outlast the pool's 60 s command timeout
DOC_COLUMNS = ("id", "collection", "source", "title", "content_hash", "metadata", "tags")


@dataclass
class SourceChunk:
    id: str
    index: int
    content: str
    heading_path: list[str]
    token_count: int
    embedding: np.ndarray
    sentences: list[str]
    mentions: list[tuple[str, int]] = field(default_factory=list)  # (source entity id, count)


@dataclass
class SourceDoc:
    source: str
    title: str
    chunks: list[SourceChunk]


def human(n: int) -> str:
    return f"{n // 1_000_000}m" if n >= 1_000_000 and n % 1_000_000 == 0 else f"{n // 1000}k"


class Neo4jRunner:
    """``run_raw`` for bench statements on a Neo4jStore (the store runs named package statements only)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    async def run_raw(self, query: str, **params: Any) -> list[dict[str, Any]]:
        result = await self.store.driver.execute_query(query, parameters_=params, database_=self.store.database)
        return [record.data() for record in result.records]

    async def run_autocommit(self, query: str, **params: Any) -> None:
        async with self.store.driver.session(database=self.store.database) as session:
            await (await session.run(query, **params)).consume()


async def load_source(rt: Any, neo: Neo4jRunner, collection: str) -> tuple[list[SourceDoc], dict[str, dict[str, Any]],
                                                          list[dict[str, Any]], str]:
    rows = await rt.postgres.pool.fetch(bench_sql("scale", "source_chunks"), collection)
    if not rows:
        raise SystemExit(f"source collection {collection!r} has no chunks; ingest it first "
                         f"(graphrag eval ../shared/eval/scifact)")
    model = rows[0]["embedding_model"]
    docs: dict[str, SourceDoc] = {}
    by_id: dict[str, SourceChunk] = {}
    for r in rows:
        emb = r["embedding"]
        emb = emb.to_numpy() if hasattr(emb, "to_numpy") else np.asarray(emb, dtype=np.float32)
        chunk = SourceChunk(str(r["id"]), r["chunk_index"], r["content"], list(r["heading_path"] or []),
                            r["token_count"], emb.astype(np.float32),
                            [s for s in SENTENCE_RE.split(r["content"]) if s.strip()])
        by_id[chunk.id] = chunk
        docs.setdefault(r["source"], SourceDoc(r["source"], r["title"], [])).chunks.append(chunk)
    entities = {e["id"]: e for e in await neo.run_raw(bench_cypher("scale", "source_entities"),
                                                             collection=collection)}
    for m in await neo.run_raw(bench_cypher("scale", "source_mentions"), collection=collection):
        if m["chunk"] in by_id and m["entity"] in entities:
            by_id[m["chunk"]].mentions.append((m["entity"], int(m["count"] or 1)))
    relations = await neo.run_raw(bench_cypher("scale", "source_relations"), collection=collection)
    return list(docs.values()), entities, relations, model


@dataclass
class Batch:
    doc_rows: list[tuple[Any, ...]] = field(default_factory=list)
    chunk_rows: list[tuple[Any, ...]] = field(default_factory=list)
    graph_docs: list[dict[str, Any]] = field(default_factory=list)
    next_pairs: list[list[str]] = field(default_factory=list)
    mentions: list[list[Any]] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.chunk_rows)


class Deriver:
    """Produces derived documents in batches, remembering what the graph's relations need."""

    def __init__(self, docs: list[SourceDoc], entities: dict[str, dict[str, Any]], collection: str,
                 model: str, seed: int) -> None:
        self.docs = docs
        self.entities = entities
        self.collection = collection
        self.model = model
        self.rng = np.random.default_rng(seed)
        self.all_chunks = [c for d in docs for c in d.chunks]
        self.derived_of: dict[str, list[str]] = {}  # source chunk id -> derived chunk ids
        self.mention_counts: dict[str, int] = {}  # derived entity id -> chunks mentioning it
        self.new_entity = {eid: entity_id(collection, e["key"]) for eid, e in entities.items()}
        self.names = {eid: (e["name"] or "").lower() for eid, e in entities.items()}

    def chunk_text(self, src: SourceChunk) -> tuple[str, SourceChunk, str]:
        sentences = list(src.sentences) or [src.content]
        if len(sentences) >= 3:
            sentences.pop(int(self.rng.integers(len(sentences))))
        other = self.all_chunks[int(self.rng.integers(len(self.all_chunks)))]
        inserted = other.sentences[int(self.rng.integers(len(other.sentences)))] if other.sentences else other.content
        sentences.insert(int(self.rng.integers(len(sentences) + 1)), inserted)
        return " ".join(sentences), other, inserted

    def mentions_of(self, text: str, src: SourceChunk, other: SourceChunk, inserted: str) -> dict[str, int]:
        low, src_low, ins_low = text.lower(), src.content.lower(), inserted.lower()
        out: dict[str, int] = {}
        for eid, count in src.mentions:
            name = self.names[eid]
            # Kept when the name is still in the text, or never was (the title entity).
            if name in low or name not in src_low:
                out[eid] = count
        for eid, _ in other.mentions:
            if self.names[eid] and self.names[eid] in ins_low:
                out.setdefault(eid, 1)
        return out

    def batches(self, total: int, batch_chunks: int):  # noqa: ANN201 - a generator of Batch
        produced = 0
        copy = 0
        batch = Batch()
        while produced < total:
            for di in self.rng.permutation(len(self.docs)):
                if produced >= total:
                    break
                doc = self.docs[int(di)]
                take = doc.chunks[: total - produced]
                doc_id = uuid.uuid4()
                source = f"scale/{doc.source}/{copy}"
                meta = {"src": doc.source, "copy": copy}
                batch.doc_rows.append((doc_id, self.collection, source, doc.title,
                                       hashlib.sha256(source.encode()).hexdigest(), json.dumps(meta), []))
                graph_chunks = []
                ids: list[str] = []
                texts, others = [], []
                for src in take:
                    text, other, inserted = self.chunk_text(src)
                    texts.append((text, src, other, inserted))
                    others.append(other.embedding)
                base = np.stack([t[1].embedding for t in texts])
                noise = self.rng.standard_normal(base.shape).astype(np.float32) * (NOISE_SIGMA / np.sqrt(base.shape[1]))
                vecs = base + OTHER_WEIGHT * np.stack(others) + noise
                vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
                offset = 0
                for (text, src, other, inserted), vec in zip(texts, vecs, strict=True):
                    cid = uuid.uuid4()
                    scid = str(cid)
                    ids.append(scid)
                    tokens = max(1, round(src.token_count * len(text) / max(len(src.content), 1)))
                    batch.chunk_rows.append((cid, doc_id, self.collection, src.index, text, src.heading_path,
                                             offset, offset + len(text), tokens, False, "{}", vec, self.model,
                                             "english"))
                    offset += len(text) + 1
                    graph_chunks.append({"id": scid, "index": src.index, "text": text})
                    self.derived_of.setdefault(src.id, []).append(scid)
                    for eid, count in self.mentions_of(text, src, other, inserted).items():
                        new = self.new_entity[eid]
                        batch.mentions.append([scid, new, count])
                        self.mention_counts[new] = self.mention_counts.get(new, 0) + 1
                batch.graph_docs.append({"id": str(doc_id), "collection": self.collection, "source": source,
                                         "title": doc.title, "chunks": graph_chunks})
                batch.next_pairs.extend([[a, b] for a, b in zip(ids, ids[1:], strict=False)])
                produced += len(take)
                if len(batch) >= batch_chunks:
                    yield batch
                    batch = Batch()
            copy += 1
        if len(batch):
            yield batch

    def entity_rows(self) -> list[dict[str, Any]]:
        return [{"id": self.new_entity[eid], "collection": self.collection, "name": e["name"], "label": e["label"],
                 "key": e["key"], "norm": e["norm"] if e.get("norm") is not None else (e["key"] or "").rsplit("|", 1)[0],
                 "embedding": e["embedding"]} for eid, e in self.entities.items()]

    def relation_rows(self, relations: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for r in relations:
            a, b = self.new_entity.get(r["source"]), self.new_entity.get(r["target"])
            if a is None or b is None or not self.mention_counts.get(a) or not self.mention_counts.get(b):
                continue
            chunks: list[str] = []
            weights: list[float] = []
            for cid, w in zip(r["chunks"] or [], r["weights"] or [], strict=False):
                for derived in self.derived_of.get(cid, []):
                    chunks.append(derived)
                    weights.append(float(w))
            if not chunks:
                continue
            evidence = []
            for p in r["predicate_evidence"] or []:
                lemma, _, cid = p.partition("@")
                evidence.extend(f"{lemma}@{d}" for d in self.derived_of.get(cid, []))
            predicates = list(dict.fromkeys(p.partition("@")[0] for p in evidence))
            out.append({"source": a, "target": b, "chunks": chunks, "weights": weights, "weight": float(sum(weights)),
                        "predicate_evidence": evidence, "predicates": predicates})
        return out


async def sizes(rt: Any) -> dict[str, Any]:
    rows = await rt.postgres.pool.fetch(bench_sql("scale", "relation_sizes"))
    db = await rt.postgres.pool.fetchval(bench_sql("scale", "database_size"))
    neo_dir = rt.settings.home_dir / "neo4j" / "data"
    return {
        "postgres_database_bytes": int(db),
        "postgres_relations": {r["name"]: {"total": int(r["total"]), "main": int(r["main"])} for r in rows},
        "neo4j_store_bytes": dir_size(neo_dir / "databases" / "neo4j"),
        "neo4j_tx_log_bytes": dir_size(neo_dir / "transactions" / "neo4j"),
    }


async def drop_collection(rt: Any, neo: Neo4jRunner, collection: str) -> dict[str, float]:
    t0 = time.perf_counter()
    async with rt.postgres.pool.acquire() as conn, conn.transaction():
        await conn.execute(bench_sql("scale", "delete_postings"), collection)
        await conn.execute(bench_sql("scale", "delete_documents"), collection)
        await conn.execute(bench_sql("scale", "delete_lexeme_stats"), collection)
        await conn.execute(bench_sql("scale", "delete_collection_stats"), collection)
        await conn.execute(bench_sql("scale", "delete_suggest_terms"), collection)
        await conn.execute(bench_sql("scale", "delete_collection_record"), collection)
    pg_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    for name in ("delete_chunks", "delete_documents", "delete_entities"):
        await neo.run_autocommit(bench_cypher("scale", name), collection=collection)
    return {"postgres_s": round(pg_s, 2), "neo4j_s": round(time.perf_counter() - t1, 2)}


async def generate(args: argparse.Namespace) -> dict[str, Any]:
    settings = Settings()
    collection = args.collection or f"scale_{human(args.chunks)}"
    async with open_services(settings) as rt:
        neo = Neo4jRunner(rt.neo4j)
        pool = rt.postgres.pool
        if args.drop:
            result = await drop_collection(rt, neo, args.drop)
            print(json.dumps({"dropped": args.drop, **result}))
            return {}
        if args.finish:
            return await finish(rt, neo, args)
        existing = await pool.fetchval(bench_sql("scale", "collection_documents"), collection)
        if existing:
            if not args.replace:
                raise SystemExit(f"collection {collection!r} exists ({existing} documents); pass --replace "
                                 f"or run --drop {collection}")
            print(f"dropping existing {collection} ...", flush=True)
            await drop_collection(rt, neo, collection)
        result: dict[str, Any] = {"collection": collection, "chunks_requested": args.chunks, "source": args.source,
                                  "seed": args.seed, "indexes": args.indexes, "machine": await machine(rt)}
        before = await sizes(rt)
        t = time.perf_counter()
        docs, entities, relations, model = await load_source(rt, neo, args.source)
        result["read_source_s"] = round(time.perf_counter() - t, 2)
        print(f"source {args.source}: {len(docs)} docs, {sum(len(d.chunks) for d in docs)} chunks, "
              f"{len(entities)} entities, {len(relations)} relations", flush=True)
        deriver = Deriver(docs, entities, collection, model, args.seed)
        times = {"generate_s": 0.0, "pg_copy_s": 0.0, "neo4j_nodes_s": 0.0, "neo4j_next_s": 0.0,
                 "neo4j_mentions_s": 0.0}

        t = time.perf_counter()
        await neo.run_raw(bench_cypher("scale", "bulk_entities"), entities=deriver.entity_rows())
        times["neo4j_entities_s"] = round(time.perf_counter() - t, 2)

        dropped = False
        if args.indexes == "rebuild":
            t = time.perf_counter()
            await pool.execute(bench_sql("scale", "drop_hnsw"))
            await pool.execute(bench_sql("scale", "drop_gin"))
            dropped = True
            times["pg_drop_indexes_s"] = round(time.perf_counter() - t, 2)
        try:
            docs_n = chunks_n = mentions_n = 0
            wall = time.perf_counter()
            gen_t = time.perf_counter()
            for batch in deriver.batches(args.chunks, args.batch):
                times["generate_s"] += time.perf_counter() - gen_t
                t = time.perf_counter()
                async with pool.acquire() as conn, conn.transaction():
                    await conn.copy_records_to_table("documents", records=batch.doc_rows, columns=list(DOC_COLUMNS))
                    await conn.copy_records_to_table("chunks", records=batch.chunk_rows, columns=list(CHUNK_COLUMNS))
                times["pg_copy_s"] += time.perf_counter() - t
                t = time.perf_counter()
                await neo.run_raw(bench_cypher("scale", "bulk_documents"), docs=batch.graph_docs)
                times["neo4j_nodes_s"] += time.perf_counter() - t
                t = time.perf_counter()
                if batch.next_pairs:
                    await neo.run_raw(bench_cypher("scale", "bulk_next"), pairs=batch.next_pairs)
                times["neo4j_next_s"] += time.perf_counter() - t
                t = time.perf_counter()
                for k in range(0, len(batch.mentions), 20000):
                    await neo.run_raw(bench_cypher("scale", "bulk_mentions"), mentions=batch.mentions[k:k + 20000])
                times["neo4j_mentions_s"] += time.perf_counter() - t
                docs_n += len(batch.doc_rows)
                chunks_n += len(batch)
                mentions_n += len(batch.mentions)
                print(f"  {chunks_n:>8} chunks  {docs_n:>7} docs  {time.perf_counter() - wall:7.1f} s", flush=True)
                gen_t = time.perf_counter()
            if dropped:
                async with pool.acquire() as conn:
                    await conn.execute("SET maintenance_work_mem = '4GB'")
                    await conn.execute("SET max_parallel_maintenance_workers = 2")
                    t = time.perf_counter()
                    await conn.execute(bench_sql("scale", "create_gin"), timeout=INDEX_TIMEOUT_S)
                    times["pg_gin_build_s"] = round(time.perf_counter() - t, 2)
                    print(f"  GIN built in {times['pg_gin_build_s']} s", flush=True)
                    t = time.perf_counter()
                    await conn.execute(bench_sql("scale", "create_hnsw"), timeout=INDEX_TIMEOUT_S)
                    times["pg_hnsw_build_s"] = round(time.perf_counter() - t, 2)
                    print(f"  HNSW built in {times['pg_hnsw_build_s']} s", flush=True)
                dropped = False
        finally:
            if dropped:  # a failure between drop and rebuild must not leave the table without its indexes
                await pool.execute(bench_sql("scale", "create_gin"), timeout=INDEX_TIMEOUT_S)
                await pool.execute(bench_sql("scale", "create_hnsw"), timeout=INDEX_TIMEOUT_S)

        t = time.perf_counter()
        async with pool.acquire() as conn, conn.transaction():
            await conn.execute(bench_sql("scale", "add_lexeme_stats"), collection)
            await conn.execute(bench_sql("scale", "add_collection_stats"), collection)
            await conn.execute(bench_sql("scale", "register_collection"), collection, args.source)
        times["pg_stats_s"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        await pool.execute(bench_sql("scale", "add_postings"), collection, timeout=INDEX_TIMEOUT_S)
        times["pg_postings_s"] = round(time.perf_counter() - t, 2)
        print(f"  keyword postings in {times['pg_postings_s']} s", flush=True)
        t = time.perf_counter()
        await pool.execute(bench_sql("scale", "analyze"))
        times["pg_analyze_s"] = round(time.perf_counter() - t, 2)
        # As an ingest would: a large collection sharing its dimension gets its own HNSW index.
        t = time.perf_counter()
        built = await index_large_collections(rt.postgres, settings.collection_index_min_chunks)
        times["pg_collection_index_s"] = round(time.perf_counter() - t, 2)
        if built:
            print(f"  collection vector index {', '.join(built)} in {times['pg_collection_index_s']} s", flush=True)

        t = time.perf_counter()
        rows = [[e, n] for e, n in deriver.mention_counts.items()]
        for k in range(0, len(rows), 20000):
            await neo.run_raw(bench_cypher("scale", "set_entity_mentions"), rows=rows[k:k + 20000])
        await neo.run_raw(bench_cypher("scale", "delete_unmentioned_entities"), collection=collection)
        times["neo4j_entity_counts_s"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        rels = deriver.relation_rows(relations)
        for k in range(0, len(rels), 2000):
            await neo.run_raw(bench_cypher("scale", "bulk_relations"), relations=rels[k:k + 2000])
        times["neo4j_relations_s"] = round(time.perf_counter() - t, 2)
        # The bulk writes went around the graph writer: the entities' chunk and neighbour lists are built here.
        t = time.perf_counter()
        await backfill_entity_lists(rt.neo4j)
        times["neo4j_entity_lists_s"] = round(time.perf_counter() - t, 2)

        after = await sizes(rt)
        table_rows = {r["collection"]: r["n"] for r in await pool.fetch(bench_sql("scale", "table_rows"))}
        times = {k: round(v, 2) for k, v in times.items()}
        pg_load = times["pg_copy_s"] + times["pg_stats_s"]
        neo_load = sum(v for k, v in times.items() if k.startswith("neo4j_"))
        result.update({
            "documents": docs_n, "chunks": chunks_n, "entities": len(deriver.mention_counts), "mentions": mentions_n,
            "relations": len(rels), "times_s": times,
            "postgres": {"load_s": round(pg_load, 2), "copy_rows_per_s": round(chunks_n / max(times["pg_copy_s"], 1e-9)),
                         "gin_build_s": times.get("pg_gin_build_s"), "hnsw_build_s": times.get("pg_hnsw_build_s"),
                         "index_build_rows": sum(table_rows.values()) if args.indexes == "rebuild" else None,
                         "analyze_s": times["pg_analyze_s"]},
            "neo4j": {"load_s": round(neo_load, 2)},
            "table_rows": table_rows,
            "sizes_before": before, "sizes_after": after,
            "size_delta_bytes": {
                "postgres_database": after["postgres_database_bytes"] - before["postgres_database_bytes"],
                "neo4j_store": after["neo4j_store_bytes"] - before["neo4j_store_bytes"],
                "neo4j_tx_logs": after["neo4j_tx_log_bytes"] - before["neo4j_tx_log_bytes"],
            },
        })
        path = write_result(f"generate_{collection}.json", result)
        print(json.dumps({k: result[k] for k in ("collection", "documents", "chunks", "entities", "mentions",
                                                  "relations", "times_s", "postgres", "neo4j", "size_delta_bytes")},
                         indent=2))
        print(f"wrote {path}")
        return result


async def finish(rt: Any, neo: Neo4jRunner, args: argparse.Namespace) -> dict[str, Any]:
    """The steps after the bulk COPY/UNWIND, for a run that stopped after loading (indexes, BM25 statistics,
    entity mention counts, relations), rebuilt from what the stores hold."""
    collection, pool = args.finish, rt.postgres.pool
    times: dict[str, float] = {}
    async with pool.acquire() as conn:
        await conn.execute("SET maintenance_work_mem = '4GB'")
        await conn.execute("SET max_parallel_maintenance_workers = 2")
        for name in ("create_gin", "create_hnsw"):
            t = time.perf_counter()
            await conn.execute(bench_sql("scale", name), timeout=INDEX_TIMEOUT_S)
            times[f"pg_{name}_if_missing_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(bench_sql("scale", "delete_lexeme_stats"), collection)
        await conn.execute(bench_sql("scale", "delete_collection_stats"), collection)
        await conn.execute(bench_sql("scale", "add_lexeme_stats"), collection, timeout=INDEX_TIMEOUT_S)
        await conn.execute(bench_sql("scale", "add_collection_stats"), collection, timeout=INDEX_TIMEOUT_S)
    times["pg_stats_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    async with pool.acquire() as conn, conn.transaction():
        await conn.execute(bench_sql("scale", "delete_postings"), collection, timeout=INDEX_TIMEOUT_S)
        await conn.execute(bench_sql("scale", "add_postings"), collection, timeout=INDEX_TIMEOUT_S)
    times["pg_postings_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    await pool.execute(bench_sql("scale", "analyze"), timeout=INDEX_TIMEOUT_S)
    times["pg_analyze_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    counts = await neo.run_raw(bench_cypher("scale", "refresh_collection_mentions"), collection=collection)
    await neo.run_raw(bench_cypher("scale", "delete_unmentioned_entities"), collection=collection)
    times["neo4j_entity_counts_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    docs, entities, relations, model = await load_source(rt, neo, args.source)
    deriver = Deriver(docs, entities, collection, model, args.seed)
    deriver.mention_counts = {r["id"]: int(r["mentions"]) for r in counts if r["mentions"]}
    for r in await pool.fetch(bench_sql("scale", "derived_chunks"), collection, args.source, timeout=INDEX_TIMEOUT_S):
        deriver.derived_of.setdefault(r["source_id"], []).append(r["derived_id"])
    rels = deriver.relation_rows(relations)
    for k in range(0, len(rels), 500):
        await neo.run_raw(bench_cypher("scale", "bulk_relations"), relations=rels[k:k + 500])
    times["neo4j_relations_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    await backfill_entity_lists(rt.neo4j)
    times["neo4j_entity_lists_s"] = round(time.perf_counter() - t, 2)
    result = {"collection": collection, "finished_steps_s": times, "entities": len(deriver.mention_counts),
              "relations": len(rels), "sizes_after": await sizes(rt),
              "table_rows": {r["collection"]: r["n"] for r in await pool.fetch(bench_sql("scale", "table_rows"))}}
    path = write_result(f"generate_{collection}_finish.json", result)
    print(json.dumps({k: v for k, v in result.items() if k != "sizes_after"}, indent=2))
    print(f"wrote {path}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=10000, help="chunks to generate (default 10000)")
    parser.add_argument("--collection", help="target collection (default scale_10k / scale_100k / scale_1m ...)")
    parser.add_argument("--source", default="scifact", help="real collection to derive from (default scifact)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch", type=int, default=10000, help="chunks per COPY / UNWIND batch")
    parser.add_argument("--indexes", choices=("rebuild", "live"), default="rebuild",
                        help="rebuild: drop HNSW+GIN, COPY, build them (bulk load); live: COPY into indexed table")
    parser.add_argument("--replace", action="store_true", help="drop the collection first when it exists")
    parser.add_argument("--drop", metavar="COLLECTION", help="only remove COLLECTION from both stores")
    parser.add_argument("--finish", metavar="COLLECTION",
                        help="only run the steps after the bulk load (indexes if missing, BM25 statistics, entity "
                             "counts, relations) for a generated COLLECTION whose run stopped after loading")
    args = parser.parse_args()
    asyncio.run(generate(args))


if __name__ == "__main__":
    main()
