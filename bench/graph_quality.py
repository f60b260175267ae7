"""Graph quality on technical text: ingest a folder into a fresh collection and measure its graph.

Reports
- the number of entities and relations, entities per label, the most mentioned entities (hubs), and
  how many entities come from a licence file (boilerplate that should stay out of the graph);
- the share of entity names a reviewer accepts: entities whose name falls in a fixed, name-hashed
  sample (so runs before and after a change review the same names where both have them) are looked
  up in the reviewed list (``bench/graph_quality_review.json``; the rule is written there). Names not
  reviewed yet are written out, so the list can be completed and the share recomputed with ``--rescore``;
- graph-mode (and, for context, vector- and auto-mode) top-1 / top-5 on the written questions of
  ``bench/graph_quality_questions.json``: a hit counts when an expected file is among the top k sources;
- extraction speed: chunks/s of the extractor alone over the corpus's chunks (best of ``--repeat``).

    python bench/techcorpus.py --out /work/techcorpus ...      # assemble the corpus (outside the repo)
    python bench/graph_quality.py --corpus /work/techcorpus --tag before
    python bench/graph_quality.py --rescore before               # after editing the review list

Results: bench/results/graph_quality_<tag>.json, the full entity list in
bench/results/graph_quality_<tag>_entities.json; ``--questions-only COLLECTION`` asks the questions
alone of a collection ingested before (graph_quality_<tag>_questions.json), for query-path A/Bs. Needs the local services (started on demand).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from common import RESULTS, bench_cypher, machine, write_result  # noqa: E402

from graphrag.config import Settings  # noqa: E402
from graphrag.ingest.load import discover, load_file  # noqa: E402
from graphrag.runtime import open_services  # noqa: E402

BENCH = Path(__file__).resolve().parent
REVIEW = BENCH / "graph_quality_review.json"
QUESTIONS = BENCH / "graph_quality_questions.json"


def in_sample(name: str, percent: int) -> bool:
    """A stable, content-independent sample: the name's hash decides, not the run."""
    return int(hashlib.sha1(name.encode("utf-8")).hexdigest(), 16) % 100 < percent


def score_names(entities: list[dict[str, Any]], review: dict[str, Any], percent: int) -> dict[str, Any]:
    """Share of sampled entity names the reviewer accepts (and with a label that is not plainly wrong)."""
    accept = set(review.get("accept", []))
    reject = review.get("reject", {})
    wrong_labels = set(review.get("wrong_labels", []))
    sampled = [e for e in entities if in_sample(e["name"], percent)]
    reviewed = [e for e in sampled if e["name"] in accept or e["name"] in reject]
    ok = [e for e in reviewed if e["name"] in accept]
    ok_label = [e for e in ok if f"{e['name']}|{e['label']}" not in wrong_labels]
    reasons = Counter(reject[e["name"]] for e in reviewed if e["name"] in reject)
    return {
        "sample_percent": percent,
        "sampled": len(sampled),
        "reviewed": len(reviewed),
        "unreviewed": sorted({e["name"] for e in sampled} - {e["name"] for e in reviewed}),
        "accepted": len(ok),
        "accepted_share": round(len(ok) / len(reviewed), 3) if reviewed else None,
        "accepted_with_label": len(ok_label),
        "accepted_with_label_share": round(len(ok_label) / len(reviewed), 3) if reviewed else None,
        "rejected_by_reason": dict(reasons.most_common()),
        "wrong_labels_seen": sorted(f"{e['name']}|{e['label']}" for e in ok if f"{e['name']}|{e['label']}" in wrong_labels),
    }


def rescore(tag: str, percent: int) -> None:
    result = json.loads((RESULTS / f"graph_quality_{tag}.json").read_text())
    entities = json.loads((RESULTS / f"graph_quality_{tag}_entities.json").read_text())
    review = json.loads(REVIEW.read_text()) if REVIEW.exists() else {}
    result["names"] = score_names(entities, review, percent)
    write_result(f"graph_quality_{tag}.json", result)
    print(json.dumps({k: v for k, v in result["names"].items() if k != "unreviewed"}, indent=1))
    print("unreviewed:", len(result["names"]["unreviewed"]))


async def questions(rt: Any, collection: str, modes: list[str], path: Path = QUESTIONS) -> dict[str, Any]:
    items = json.loads(path.read_text())["questions"]
    router = await rt.router()
    out: dict[str, Any] = {}
    for mode in modes:
        top1 = top5 = 0
        rows = []
        for q in items:
            res = await router.search(q["question"], mode=mode, limit=5, collections=[collection])
            sources = [r.source for r in res.hits]
            hit = [any(s.endswith("/" + exp) for exp in q["expected"]) for s in sources]
            top1 += bool(hit[:1] and hit[0])
            top5 += any(hit[:5])
            rows.append({"question": q["question"], "top": [s.rsplit("/", 2)[-2] + "/" + s.rsplit("/", 1)[-1]
                                                            for s in sources],
                         "rank": hit.index(True) + 1 if any(hit) else None,
                         "context_entities": [e["name"] for e in (res.graph_context or {}).get("entities", [])][:8]})
        out[mode] = {"questions": len(items), "top1": top1, "top5": top5,
                     "top1_share": round(top1 / len(items), 3), "top5_share": round(top5 / len(items), 3),
                     "per_question": rows}
    return out


def extraction_speed(models: Any, corpus: Path, repeat: int) -> dict[str, Any]:
    found, _ = discover([corpus])
    docs = [d for f in found for d in load_file(f, 1 << 30)]
    chunker = models.chunker()
    texts = [[c.text for c in chunker.chunk(d)] for d in docs]
    n = sum(len(t) for t in texts)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        models.extractor.extract_many(texts)
        best = min(best, time.perf_counter() - t)
    return {"documents": len(docs), "chunks": n, "seconds": round(best, 2), "chunks_per_s": round(n / best, 1),
            "load_average": [round(x, 2) for x in os.getloadavg()]}


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=Path("/work/techcorpus"))
    parser.add_argument("--tag", default="run")
    parser.add_argument("--sample-percent", type=int, default=25)
    parser.add_argument("--modes", default="graph,vector,auto")
    parser.add_argument("--repeat", type=int, default=2, help="extraction-speed repetitions (best is kept)")
    parser.add_argument("--no-speed", action="store_true")
    parser.add_argument("--licence-file", default="think-js/fdl-1.3.md",
                        help="a corpus file that is licence text only: its entities are boilerplate")
    parser.add_argument("--rescore", metavar="TAG", help="recompute the name share of an earlier run and exit")
    parser.add_argument("--questions", type=Path, default=QUESTIONS,
                        help="the written questions (default: bench/graph_quality_questions.json)")
    parser.add_argument("--questions-only", metavar="COLLECTION",
                        help="only ask the questions, of a collection ingested before (a query-path A/B)")
    args = parser.parse_args()
    if args.rescore:
        rescore(args.rescore, args.sample_percent)
        return
    settings = Settings()
    if args.questions_only:
        async with open_services(settings) as rt:
            asked = await questions(rt, args.questions_only, [m for m in args.modes.split(",") if m], args.questions)
        write_result(f"graph_quality_{args.tag}_questions.json",
                     {"tag": args.tag, "collection": args.questions_only, "retrieval": asked})
        print({m: (r["top1"], r["top5"]) for m, r in asked.items()})
        return
    collection = f"techq_{args.tag}_{int(time.time())}"
    async with open_services(settings) as rt:
        ingestor = await rt.ingestor()
        report = await ingestor.ingest_paths([args.corpus], collection=collection, progress=True)
        entities = await _run(rt, "collection_entities", collection=collection)
        rel = await _run(rt, "collection_relation_count", collection=collection)
        licence_keys = {r["key"] for r in await _run(rt, "document_entities", collection=collection,
                                                      suffix=args.licence_file)}
        info = await machine(rt)
        qs = await questions(rt, collection, [m for m in args.modes.split(",") if m], args.questions)
        speed = None if args.no_speed else await asyncio.to_thread(extraction_speed, await rt.models(), args.corpus,
                                                                    args.repeat)
    review = json.loads(REVIEW.read_text()) if REVIEW.exists() else {}
    result = {
        "tag": args.tag,
        "collection": collection,
        "corpus": str(args.corpus),
        "documents": report.ingested + report.updated,
        "chunks": report.chunks,
        "ingest_seconds": report.seconds,
        "entities": len(entities),
        "relations": rel[0]["relations"] if rel else 0,
        "labels": dict(Counter(e["label"] for e in entities).most_common()),
        "hubs": [f"{e['name']} ({e['label']}): {e['chunks']} chunks, {e['documents']} docs" for e in entities[:15]],
        "licence_file": {"file": args.licence_file, "entities": len(licence_keys),
                         "only_there": sum(1 for e in entities if e["key"] in licence_keys and e["documents"] == 1),
                         "names": sorted(e["name"] for e in entities if e["key"] in licence_keys)[:60]},
        "names": score_names(entities, review, args.sample_percent),
        "retrieval": qs,
        "extraction_speed": speed,
        "machine": info,
    }
    write_result(f"graph_quality_{args.tag}_entities.json", entities)
    write_result(f"graph_quality_{args.tag}.json", result)
    brief = {k: v for k, v in result.items() if k not in ("machine", "retrieval", "names", "licence_file")}
    brief["licence_file"] = {k: v for k, v in result["licence_file"].items() if k != "names"}
    brief["names"] = {k: v for k, v in result["names"].items() if k != "unreviewed"}
    brief["unreviewed"] = len(result["names"]["unreviewed"])
    brief["retrieval"] = {m: {k: v for k, v in r.items() if k != "per_question"} for m, r in qs.items()}
    print(json.dumps(brief, indent=1))


async def _run(rt: Any, name: str, **params: Any) -> list[dict[str, Any]]:
    records, _, _ = await rt.neo4j.driver.execute_query(bench_cypher("graph_quality", name), parameters_=params,
                                                        database_=rt.neo4j.database)
    return [dict(r) for r in records]


if __name__ == "__main__":
    asyncio.run(main())
