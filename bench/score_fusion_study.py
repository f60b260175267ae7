"""Score-fusion study: RRF against convex score fusion, and how sensitive each is to its weights.

``dump`` reads an ingested BEIR collection (run ``graphrag eval DIR`` first) and, per query, keeps
what fusion needs: the exact cosine similarity and the exact BM25 score of every chunk (computed
here with the keyword leg's formula, k1 0.9, b 0.4, from the chunks' tsvectors), and the graph leg's
two rankings (the walk and the named documents) with its confidence and the collection's prior,
from the real router. ``study`` then fuses the legs' top 50 offline, as the router does, over a
grid of weights, and prints document-level nDCG@10 and Recall@2/5/10:

    python bench/score_fusion_study.py dump ../shared/eval/hotpotqa /tmp/sf_hotpotqa.pkl
    python bench/score_fusion_study.py study /tmp/sf_hotpotqa.pkl

With completion (the router's default) a candidate the vector or keyword leg did not return counts
with its exact similarity or BM25 score; without it, with 0 (plain min-max fusion). Tune for the
method, not for one set's queries: held-out sets decide.
"""

from __future__ import annotations

import asyncio
import math
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

TOP = 50  # candidates per leg, as the router's overfetch
K1, B = 0.9, 0.4

CHUNKS = """
SELECT c.id::text AS id, d.source, c.token_count, c.embedding,
       (SELECT array_agg(lexeme) FROM unnest(c.tsv)) AS lexemes,
       (SELECT array_agg(coalesce(array_length(positions, 1), 1)) FROM unnest(c.tsv)) AS tf
FROM chunks c JOIN documents d ON d.id = c.document_id
WHERE c.collection = $1 AND c.embedding_model = $2
"""
QUERY_LEXEMES = "SELECT tsvector_to_array(to_tsvector('english', $1)) AS lexemes"


async def dump(folder: Path, out: Path) -> None:
    from tqdm import tqdm

    from graphrag.config import Settings
    from graphrag.evaluation import read_beir, splits
    from graphrag.runtime import open_services

    (split,) = splits(folder)  # the shared sets judge one split each
    _, queries, qrels = read_beir(folder, split)
    collection = folder.name
    async with open_services(Settings()) as rt:
        router = await rt.router()
        async with router.postgres.pool.acquire() as conn:
            rows = await conn.fetch(CHUNKS, collection, router.embedder.model_name)
            lexemes = {q: (await conn.fetchval(QUERY_LEXEMES, text[:2000])) or [] for q, text in queries.items()}
        if not rows:
            raise SystemExit(f"collection {collection!r} is empty: run `graphrag eval {folder}` first")
        qids = list(queries)
        vectors = await router.embedder.aencode([queries[q][:2000] for q in qids])
        prior = await router.graph_prior((collection,))
        graph: dict[str, Any] = {}
        for qid in tqdm(qids, desc="graph leg", unit="q", file=sys.stderr):
            r = await router.search(queries[qid][:2000], mode="graph", limit=100, collections=[collection])
            walk = sorted((h["legs"]["graph"]["rank"], h["chunk_id"], h["legs"]["graph"]["score"])
                          for h in r["results"] if "graph" in h["legs"])
            named = sorted((h["legs"]["named"]["rank"], h["chunk_id"]) for h in r["results"] if "named" in h["legs"])
            graph[qid] = {"walk": [(c, s) for _, c, s in walk], "named": [c for _, c in named],
                          "confidence": float(r["legs"]["graph"].get("confidence", 1.0))}
    chunks = [{"id": r["id"], "source": r["source"], "tokens": max(int(r["token_count"] or 1), 1),
               "embedding": np.asarray(r["embedding"].to_numpy(), dtype=np.float32),
               "terms": dict(zip(r["lexemes"] or [], r["tf"] or [], strict=True))} for r in rows]
    with out.open("wb") as fh:
        pickle.dump({"chunks": chunks, "qids": qids, "qrels": qrels, "lexemes": lexemes,
                     "vectors": np.asarray(vectors), "graph": graph, "prior": prior}, fh)


class Study:
    """Exact leg scores of one dump, and the router's two fusions over the legs' top 50."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        chunks = data["chunks"]
        self.ids = [c["id"] for c in chunks]
        self.index = {c: i for i, c in enumerate(self.ids)}
        self.source = [c["source"] for c in chunks]
        self.matrix = np.stack([c["embedding"] for c in chunks])
        self.length = np.array([c["tokens"] for c in chunks], dtype=float)
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for i, c in enumerate(chunks):
            for lexeme, tf in c["terms"].items():
                self.postings.setdefault(lexeme, []).append((i, tf))
        self.scores = {q: (self.matrix @ data["vectors"][n], self.bm25(data["lexemes"][q]))
                       for n, q in enumerate(data["qids"])}

    def bm25(self, lexemes: list[str]) -> np.ndarray:
        n, avg = len(self.ids), float(self.length.mean())
        out = np.zeros(n)
        for lexeme in set(lexemes):
            hits = self.postings.get(lexeme, [])
            if not hits:
                continue
            idf = math.log(1 + (n - len(hits) + 0.5) / (len(hits) + 0.5))
            for i, tf in hits:
                out[i] += idf * tf * (K1 + 1) / (tf + K1 * (1 - B + B * self.length[i] / avg))
        return out

    def rank(self, qid: str, legs: tuple[str, ...], fusion: str, weights: dict[str, float]) -> list[str]:
        similarity, bm25 = self.scores[qid]
        lists: dict[str, list[tuple[int, float]]] = {}
        if "vector" in legs:
            lists["vector"] = [(int(i), float(similarity[i])) for i in np.argsort(-similarity)[:TOP]]
        if "keyword" in legs:
            lists["keyword"] = [(int(i), float(bm25[i])) for i in np.argsort(-bm25)[:TOP] if bm25[i] > 0]
        w = dict(weights)
        if "graph" in legs:
            g = self.data["graph"][qid]
            lists["graph"] = [(self.index[c], s) for c, s in g["walk"][:TOP] if c in self.index]
            lists["named"] = [(self.index[c], 1.0) for c in g["named"] if c in self.index]
            w["graph"] = w.get("graph", 0.0) * g["confidence"] * self.data["prior"]
            w["named"] = w.get("named", 0.0) * self.data["prior"]
        fused: dict[int, float] = {}
        if fusion == "rrf":
            for leg, hits in lists.items():
                for r, (i, _) in enumerate(hits, start=1):
                    fused[i] = fused.get(i, 0.0) + w.get(leg, 1.0) / (60 + r)
        else:
            pool = {i for hits in lists.values() for i, _ in hits}
            exact = {"vector": similarity, "keyword": bm25} if fusion == "convex" else {}
            for leg, hits in lists.items():
                best = max((s for _, s in hits), default=0.0)
                if best <= 0:
                    continue
                given = dict(hits)
                for i in pool:
                    score = given.get(i, float(exact[leg][i]) if leg in exact else 0.0)
                    fused[i] = fused.get(i, 0.0) + w.get(leg, 1.0) * min(max(score, 0.0) / best, 1.0)
        ranked: list[str] = []
        for i in sorted(fused, key=lambda i: -fused[i]):
            if self.source[i] not in ranked:
                ranked.append(self.source[i])
        return ranked

    def evaluate(self, legs: tuple[str, ...], fusion: str, weights: dict[str, float]) -> dict[str, float]:
        from graphrag.evaluation import score as score_run

        qids = self.data["qids"]
        values = score_run({qid: self.rank(qid, legs, fusion, weights) for qid in qids},
                       {qid: self.data["qrels"][qid] for qid in qids})
        return {name: round(values[name], 4) for name in ("ndcg@10", "recall@2", "recall@5", "recall@10")}


def study(path: Path) -> None:
    with path.open("rb") as fh:
        s = Study(pickle.load(fh))
    base = {"vector": 1.0, "keyword": 1.0, "graph": 0.8, "named": 0.5}
    print(f"{len(s.data['qids'])} queries, graph prior {s.data['prior']:.3f}")
    for fusion in ("rrf", "minmax", "convex"):
        print(f"hybrid {fusion:7}", s.evaluate(("vector", "keyword"), fusion, base))
        print(f"auto   {fusion:7}", s.evaluate(("vector", "keyword", "graph"), fusion, base))
    print("auto convex, weights (keyword / graph / named; vector 1):")
    for wk in (0.7, 1.0, 1.4):
        for wg in (0.5, 0.8, 1.0):
            for wn in (0.3, 0.5, 1.0):
                weights = {**base, "keyword": wk, "graph": wg, "named": wn}
                print(f"  {wk} / {wg} / {wn}", s.evaluate(("vector", "keyword", "graph"), "convex", weights))


def main() -> None:
    from bench.common import dump_study_parser

    parser, _, _ = dump_study_parser(__doc__)
    args = parser.parse_args()
    if args.command == "dump":
        asyncio.run(dump(args.folder.resolve(), args.out))
    else:
        study(args.dump)


if __name__ == "__main__":
    main()
