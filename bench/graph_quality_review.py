"""Merge reviewer verdicts written as tab-separated lines into bench/graph_quality_review.json.

Line format: ``A<TAB>name[<TAB>WRONG_LABEL...]`` (accepted; the labels listed are plainly wrong for it)
or ``R reason<TAB>name`` (rejected, with one of the reasons named in the review file's rule).

    python bench/graph_quality_review.py verdicts.tsv
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REVIEW = Path(__file__).resolve().parent / "graph_quality_review.json"


def main() -> None:
    review = json.loads(REVIEW.read_text(encoding="utf-8"))
    accept, reject, wrong = set(review["accept"]), dict(review["reject"]), set(review["wrong_labels"])
    for path in sys.argv[1:]:
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            verdict, name, *labels = line.split("\t")
            if verdict == "A":
                accept.add(name)
                reject.pop(name, None)
                wrong |= {f"{name}|{label}" for label in labels}
            elif verdict.startswith("R "):
                reason = verdict[2:].strip()
                if reason not in review["reasons"]:
                    raise SystemExit(f"unknown reason {reason!r} for {name!r}")
                reject[name] = reason
                accept.discard(name)
            else:
                raise SystemExit(f"bad line: {line!r}")
    review["accept"] = sorted(accept)
    review["reject"] = dict(sorted(reject.items()))
    review["wrong_labels"] = sorted(wrong)
    REVIEW.write_text(json.dumps(review, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{len(accept)} accepted, {len(reject)} rejected, {len(wrong)} wrong labels")


if __name__ == "__main__":
    main()
