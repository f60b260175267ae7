"""The cheap CLI commands: --version, shell completion, and commands that need no model load none
(keyword search, status, delete), bad input fails before any store is opened, and an unknown
collection is a one-line error with exit 2."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "graphrag.cli", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=300, cwd=REPO)


def test_version_comes_from_the_package_metadata() -> None:
    result = cli("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"graphrag {version('graphrag-kg')}"


def _complete(script: str, *words: str) -> list[str]:
    """What the bash completion function offers for ``words`` (the last one being completed)."""
    line = " ".join(f"'{w}'" for w in words)
    probe = f'{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; _graphrag; printf "%s\\n" "${{COMPREPLY[@]}}"'
    out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30, check=True).stdout
    return out.split()


def test_bash_completion_follows_the_parser() -> None:
    result = cli("completion", "bash")
    assert result.returncode == 0, result.stderr
    script = result.stdout
    assert "complete -o default -F _graphrag graphrag" in script
    assert _complete(script, "graphrag", "se") == ["services", "search", "serve"]
    assert _complete(script, "graphrag", "search", "q", "--mode", "h") == ["hybrid"]
    assert _complete(script, "graphrag", "-v", "services", "") == ["up", "down", "status"]
    assert "--collection" in _complete(script, "graphrag", "search", "q", "--")
    assert _complete(script, "graphrag", "completion", "") == ["bash", "zsh"]
    # A free value (a collection name) offers nothing of ours: the shell falls back to files.
    assert _complete(script, "graphrag", "search", "--collection", "") == []


def test_zsh_completion_uses_bashcompinit() -> None:
    result = cli("completion", "zsh")
    assert result.returncode == 0, result.stderr
    assert "bashcompinit" in result.stdout and "_graphrag()" in result.stdout
    zsh = shutil.which("zsh")
    if zsh:
        probe = result.stdout + "\nprint -r -- ${_comps[graphrag]}"
        registered = subprocess.run([zsh, "-f", "-c", probe], capture_output=True, text=True, timeout=30)
        assert registered.returncode == 0 and "_graphrag" in registered.stdout, registered.stderr
    assert cli("completion", "fish").returncode == 2


# Model settings that cannot load: a command that loaded a model would fail.
NO_MODELS = {"GRAPHRAG_SPACY_MODEL": "/nonexistent/spacy-model",
             "GRAPHRAG_EMBEDDING_MODEL": "sentence-transformers:/nonexistent/embedding-model"}


async def test_cheap_commands_load_no_model(settings: Any, services: Any, ingestor: Any, tmp_path: Path,
                                            collection: str) -> None:
    (tmp_path / "harbour.md").write_text("# Harbours\n\nThe lighthouse of Alexandria guided ships into the harbour.")
    assert (await ingestor.ingest_paths([tmp_path], collection=collection)).ingested == 1
    env = {"GRAPHRAG_HOME": str(settings.home_dir), **NO_MODELS}

    found = cli("search", "lighthouse harbour", "--mode", "keyword", "--collection", collection, "--json", env=env)
    assert found.returncode == 0, found.stderr
    body = json.loads(found.stdout)
    assert [r["title"] for r in body["results"]] == ["Harbours"]
    assert body["legs"]["keyword"]["status"] == "ok" and body["legs"]["vector"]["status"] == "skipped"

    status = cli("status", "--json", env=env)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["collections"][collection]["documents"] == 1

    # No search needs spaCy: the graph leg links the query without a parse, so a graph search answers
    # with the spaCy model unloadable (the query is embedded by the model the collection records; a
    # long leg timeout, so that loading it on a loaded machine cannot time the leg out).
    graph = cli("search", "lighthouse", "--mode", "graph", "--collection", collection, "--json",
                env={**env, "GRAPHRAG_LEG_TIMEOUT_S": "120"})
    assert graph.returncode == 0, graph.stderr
    answer = json.loads(graph.stdout)
    assert answer["legs"]["graph"]["status"] == "ok", answer["legs"]
    assert [r["title"] for r in answer["results"]] == ["Harbours"]

    document_id = body["results"][0]["document_id"]
    deleted = cli("delete", "--document", document_id, "--collection", collection, env=env)
    assert deleted.returncode == 0, deleted.stderr
    assert deleted.stdout.strip() == "deleted 1 document"


def test_unknown_collection_is_one_line_and_exit_2(settings: Any, services: Any) -> None:
    env = {"GRAPHRAG_HOME": str(settings.home_dir), **NO_MODELS}
    for mode in ("keyword", "auto"):
        result = cli("search", "x", "--mode", mode, "--collection", "no_such_collection_here", env=env)
        assert result.returncode == 2, result.stderr
        assert result.stderr.count("\n") == 1 and "unknown collection 'no_such_collection_here'" in result.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--filter", '{"year": {"$foo": 1}}'], "unknown operator '$foo'"),
    (["--filter", "{"], "not valid JSON"),
    (["--collection", "no spaces"], "invalid collection name"),
])
def test_bad_input_fails_before_the_stores_are_opened(settings: Any, args: list[str], message: str) -> None:
    # Nothing listens on port 9: opening the stores would be a service error (exit 1), not exit 2.
    env = {"GRAPHRAG_HOME": str(settings.home_dir), "GRAPHRAG_POSTGRES_DSN": "postgresql://graphrag@127.0.0.1:9/none",
           **NO_MODELS}
    result = cli("search", "x", "--mode", "keyword", *args, env=env)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1


def test_a_reader_that_goes_away_is_not_an_error() -> None:
    # `graphrag ... | head -1`: the reader closes the pipe before the output is written.
    proc = subprocess.Popen([sys.executable, "-m", "graphrag.cli", "completion", "bash"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert stderr == "", stderr
