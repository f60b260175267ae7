"""A folder walk leaves out what the project's ignore files match (.gitignore, .graphragignore)."""

from __future__ import annotations

from pathlib import Path

from graphrag.ingest.ignore import IgnoreRules
from graphrag.ingest.load import discover


def _repository(root: Path) -> Path:
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".git" / "info" / "exclude").write_text("private.md\n")
    (root / ".gitignore").write_text("site/\n*.log\n")
    (root / ".graphragignore").write_text("notes/*\n!notes/final.md\n")
    (root / "docs" / "_build" / "html").mkdir(parents=True)
    (root / "docs" / ".gitignore").write_text("_build/\n!keep.log\n")
    (root / "docs" / "_build" / "html" / "index.html").write_text("<p>Built again.</p>")
    (root / "docs" / "index.md").write_text("# Guide\n\nText.\n")
    (root / "site").mkdir()
    (root / "site" / "index.html").write_text("<p>Built again.</p>")
    (root / "notes").mkdir()
    for name in ("draft.md", "final.md"):
        (root / "notes" / name).write_text("# Note\n\nText.\n")
    for name in ("run.log", "private.md", "readme.md", "docs/keep.log"):
        (root / name).write_text("Text.\n")
    return root


def test_a_folder_walk_leaves_out_what_the_ignore_files_match(tmp_path: Path) -> None:
    root = _repository(tmp_path)
    found, skipped = discover([root])
    assert [f.path.relative_to(root).as_posix() for f in found] == ["docs/index.md", "notes/final.md", "readme.md"]
    ignored = {Path(s["path"]).relative_to(root).as_posix(): s["reason"] for s in skipped if s["reason"].startswith("ignored")}
    assert ignored == {"docs/_build": "ignored by docs/.gitignore", "notes/draft.md": "ignored by .graphragignore",
                       "private.md": "ignored by .git/info/exclude", "run.log": "ignored by .gitignore",
                       "site": "ignored by .gitignore"}
    # docs/.gitignore takes keep.log back from the root's *.log: a deeper folder's rules come first
    assert "docs/keep.log" in {Path(s["path"]).relative_to(root).as_posix() for s in skipped
                               if s["reason"].startswith("unsupported")}
    # without the rules, the build outputs are found too; a walk of a subfolder still reads the root's
    assert len(discover([root], read_ignore_files=False)[0]) == 7
    assert [f.path.name for f in discover([root / "notes"])[0]] == ["final.md"]


def test_a_folder_named_on_the_command_line_is_read_though_ignored(tmp_path: Path) -> None:
    root = _repository(tmp_path)
    found, _ = discover([root / "docs" / "_build" / "html"])
    assert [f.path.name for f in found] == ["index.html"]
    assert [f.path.name for f in discover([root / "private.md"])[0]] == ["private.md"]  # a file named: read
    assert IgnoreRules(root).ignored_by(root / "site" / "deep" / "page.html", False) == ".gitignore"
    assert IgnoreRules(root).ignored_by(tmp_path.parent / "elsewhere.md", False) is None  # outside the project


def test_a_pattern_made_to_backtrack_is_left_out(tmp_path: Path) -> None:
    # "a*a*a*a*a*a*a*a*b" against a long name of a's backtracks for minutes in a regular expression.
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("a*a*a*a*a*a*a*a*b\n*.log\n")
    (tmp_path / ("a" * 200 + ".md")).write_text("# A\n\nText.\n")
    (tmp_path / "run.log").write_text("Text.\n")
    found, skipped = discover([tmp_path])
    assert [f.path.name for f in found] == ["a" * 200 + ".md"]
    assert [(Path(s["path"]).name, s["reason"]) for s in skipped] == [("run.log", "ignored by .gitignore")]


def test_the_users_global_git_excludes_come_last(tmp_path: Path, monkeypatch) -> None:
    root = _repository(tmp_path / "repo")
    home = tmp_path / "home"
    (home / "git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    (home / "git" / "ignore").write_text("scratch/\nreadme.md\n")  # git's default place
    (root / "scratch").mkdir()
    (root / "scratch" / "todo.md").write_text("# Todo\n")
    found, skipped = discover([root])
    assert "readme.md" not in {f.path.name for f in found}
    reasons = {Path(s["path"]).name: s["reason"] for s in skipped}
    assert reasons["scratch"] == f"ignored by {home / 'git' / 'ignore'}"
    # core.excludesFile names another file; a repository's own rules still come first
    (home / ".gitconfig").write_text('[user]\n  name = x\n[core]\n  excludesFile = "~/my-excludes"\n')
    (home / "my-excludes").write_text("*.md\n")
    (root / ".gitignore").write_text("site/\n*.log\n!readme.md\n")
    found, _ = discover([root])
    # docs/index.md goes by the global *.md; .gitignore and .graphragignore take two files back
    assert sorted(f.path.relative_to(root).as_posix() for f in found) == ["notes/final.md", "readme.md"]
    assert not any(f.path.name == "todo.md" for f in found)
