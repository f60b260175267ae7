"""The documentation is a checked artefact: generated pages are current, the site builds strictly,
and the code blocks in the pages are valid (commands parse with the real CLI parser, JSON parses).

Pure: no servers, no models; ``mkdocs`` is a dependency of the ``test`` extra.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from graphrag.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.rglob("*.md"))
MARKDOWN = [*PAGES, ROOT / "README.md"]

_FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```\s*$", re.MULTILINE | re.DOTALL)


def _gen_docs() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _blocks(lang: str) -> list[tuple[str, str]]:
    """(where, body) of every fenced block in language ``lang`` across the docs and the README."""
    found = []
    for page in MARKDOWN:
        text = page.read_text("utf-8")
        for match in _FENCE.finditer(text):
            if match["lang"] == lang:
                line = text.count("\n", 0, match.start()) + 1
                indent = len(match["indent"])
                body = "\n".join(row[indent:] for row in match["body"].splitlines())
                found.append((f"{page.relative_to(ROOT)}:{line}", body))
    return found


def _complete(command: str) -> bool:
    try:
        shlex.split(command, comments=True)
    except ValueError:  # a quote still open: the command goes on on the next line
        return False
    return True


def _commands(body: str) -> list[str]:
    """Shell commands of a bash block: continued and multi-line quoted commands joined, comment and
    output lines (``# ...``) dropped."""
    commands, current = [], ""
    for raw in body.splitlines():
        line = raw.rstrip()
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            current += line[:-1] + " "
            continue
        current += line
        if _complete(current):
            commands.append(current)
            current = ""
        else:
            current += "\n"
    assert not current, f"unfinished command: {current!r}"
    return commands


def _graphrag_argv(command: str) -> list[str] | None:
    """The graphrag arguments of a command line, or None when the line does not run graphrag."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError as exc:
        raise AssertionError(f"not valid shell: {command!r} ({exc})") from None
    # Leading VAR=value assignments and wrappers (nice, time) do not change the graphrag command.
    while words and (re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]) or words[0] in {"time", "nice", "exec"}):
        words.pop(0)
    if not words or Path(words[0]).name != "graphrag":
        return None
    argv = words[1:]
    for stop in ("|", "&&", "||", ";", "&", ">", "2>", ">>"):  # only the graphrag part of a pipeline
        if stop in argv:
            argv = argv[: argv.index(stop)]
    return argv


def test_generated_reference_pages_are_current() -> None:
    stale = _gen_docs().stale_pages()
    assert not stale, f"stale generated docs {[str(p.relative_to(ROOT)) for p in stale]}: run python scripts/gen_docs.py"


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_cli_reference_lists_every_command_and_option() -> None:
    page = (DOCS / "reference" / "cli.md").read_text("utf-8")
    for name, sub in _subcommands().items():
        assert f"## graphrag {name}\n" in page, name
        for action in sub._actions:
            for option in action.option_strings:
                assert option in page, (name, option)


def test_settings_reference_lists_every_setting() -> None:
    from graphrag.config import Settings

    page = (DOCS / "reference" / "settings.md").read_text("utf-8")
    for name in Settings.model_fields:
        assert f"`GRAPHRAG_{name.upper()}`" in page, name


def test_every_command_has_a_place_in_the_cli_guide() -> None:
    guide = (DOCS / "cli.md").read_text("utf-8")
    missing = [name for name in _subcommands() if f"graphrag {name}" not in guide]
    assert not missing, f"commands the CLI guide never shows: {missing}"


def test_graphrag_commands_in_the_docs_parse() -> None:
    parser = build_parser()
    checked = 0
    for where, body in _blocks("bash"):
        for command in _commands(body):
            argv = _graphrag_argv(command)
            if argv is None:
                continue
            try:
                parser.parse_args(argv)
            except SystemExit as exc:
                raise AssertionError(f"{where}: `graphrag {shlex.join(argv)}` does not parse") from exc
            checked += 1
    assert checked >= 50, f"only {checked} graphrag command lines found in the docs"


def test_json_blocks_are_valid_json() -> None:
    blocks = _blocks("json")
    assert blocks
    for where, body in blocks:
        try:
            json.loads(body)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"{where}: not valid JSON: {exc}") from None


def test_python_blocks_compile() -> None:
    blocks = _blocks("python")
    assert blocks
    for where, body in blocks:
        # Examples may await at the top level, as in an async REPL or notebook.
        compile(body, where, "exec", flags=0x2000)  # ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


def test_links_from_the_readme_resolve() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    targets = re.findall(r"\]\((?!https?://|#)([^)#\s]+)", readme)
    assert targets
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"README links to missing files: {missing}"


def test_site_builds_strictly(tmp_path: Path) -> None:
    """``mkdocs build --strict``: every page in the nav, every internal link and anchor resolves."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(tmp_path / "site")],
        check=False, cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").exists()


@pytest.mark.parametrize("page", [p.relative_to(DOCS).as_posix() for p in PAGES])
def test_every_page_is_in_the_nav(page: str) -> None:
    config = (ROOT / "mkdocs.yml").read_text("utf-8")
    assert page in config, f"docs/{page} is not in mkdocs.yml's nav"


def test_yaml_blocks_parse() -> None:
    import yaml

    blocks = _blocks("yaml")
    assert blocks
    for where, body in blocks:
        assert yaml.safe_load(body) is not None, where


def _statements(path: Path) -> dict[str, str]:
    """Named statements of a Cypher file (``// name: x`` headers), comments dropped, whitespace folded."""
    found: dict[str, str] = {}
    name = None
    for line in path.read_text("utf-8").splitlines():
        if match := re.match(r"//\s*name:\s*(\w+)", line):
            name = match[1]
            found[name] = ""
        elif name and not line.lstrip().startswith("//"):
            found[name] += " " + line
    return {key: " ".join(text.split()) for key, text in found.items()}


def test_cypher_blocks_are_the_statements_of_inspect_cypher() -> None:
    """The Browser queries shown in the docs are copies of cypher/inspect.cypher: they must not drift."""
    statements = _statements(ROOT / "cypher" / "inspect.cypher")
    blocks = _blocks("cypher")
    assert blocks
    for where, body in blocks:
        header, _, statement = body.partition("\n")
        match = re.match(r"//\s*(\w+):", header)
        assert match and match[1] in statements, f"{where}: no statement {header!r} in cypher/inspect.cypher"
        shown = " ".join(line for line in statement.splitlines() if not line.lstrip().startswith("//"))
        assert " ".join(shown.split()) == statements[match[1]], f"{where}: differs from cypher/inspect.cypher"
