"""The JSON filter language, compiled to a SQL condition whose values (field names included) are parameters.

::

    {"field": value}                                  equality
    {"field": {"$eq|$ne|$gt|$gte|$lt|$lte": v}}       comparison (numbers compare as numbers)
    {"field": {"$in" | "$nin": [v, ...]}}             membership
    {"field": {"$contains": "text"}}                  substring (case-insensitive) or array element
    {"$and" | "$or": [filter, ...]}                   combination

Fields are metadata keys (chunk metadata first, then document metadata) or the document columns
``source``, ``title``, ``collection``, ``tags`` (``tags`` matches when the document has the tag).
The compiled text only ever contains our own fragments and ``:filter_n`` placeholders (named
parameters, see :mod:`graphrag.stores.queries`); a malformed filter raises :class:`InvalidInput`
naming the problem.
"""

from __future__ import annotations

import json
import re
from typing import Any

from graphrag.errors import InvalidInput
from graphrag.stores.queries import FILTER_PREFIX
from graphrag.stores.repo.base import Condition

FIELD_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,63}$")
COMPARISONS = {"$eq": "=", "$ne": "<>", "$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
OPERATORS = set(COMPARISONS) | {"$in", "$nin", "$contains"}
COLUMNS = {"source": "d.source", "title": "d.title", "collection": "d.collection"}
MAX_DEPTH = 8
MAX_CLAUSES = 64


class _Compiler:
    def __init__(self) -> None:
        self.params: dict[str, Any] = {}
        self.clauses = 0

    def param(self, value: Any) -> str:
        name = f"{FILTER_PREFIX}{len(self.params) + 1}"
        self.params[name] = value
        return f":{name}"

    def compile(self, node: Any, depth: int, where: str) -> str:
        if depth > MAX_DEPTH:
            raise InvalidInput(f"filter nested deeper than {MAX_DEPTH} levels at {where}")
        if not isinstance(node, dict) or not node:
            raise InvalidInput(f"filter at {where} must be a non-empty JSON object")
        parts = []
        for key, value in node.items():
            self.clauses += 1
            if self.clauses > MAX_CLAUSES:
                raise InvalidInput(f"filter has more than {MAX_CLAUSES} clauses")
            if key in ("$and", "$or"):
                if not isinstance(value, list) or not value:
                    raise InvalidInput(f"{key} at {where} needs a non-empty list of filters")
                subs = [self.compile(v, depth + 1, f"{where}.{key}[{i}]") for i, v in enumerate(value)]
                parts.append("(" + (" AND " if key == "$and" else " OR ").join(subs) + ")")
            elif key.startswith("$"):
                raise InvalidInput(f"unknown operator {key!r} at {where}; use a field name, $and or $or")
            else:
                if not FIELD_RE.match(key):
                    raise InvalidInput(f"invalid field name {key!r}: letters, digits, '_', '.', '-' (max 64)")
                parts.append(self.field(key, value, f"{where}.{key}"))
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def field(self, name: str, spec: Any, where: str) -> str:
        if isinstance(spec, dict):
            if not spec:
                raise InvalidInput(f"empty operator object at {where}")
            conds = []
            for op, value in spec.items():
                if op not in OPERATORS:
                    raise InvalidInput(f"unknown operator {op!r} at {where}; known: {', '.join(sorted(OPERATORS))}")
                conds.append(self.operator(name, op, value, where))
            return conds[0] if len(conds) == 1 else "(" + " AND ".join(conds) + ")"
        return self.operator(name, "$eq", spec, where)

    def operator(self, name: str, op: str, value: Any, where: str) -> str:
        if name == "tags":
            return self.tags(op, value, where)
        if op in ("$in", "$nin"):
            if not isinstance(value, list) or not value or not all(_is_scalar(v) for v in value):
                raise InvalidInput(f"{op} at {where} needs a non-empty list of scalar values")
            if name in COLUMNS:
                cond = f"{COLUMNS[name]} = ANY({self.param([str(v) for v in value])}::text[])"
            else:
                items = self.param(json.dumps(value))
                cond = f"({self.meta(name)} IN (SELECT jsonb_array_elements({items}::jsonb)))"
            return cond if op == "$in" else f"NOT coalesce({cond}, false)"
        if op == "$contains":
            if not isinstance(value, str) or not value:
                raise InvalidInput(f"$contains at {where} needs a non-empty string")
            pattern = self.param("%" + re.sub(r"([%_\\])", r"\\\1", value) + "%")
            if name in COLUMNS:
                return f"({COLUMNS[name]} ILIKE {pattern})"
            element = self.param(json.dumps([value]))
            meta = self.meta(name)
            return (f"(CASE WHEN jsonb_typeof({meta}) = 'array' THEN {meta} @> {element}::jsonb "
                    f"ELSE ({meta} #>> '{{}}') ILIKE {pattern} END)")
        if not _is_scalar(value):
            raise InvalidInput(f"{op} at {where} needs a string, number, boolean or null, not {type(value).__name__}")
        sql_op = COMPARISONS[op]
        if name in COLUMNS:
            return f"({COLUMNS[name]} {sql_op} {self.param(str(value))})"
        meta = self.meta(name)
        if op in ("$eq", "$ne"):
            cond = f"({meta} = {self.param(json.dumps(value))}::jsonb)"
            return cond if op == "$eq" else f"NOT coalesce({cond}, false)"
        if isinstance(value, bool) or value is None:
            raise InvalidInput(f"{op} at {where} compares numbers or strings only")
        if isinstance(value, (int, float)):
            return (f"(CASE WHEN jsonb_typeof({meta}) = 'number' THEN ({meta} #>> '{{}}')::numeric END "
                    f"{sql_op} {self.param(float(value))}::numeric)")
        return f"(CASE WHEN jsonb_typeof({meta}) = 'string' THEN {meta} #>> '{{}}' END {sql_op} {self.param(value)})"

    def tags(self, op: str, value: Any, where: str) -> str:
        if op in ("$eq", "$contains") and isinstance(value, str):
            return f"({self.param(value)} = ANY(d.tags))"
        if op == "$ne" and isinstance(value, str):
            return f"NOT ({self.param(value)} = ANY(d.tags))"
        if op in ("$in", "$nin") and isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            cond = f"(d.tags && {self.param(value)}::text[])"
            return cond if op == "$in" else f"NOT {cond}"
        raise InvalidInput(f"tags at {where} supports a string with $eq/$ne/$contains or a list with $in/$nin")

    def meta(self, name: str) -> str:
        key = self.param(name)
        # Chunk metadata wins over document metadata for the same key.
        return f"coalesce(c.metadata -> {key}::text, d.metadata -> {key}::text)"


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def compile_filter(spec: dict[str, Any] | None) -> Condition:
    """Compile a filter to a condition with named ``:filter_n`` parameters (TRUE for no filter)."""
    if not spec:
        return Condition()
    compiler = _Compiler()
    sql = compiler.compile(spec, 1, "filter")
    return Condition(sql=sql, params=compiler.params)
