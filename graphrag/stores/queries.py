"""Loads SQL and Cypher text from the ``sql/`` and ``cypher/`` folders by name.

Files hold named statements::

    -- name: insert_document            (SQL)
    // name: upsert_entities            (Cypher)

A statement may include another of the same file with ``/*INCLUDE name*/`` (shared CTEs).

Query text lives only in those files; code refers to statements by ``(file, name)`` and passes
values as parameters. In a wheel the folders are package data (``graphrag/sql``); in a source
checkout they sit at the repository root.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
_NAME_RE = re.compile(r"^\s*(?:--|//)\s*name:\s*([A-Za-z_][A-Za-z0-9_]*)\s*$")
_INCLUDE_RE = re.compile(r"/\*INCLUDE ([A-Za-z_][A-Za-z0-9_]*)\*/")


def resource_dir(kind: str) -> Path:
    """Folder of ``sql`` or ``cypher`` files, inside the package when installed, else the repo root."""
    if kind not in ("sql", "cypher"):
        raise ValueError(f"unknown resource kind {kind!r}")
    for candidate in (_PACKAGE_DIR / kind, _PACKAGE_DIR.parent / kind):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"cannot find the {kind}/ folder next to {_PACKAGE_DIR}")


def _parse_named(text: str) -> dict[str, str]:
    statements: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        match = _NAME_RE.match(line)
        if match:
            name = match.group(1)
            if name in statements:
                raise ValueError(f"statement {name!r} defined twice")
            current = statements[name] = []
        elif current is not None:
            current.append(line)
    result = {}
    for name, lines in statements.items():
        body = "\n".join(lines).strip()
        # A trailing semicolon is harmless in SQL but rejected by the Neo4j driver.
        result[name] = body[:-1].rstrip() if body.endswith(";") else body

    def include(match: re.Match[str]) -> str:
        if match.group(1) not in result:
            raise ValueError(f"/*INCLUDE {match.group(1)}*/ names no statement of this file")
        # The fragment's own comments stay in the file; the statement gets its text only.
        lines = result[match.group(1)].splitlines()
        return "\n".join(line for line in lines if not line.lstrip().startswith(("--", "//")))

    # A fragment shared by statements (common CTEs) is written once and included by name.
    return {name: _INCLUDE_RE.sub(include, body) for name, body in result.items()}


@cache
def _statements(kind: str, file: str) -> dict[str, str]:
    ext = "sql" if kind == "sql" else "cypher"
    path = resource_dir(kind) / f"{file}.{ext}"
    return _parse_named(path.read_text(encoding="utf-8"))


def sql(file: str, name: str) -> str:
    """The SQL statement ``name`` from ``sql/<file>.sql``."""
    try:
        return _statements("sql", file)[name]
    except KeyError:
        raise KeyError(f"no statement {name!r} in sql/{file}.sql") from None


def cypher(file: str, name: str) -> str:
    """The Cypher statement ``name`` from ``cypher/<file>.cypher``."""
    try:
        return _statements("cypher", file)[name]
    except KeyError:
        raise KeyError(f"no statement {name!r} in cypher/{file}.cypher") from None


def cypher_script(file: str) -> list[str]:
    """Every statement of an unnamed Cypher script (``;``-separated, ``//`` comments dropped)."""
    text = (resource_dir("cypher") / f"{file}.cypher").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if not ln.strip().startswith("//")]
    return [stmt.strip() for stmt in "\n".join(lines).split(";") if stmt.strip()]


def vector_type(dim: int) -> str:
    """The pgvector type one dimension's index is built on (see graphrag_vector_type in the migrations)."""
    if isinstance(dim, bool) or not isinstance(dim, int) or not 1 <= dim <= 4000:
        raise ValueError(f"not an indexable embedding dimension: {dim!r}")
    return f"vector({dim})" if dim <= 2000 else f"halfvec({dim})"


def with_dimension(text: str, dim: int) -> str:
    """A statement's ``/*VECTOR*/`` and ``/*DIM*/`` markers filled in for one embedding dimension.

    The partial HNSW index of a dimension is on ``embedding::vector(N)`` over the rows with
    ``vector_dims(embedding) = N``; the planner uses it only when the statement repeats both
    literally, so they are part of the text, not parameters. ``dim`` is an integer we checked.
    """
    vtype = vector_type(dim)
    return text.replace("/*VECTOR*/", vtype).replace("/*DIM*/", str(dim))


def migrations() -> list[tuple[str, str]]:
    """``(version, sql)`` of every file in ``sql/migrations``, in order."""
    folder = resource_dir("sql") / "migrations"
    return [(p.stem, p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.sql"))]
