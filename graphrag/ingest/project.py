"""The project a file was found in: its root folder, and what its files say of each other.

Documentation sites cross-reference their pages: Sphinx's bare ``:ref:`about-fixtures``` (MyST's
``{ref}`about-fixtures```) shows the title of the section labelled ``.. _about-fixtures:`` (MyST's
``(about-fixtures)=``), which is often in another file. A file read
alone shows the label; read as part of its project (files ingested from a folder), the label's
section title is looked up in the project's index, built once per ingest on first use.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from pathlib import Path

from graphrag.ingest.includes import project_root

__all__ = ["Project", "project_root"]

log = logging.getLogger(__name__)

_RST = (".rst", ".rest", ".txt", ".inc")
_MARKDOWN = (".md", ".markdown", ".mdx")  # MyST targets: "(label)=" over a heading
# A file larger than this is not read for labels (a generated reference); the rst loader refuses such files too.
_MAX_LABEL_FILE = 4_000_000
# Files read for labels, at most (a monorepo's root can hold many projects).
_MAX_LABEL_FILES = 5_000


@dataclass(eq=False)
class Project:
    """The folder whose files a found file may include (:func:`project_root`), and the section titles
    of its labels (:meth:`section_labels`), built once, on first use."""

    root: Path
    _labels: dict[str, str] | None = field(default=None, repr=False)
    _roles: dict[Path, dict[str, str | None]] = field(default_factory=dict, repr=False)

    def link_roles(self, path: Path) -> dict[str, str | None]:
        """The link roles of the Sphinx project ``path`` is in (the ``conf.py`` nearest above it, within
        the root): ``extlinks``' captions by role name (``"issue": "#%s"``; None shows the address), and
        ``sphinx_issues``' ``issue``, ``pr`` and ``user`` (``#123``, ``@name``); read once per ``conf.py``."""
        folder = path.parent
        conf: Path | None = None
        while folder.is_relative_to(self.root):
            if (folder / "conf.py").is_file():
                conf = folder / "conf.py"
                break
            if folder == self.root or folder.parent == folder:
                break
            folder = folder.parent
        if conf is None:  # a file the docs include from outside them (the root's CHANGES.rst): the docs' conf.py
            conf = next((self.root / d / "conf.py" for d in _DOCS_FOLDERS if (self.root / d / "conf.py").is_file()),
                        None)
        if conf is None:
            return {}
        if conf not in self._roles:
            self._roles[conf] = read_link_roles(conf)
        return self._roles[conf]

    def section_labels(self) -> dict[str, str]:
        """Section title by label (lower case) over the project's reStructuredText files (``.. _label:``)
        and Markdown files (MyST's ``(label)=``), which share one namespace in a Sphinx project; where two
        files define a label, the first in path order wins (Sphinx warns of the duplicate)."""
        if self._labels is None:
            self._labels = _scan_labels(self.root)
        return self._labels


def _scan_labels(root: Path) -> dict[str, str]:
    from graphrag.ingest.encoding import NotText, decode_text
    from graphrag.ingest.load import IGNORED_DIRS  # the folders the ingest walk skips (load imports this module)
    from graphrag.ingest.rst import section_labels
    from graphrag.ingest.sitegen import myst_section_labels

    labels: dict[str, str] = {}
    files = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in IGNORED_DIRS)
        for name in sorted(names):
            lower = name.lower()
            myst = lower.endswith(_MARKDOWN)
            if not (myst or lower.endswith(_RST)) or files >= _MAX_LABEL_FILES:
                continue
            path = Path(folder, name)
            try:
                if path.stat().st_size > _MAX_LABEL_FILE:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if (b")=" if myst else b".. _") not in data:
                continue
            files += 1
            try:
                text, _ = decode_text(data)
            except NotText:
                continue
            read = myst_section_labels if myst else section_labels
            for label, title in read(text.replace("\r\n", "\n")).items():
                labels.setdefault(label, title)
    log.debug("%s: %d section labels in %d files", root, len(labels), files)
    return labels


_MAX_CONF_BYTES = 1_000_000
# Where a project keeps its Sphinx docs' conf.py, relative to the root.
_DOCS_FOLDERS = ("docs", "doc", "docs/source", "doc/source", "docs/en", "doc/en", "documentation")


def read_link_roles(conf: Path) -> dict[str, str | None]:
    """The link roles a Sphinx ``conf.py`` defines, read with :mod:`ast` (never run): a literal
    ``extlinks = {"issue": ("https://.../%s", "#%s")}`` gives each role's caption, and the
    ``sphinx_issues`` extension its ``issue``, ``pr`` ("#%s") and ``user`` ("@%s") roles."""
    import ast

    try:
        if conf.stat().st_size > _MAX_CONF_BYTES:
            return {}
        tree = ast.parse(conf.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    roles: dict[str, str | None] = {}
    issues = False
    for node in tree.body:
        if not isinstance(node, ast.Assign):
            continue
        names = {t.id for t in node.targets if isinstance(t, ast.Name)}
        try:
            value = ast.literal_eval(node.value)
        except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
            continue
        if "extlinks" in names and isinstance(value, dict):
            for role, spec in value.items():
                if isinstance(role, str) and isinstance(spec, (tuple, list)) and len(spec) == 2:
                    caption = spec[1]
                    roles[role] = caption if isinstance(caption, str) and "%s" in caption else None
        elif "issues_github_path" in names and isinstance(value, str):
            issues = True
        elif "extensions" in names and isinstance(value, (list, tuple)) and "sphinx_issues" in value:
            issues = True
    if issues:
        for role, caption in (("issue", "#%s"), ("pr", "#%s"), ("user", "@%s")):
            roles.setdefault(role, caption)
    return roles
