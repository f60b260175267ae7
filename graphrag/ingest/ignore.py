"""What a repository says is not its own: ``.gitignore`` rules (and ``.graphragignore``) on a folder walk.

A repository's folder holds what its builds wrote beside its sources: Sphinx's ``docs/_build/html`` (each
page again, as HTML), MkDocs' ``site/``, Jekyll's ``_site/``, rustdoc's ``target/doc``, coverage
reports in ``htmlcov/``. Ingested with the sources, each page would come twice and generated pages
would crowd the rest. A folder walk reads the ignore files git reads (``.gitignore`` in each folder
from the project root down, and ``.git/info/exclude``) and ``.graphragignore`` (the same syntax, for
what a collection should leave out though git keeps it; read after ``.gitignore`` in its folder, so
it can also take a file back with ``!``), and leaves out what they match: a folder is not entered, a
file is not read, each reported once as skipped. A deeper folder's rules come before a shallower
one's, as in git, and the user's global excludes file (git's ``core.excludesFile``, by default
``~/.config/git/ignore``) comes last, in a git repository. Files named on the command line are read
whatever the rules say.
"""

from __future__ import annotations

import logging
import os
import re
from functools import lru_cache
from pathlib import Path

from pathspec import GitIgnoreSpec

log = logging.getLogger(__name__)

IGNORE_FILES = (".graphragignore", ".gitignore")  # within a folder, the first that matches decides
_MAX_RULES_BYTES = 1 << 20  # an ignore file larger than this is not a list of rules a person wrote
# pathspec matches with regular expressions, in which each "*" of a name part may backtrack over the
# others: four of them took 0.3 s on a 250-character name, five 11 s. Real patterns have one or two
# ("*.pyc", "docs/*/_build"); a pattern with more is left out (with a warning), so a crafted
# .gitignore cannot stall a walk.
_MAX_STARS = 3


class IgnoreRules:
    """The ignore files of the folders from ``root`` (the project root) down, read once per folder."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._folder_rules = lru_cache(maxsize=None)(self._read)

    def _read(self, folder: Path) -> tuple[tuple[str, GitIgnoreSpec], ...]:
        rules: list[tuple[str, GitIgnoreSpec]] = []
        names = list(IGNORE_FILES)
        if folder == self.root and (folder / ".git").exists():
            names.append(".git/info/exclude")
            if (excludes := global_excludes_file()) is not None:
                names.append(str(excludes))  # absolute: folder / name is the file itself
        for name in names:
            path = folder / name
            try:
                if not path.is_file() or path.stat().st_size > _MAX_RULES_BYTES:
                    continue
                lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
                kept = [line for line in lines if line.replace("**", "").count("*") <= _MAX_STARS]
                if len(kept) < len(lines):
                    log.warning("%s: %d pattern(s) with more than %d '*' left out", path, len(lines) - len(kept),
                                _MAX_STARS)
                rules.append((name, GitIgnoreSpec.from_lines(kept)))
            except (OSError, ValueError) as exc:  # unreadable, or a pattern pathspec cannot compile
                log.warning("%s: ignore rules not read (%s)", path, exc)
        return tuple(rules)

    def ignored_by(self, path: Path, is_dir: bool) -> str | None:
        """The ignore file (relative to the project root) whose rules leave ``path`` out, or None."""
        try:
            relative = path.relative_to(self.root)
        except ValueError:
            return None
        folders = [self.root / Path(*relative.parts[:depth]) for depth in range(len(relative.parts))]
        for folder in reversed(folders):  # the deepest folder's rules first
            for name, spec in self._folder_rules(folder):
                result = spec.check_file(path.relative_to(folder).as_posix() + ("/" if is_dir else ""))
                if result.include is not None:
                    file = folder / name
                    source = file.relative_to(self.root).as_posix() if file.is_relative_to(self.root) else str(file)
                    return source if result.include else None
        return None


def global_excludes_file() -> Path | None:
    """The user's global git excludes file: ``core.excludesFile`` of ``$GIT_CONFIG_GLOBAL`` (else
    ``~/.gitconfig``, then ``$XDG_CONFIG_HOME/git/config``), else ``$XDG_CONFIG_HOME/git/ignore``
    (``~/.config/git/ignore``); None when there is no such file."""
    home = Path.home()
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    configs = [Path(os.environ["GIT_CONFIG_GLOBAL"])] if os.environ.get("GIT_CONFIG_GLOBAL") else [
        home / ".gitconfig", xdg / "git" / "config"]
    chosen: str | None = None
    for config in reversed(configs):  # ~/.gitconfig wins over the XDG file, as in git
        value = _excludes_setting(config)
        chosen = value if value is not None else chosen
    path = Path(os.path.expanduser(chosen)) if chosen else xdg / "git" / "ignore"
    return path if path.is_file() else None


_SECTION = re.compile(r"^\s*\[\s*([\w.-]+)(?:\s+\"[^\"]*\")?\s*\]")
_EXCLUDES = re.compile(r"^\s*excludesfile\s*=\s*(.*?)\s*$", re.I)


def _excludes_setting(config: Path) -> str | None:
    """``core.excludesFile`` as a git config file sets it (the last setting wins), or None."""
    try:
        lines = config.read_text(encoding="utf-8", errors="replace").splitlines()[:10_000]
    except OSError:
        return None
    section = ""
    value = None
    for line in lines:
        if (m := _SECTION.match(line)) is not None:
            section = m.group(1).lower()
        elif section == "core" and (m := _EXCLUDES.match(line)) is not None:
            value = m.group(1).strip('"') or None
    return value
