"""Assemble the technical corpus used by ``bench/graph_quality.py`` (kept out of the repository).

Sources (openly licensed; cloned by the user, read here with ``git show`` at a pinned commit):

- pydantic/pydantic-ai ``docs/*.md`` (MIT)
- rust-lang/book ``src/*.md`` (MIT / Apache-2.0); ``{{#include}}`` / ``{{#rustdoc_include}}`` listings are
  expanded from ``listings/`` and ``<Listing>`` tags become their caption, as the rendered book shows them
- mcuringa/think-js (GNU FDL 1.3): a few chapters plus the licence text itself, the boilerplate case

Usage::

    python bench/techcorpus.py --out /work/techcorpus \\
        --pydantic-ai PATH/TO/pydantic-ai --rust-book PATH/TO/book --think-js PATH/TO/think-js
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

PYDANTIC_AI = [
    "docs/dependencies.md", "docs/tools.md", "docs/testing.md", "docs/retries.md", "docs/timeouts.md",
    "docs/cli.md", "docs/direct.md", "docs/install.md", "docs/mcp/overview.md", "docs/mcp/server.md",
    "docs/models/ollama.md", "docs/models/groq.md", "docs/graph.md", "docs/multi-agent-applications.md",
    "docs/common-tools.md", "docs/examples/rag.md",
]
RUST_BOOK = [
    "src/ch03-02-data-types.md", "src/ch04-01-what-is-ownership.md", "src/ch04-02-references-and-borrowing.md",
    "src/ch04-03-slices.md", "src/ch08-01-vectors.md", "src/ch08-02-strings.md", "src/ch08-03-hash-maps.md",
    "src/ch09-02-recoverable-errors-with-result.md", "src/ch10-02-traits.md", "src/ch10-03-lifetime-syntax.md",
    "src/ch13-01-closures.md", "src/ch15-01-box.md", "src/ch15-04-rc.md", "src/ch15-05-interior-mutability.md",
    "src/ch16-02-message-passing.md", "src/ch16-03-shared-state.md",
]
THINK_JS = [
    "forward.md", "way_of_the_program.md", "variables.md", "functions.md", "conditionals.md", "strings.md",
    "fdl-1.3.md",
]
SOURCES = {
    "pydantic-ai": ("https://github.com/pydantic/pydantic-ai", "MIT", PYDANTIC_AI),
    "rust-book": ("https://github.com/rust-lang/book", "MIT OR Apache-2.0", RUST_BOOK),
    "think-js": ("https://github.com/mcuringa/think-js", "GFDL-1.3", THINK_JS),
}

_INCLUDE = re.compile(r"\{\{#(?:rustdoc_)?include\s+([^}\s]+)\s*\}\}")
_ATTR = re.compile(r'(\w[\w-]*)="([^"]*)"')


def _show(repo: Path, commit: str, path: str) -> str | None:
    out = subprocess.run(["git", "--git-dir", str(repo), "show", f"{commit}:{path}"], capture_output=True)
    return out.stdout.decode("utf-8", "replace") if out.returncode == 0 else None


def _git_dir(path: Path) -> Path:
    return path / ".git" if (path / ".git").exists() else path


def _anchor(text: str, spec: str) -> str:
    """The part of an included file an mdBook include names (``:anchor`` or ``:start:end`` lines)."""
    lines = text.splitlines()
    if re.fullmatch(r"\d*(?::\d*)?", spec) and spec:
        parts = spec.split(":")
        start = int(parts[0]) - 1 if parts[0] else 0
        end = int(parts[1]) if len(parts) > 1 and parts[1] else len(lines)
        lines = lines[start:end]
    elif spec:
        inside, out = False, []
        for line in lines:
            if re.search(rf"ANCHOR:\s*{re.escape(spec)}\b", line):
                inside = True
                continue
            if re.search(rf"ANCHOR_END:\s*{re.escape(spec)}\b", line):
                inside = False
                continue
            if inside:
                out.append(line)
        lines = out
    return "\n".join(line for line in lines if "ANCHOR" not in line)


def expand_rust(text: str, repo: Path, commit: str, path: str) -> str:
    base = Path(path).parent

    def include(match: re.Match[str]) -> str:
        target, _, spec = match.group(1).partition(":")
        resolved = str((base / target).as_posix())
        parts: list[str] = []
        for part in resolved.split("/"):
            if part == "..":
                parts.pop()
            elif part != ".":
                parts.append(part)
        body = _show(repo, commit, "/".join(parts))
        return _anchor(body, spec).rstrip() if body is not None else ""

    text = _INCLUDE.sub(include, text)
    captions: list[str] = []

    def opening(match: re.Match[str]) -> str:
        attrs = dict(_ATTR.findall(match.group(0)))
        number, caption = attrs.get("number", ""), attrs.get("caption", "")
        captions.append(f"Listing {number}: {caption}".strip() if number else caption)
        name = attrs.get("file-name")
        return f"Filename: {name}\n" if name else ""

    out: list[str] = []
    pos = 0
    for m in re.finditer(r'<Listing\b(?:"[^"]*"|[^>"])*>|</Listing>', text):
        out.append(text[pos:m.start()])
        if m.group(0).startswith("</"):
            out.append(captions.pop(0) if captions else "")
        else:
            out.append(opening(m))
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--pydantic-ai", type=Path, required=True)
    parser.add_argument("--rust-book", type=Path, required=True)
    parser.add_argument("--think-js", type=Path, required=True)
    args = parser.parse_args()
    repos = {"pydantic-ai": args.pydantic_ai, "rust-book": args.rust_book, "think-js": args.think_js}
    manifest = []
    for name, (url, licence, files) in SOURCES.items():
        repo = _git_dir(repos[name])
        commit = subprocess.run(["git", "--git-dir", str(repo), "rev-parse", "HEAD"], capture_output=True,
                                text=True, check=True).stdout.strip()
        folder = args.out / name
        folder.mkdir(parents=True, exist_ok=True)
        for path in files:
            text = _show(repo, commit, path)
            if text is None:
                raise SystemExit(f"{name}: {path} not found at {commit}")
            if name == "rust-book":
                text = expand_rust(text, repo, commit, path)
            target = folder / path.replace("/", "__").removeprefix("docs__").removeprefix("src__")
            target.write_text(text, encoding="utf-8")
            manifest.append({"file": str(target.relative_to(args.out)), "repo": url, "commit": commit,
                             "path": path, "licence": licence})
    (args.out / "SOURCES.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    print(f"{len(manifest)} files under {args.out}")


if __name__ == "__main__":
    main()
