"""Assemble the corpus of the global-question evaluation (``bench/global_eval.py``), kept out of the repository.

It is the technical corpus of ``bench/techcorpus.py`` (pydantic-ai docs, MIT; the Rust book, MIT OR
Apache-2.0; think-js, GNU FDL 1.3, its licence text included) plus a few more chapters and pages of the
same three repositories, so that corpus-level questions (errors, concurrency, testing, models) have
material in more than one source. Files are read with ``git show`` at each repository's HEAD commit,
which the manifest records with the source address and licence of every file.

    python bench/global_corpus.py --out /work/globalcorpus \\
        --pydantic-ai PATH/TO/pydantic-ai --rust-book PATH/TO/book --think-js PATH/TO/think-js

Writes ``OUT/docs/<source>/<file>.md`` (the folder to ingest) and ``OUT/MANIFEST.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from techcorpus import SOURCES, _git_dir, _show, expand_rust  # noqa: E402

EXTRA = {
    "pydantic-ai": ["docs/models/overview.md", "docs/models/http-request-retries.md", "docs/troubleshooting.md",
                    "docs/evals.md"],
    "rust-book": ["src/ch09-01-unrecoverable-errors-with-panic.md", "src/ch09-03-to-panic-or-not-to-panic.md",
                  "src/ch11-01-writing-tests.md", "src/ch16-01-threads.md", "src/ch17-01-futures-and-syntax.md"],
    "think-js": ["iteration.md", "arrays.md"],
}


def target_name(path: str) -> str:
    """The corpus file name of a repository path (as bench/techcorpus.py names them)."""
    return path.replace("/", "__").removeprefix("docs__").removeprefix("src__")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--pydantic-ai", type=Path, required=True)
    parser.add_argument("--rust-book", type=Path, required=True)
    parser.add_argument("--think-js", type=Path, required=True)
    args = parser.parse_args()
    repos = {"pydantic-ai": args.pydantic_ai, "rust-book": args.rust_book, "think-js": args.think_js}
    files_out: list[dict[str, str]] = []
    sources = []
    for name, (url, licence, files) in SOURCES.items():
        repo = _git_dir(repos[name])
        commit = subprocess.run(["git", "--git-dir", str(repo), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        sources.append({"source": name, "repo": url, "commit": commit, "licence": licence})
        folder = args.out / "docs" / name
        folder.mkdir(parents=True, exist_ok=True)
        for path in [*files, *EXTRA[name]]:
            text = _show(repo, commit, path)
            if text is None:
                raise SystemExit(f"{name}: {path} not found at {commit}")
            if name == "rust-book":
                text = expand_rust(text, repo, commit, path)
            target = folder / target_name(path)
            target.write_text(text, encoding="utf-8")
            files_out.append({"file": str(target.relative_to(args.out / "docs")), "source": name,
                              "url": f"{url}/blob/{commit}/{path}", "path": path, "licence": licence,
                              "chars": str(len(text))})
    manifest = {
        "about": "Corpus of bench/global_eval.py, assembled by bench/global_corpus.py; every file is an "
                 "unmodified page of an openly licensed repository (Rust book listings expanded as rendered).",
        "sources": sources,
        "files": files_out,
    }
    (args.out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{len(files_out)} files, {sum(int(f['chars']) for f in files_out)} characters under {args.out / 'docs'}")


if __name__ == "__main__":
    main()
