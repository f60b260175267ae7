"""Loads SQL and Cypher text from the ``sql/`` and ``cypher/`` folders by name.

Files hold named statements::

    -- name: insert_document            (SQL)
    // name: upsert_entities            (Cypher)

A statement may include another of the same file with ``/*INCLUDE name*/`` (shared CTEs).

Parameters are named. In SQL they are written ``:name`` (``::type`` casts are left alone) and
:func:`statement` compiles them to asyncpg's ``$1, $2, ...``; :meth:`Statement.bind` turns keyword
values into the positional list, failing clearly on a missing or unknown name. Cypher uses the
driver's own ``$name``.

Two markers are filled in before compiling (:func:`variant`): ``/*FILTER*/`` takes a condition
compiled from the JSON filter language (our own fragments with ``:filter_n`` parameters), and
``/*VECTOR*/`` / ``/*DIM*/`` an embedding dimension (part of the text so the planner picks that
dimension's partial index).

Query text lives only in those files and in the typed methods of ``graphrag/stores``, which pass
values as parameters. In a wheel the folders are package data (``graphrag/sql``); in a source
checkout they sit at the repository root.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

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


class ParameterError(ValueError):
    """A statement was run with a parameter it does not declare, or without one it needs."""


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_POSITIONAL = re.compile(r"\$[0-9]+")


def _code_spans(text: str) -> list[tuple[int, int, bool]]:
    """``(start, end, is_code)`` pieces of a statement: quoted text and comments are not code."""
    spans: list[tuple[int, int, bool]] = []
    i, start, n = 0, 0, len(text)
    while i < n:
        ch = text[i]
        end = -1
        if ch in "'\"":
            end = text.find(ch, i + 1)
            while end != -1 and end + 1 < n and text[end + 1] == ch:  # '' escapes a quote
                end = text.find(ch, end + 2)
            end = n if end == -1 else end + 1
        elif text.startswith("--", i) or text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end == -1 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end == -1 else end + 2
        elif ch == "$" and (m := re.match(r"\$([A-Za-z_]\w*)?\$", text[i:])):
            close = text.find(m.group(0), i + len(m.group(0)))
            end = n if close == -1 else close + len(m.group(0))
        if end == -1:
            i += 1
            continue
        if i > start:
            spans.append((start, i, True))
        spans.append((i, end, False))
        i = start = end
    if start < n:
        spans.append((start, n, True))
    return spans


def compile_named(text: str) -> tuple[str, tuple[str, ...]]:
    """SQL with ``:name`` parameters as asyncpg text with ``$n``, and the names in ``$n`` order.

    A name used twice gets one number. ``::`` casts, quoted text and comments are left alone. A
    ``$n`` parameter is an error: values are always given by name.
    """
    names: list[str] = []
    out: list[str] = []
    for start, end, code in _code_spans(text):
        piece = text[start:end]
        if not code:
            out.append(piece)
            continue
        i = 0
        while i < len(piece):
            ch = piece[i]
            if ch == ":" and piece.startswith("::", i):
                out.append("::")
                i += 2
                continue
            word = _WORD.match(piece, i + 1) if ch == ":" else None
            if word and not (i > 0 and (piece[i - 1].isalnum() or piece[i - 1] in "_]")):
                name = word.group(0)
                if name not in names:
                    names.append(name)
                out.append(f"${names.index(name) + 1}")
                i = word.end()
                continue
            out.append(ch)
            i += 1
    if any(_POSITIONAL.search(text[s:e]) for s, e, code in _code_spans(text) if code):
        raise ParameterError("a statement uses $n parameters: write them :name")
    return "".join(out), tuple(names)


def cypher_parameters(text: str) -> frozenset[str]:
    """The ``$name`` parameters a Cypher statement uses (quoted text and comments skipped)."""
    found: set[str] = set()
    for start, end, code in _code_spans(text):
        if code:
            found.update(m.group(1) for m in re.finditer(r"\$([A-Za-z_][A-Za-z0-9_]*)", text[start:end]))
    return frozenset(found)


@dataclass(frozen=True)
class Statement:
    """One named SQL statement, compiled: asyncpg text and the parameter names in ``$n`` order."""

    file: str
    name: str
    text: str
    params: tuple[str, ...]

    @property
    def summary(self) -> str:
        return f"{self.file}.{self.name}"

    def bind(self, values: Mapping[str, Any]) -> list[Any]:
        """The positional values for ``values`` given by name; a missing or unknown name is an error."""
        _check_names(f"sql/{self.file}.sql {self.name}", ":", [p for p in self.params if p not in values],
                     sorted(set(values) - set(self.params)))
        return [values[p] for p in self.params]


@cache
def statement(file: str, name: str) -> Statement:
    """The SQL statement ``name`` of ``sql/<file>.sql``, compiled (see :func:`compile_named`)."""
    text, params = compile_named(sql(file, name))
    return Statement(file, name, text, params)


#: Prefix of the parameters of a ``/*FILTER*/`` condition; a statement's own names may not use it.
FILTER_PREFIX = "filter_"


@lru_cache(maxsize=1024)
def variant(file: str, name: str, condition: str | None = None, dim: int | None = None) -> Statement:
    """The statement with its ``/*FILTER*/`` marker replaced by ``condition`` and its dimension markers
    by ``dim``, compiled. Conditions differ by the filter's shape only (values are parameters), so the
    cache holds a few entries per statement."""
    text = sql(file, name)
    if condition is not None:
        if "/*FILTER*/" not in text:
            raise ParameterError(f"sql/{file}.sql {name} has no /*FILTER*/ marker")
        own = compile_named(text)[1]
        if any(p.startswith(FILTER_PREFIX) for p in own):
            raise ParameterError(f"sql/{file}.sql {name}: :{FILTER_PREFIX}* names belong to filters")
        text = text.replace("/*FILTER*/", condition)
    if dim is not None:
        text = with_dimension(text, dim)
    compiled, params = compile_named(text)
    return Statement(file, name, compiled, params)


def checked_cypher(file: str, name: str, params: Mapping[str, Any]) -> str:
    """The Cypher statement ``name`` of ``cypher/<file>.cypher`` after checking ``params`` against
    the ``$name`` parameters it uses (a missing or unknown one is a :class:`ParameterError`)."""
    text = cypher(file, name)
    wanted = _cypher_params(file, name)
    _check_names(f"cypher/{file}.cypher {name}", "$", sorted(wanted - set(params)), sorted(set(params) - wanted))
    return text


def _check_names(statement: str, sigil: str, missing: list[str], unknown: list[str]) -> None:
    """A :class:`ParameterError` naming the statement's missing and unknown parameters, if any."""
    parts = [f"{kind} " + ", ".join(sigil + p for p in names)
             for kind, names in (("missing", missing), ("unknown", unknown)) if names]
    if parts:
        raise ParameterError(f"{statement}: " + "; ".join(parts))


@cache
def _cypher_params(file: str, name: str) -> frozenset[str]:
    return cypher_parameters(cypher(file, name))


def names(kind: str, file: str) -> list[str]:
    """Every statement name of ``sql/<file>.sql`` or ``cypher/<file>.cypher``, in file order."""
    return list(_statements(kind, file))


def files(kind: str) -> list[str]:
    """The statement files of ``sql/`` or ``cypher/`` (stems, sorted)."""
    ext = "sql" if kind == "sql" else "cypher"
    return sorted(p.stem for p in resource_dir(kind).glob(f"*.{ext}"))


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
