"""Which judged queries of an evaluation set query expansion changes, and with what terms.

    python bench/expansions.py ../shared/eval/hotpotqa --collection hotpotqa \
        --out bench/results/expansions_hotpotqa.json [--split test] [--synonyms FILE]

Uses the home's services (GRAPHRAG_HOME) and the collection's entity aliases (run ``graphrag aliases
--collection C`` first for a collection ingested before aliases were kept); ``--synonyms`` adds a list.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections import Counter
from pathlib import Path

from graphrag.config import Settings
from graphrag.runtime import open_services
from graphrag.search.expansion import QueryExpander


def judged_queries(folder: Path, split: str) -> list[dict[str, str]]:
    """The queries ``qrels/<split>.tsv`` judges, in file order."""
    lines = (folder / "qrels" / f"{split}.tsv").read_text(encoding="utf-8").splitlines()[1:]
    judged = {line.split("\t")[0] for line in lines if line.strip()}
    rows = [json.loads(line) for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines() if line]
    return [q for q in rows if q["_id"] in judged]


async def run(folder: Path, collection: str, split: str, synonyms: Path | None) -> dict[str, object]:
    queries = judged_queries(folder, split)
    async with open_services(Settings()) as rt:
        expander = QueryExpander(synonyms_file=synonyms)
        rows, sources = [], Counter()
        for q in queries:
            expansion = await expander.expand(rt.postgres, rt.neo4j, q["text"][:2000], [collection])
            if expansion.terms:
                rows.append({"id": q["_id"], "query": q["text"], **expansion.report()})
                sources.update(t.source for t in expansion.terms)
    return {"collection": collection, "split": split, "queries": len(queries), "expanded_queries": len(rows),
            "terms_by_source": dict(sources), "examples": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--collection", required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--synonyms", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    result = asyncio.run(run(args.folder, args.collection, args.split, args.synonyms))
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{result['expanded_queries']} of {result['queries']} queries expanded; {result['terms_by_source']}")


if __name__ == "__main__":
    main()
