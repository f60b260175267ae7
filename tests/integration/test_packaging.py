"""The built wheel carries the SQL and Cypher files as package data, not only the source tree."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow  # builds and installs the wheel


def test_wheel_ships_sql_cypher_and_pom(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(tmp_path), str(REPO)],
        check=True, timeout=300,
    )
    wheel = next(tmp_path.glob("graphrag_kg-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for folder, ext in (("sql", ".sql"), ("cypher", ".cypher")):
        for source in (REPO / folder).rglob(f"*{ext}"):
            assert f"graphrag/{source.relative_to(REPO).as_posix()}" in names, source
    assert "graphrag/services/neo4j-pom.xml" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "graphrag = graphrag.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
