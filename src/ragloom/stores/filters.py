"""Chroma's `where` filter subset, evaluated in Python so both retrieval legs filter alike.

Semantics follow Chroma 1.5: a bare `{key: value}` means `$eq`; several keys in one mapping are
joined with `$and`; numbers compare numerically (1 == 1.0) but never equal booleans; `$gt`,
`$gte`, `$lt`, `$lte` need a numeric operand; `$ne` and `$nin` also match chunks without the key.

Dates are filtered as numbers: ingest stores `last_modified` in epoch seconds, and
`metadata_filter` turns the request fields (`lang`, `bu`, `type`, a `since` recency window) into
one filter for both legs.
"""

from __future__ import annotations

import json
import operator
import re
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from typing import Any

from ragloom.errors import ConfigError
from ragloom.state import Chunk

Predicate = Callable[[Mapping[str, Any]], bool]

COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}
OPERATORS = ("$eq", "$ne", "$in", "$nin", *COMPARISONS, "$and", "$or")
CHUNK_FIELDS = ("source_id", "doc_id", "start", "end")
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
RESERVED_PREFIXES = ("$", "#", "chroma:", "ragloom:")


def _bad(where: Any, what: str) -> ConfigError:
    return ConfigError(
        f"invalid metadata filter: {what}",
        where=json.dumps(where, default=str),
        hint=f"supported operators: {', '.join(OPERATORS)}",
    )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _is_literal(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def is_scalar(value: Any) -> bool:
    """True when Chroma can store and filter the value as-is (str, bool, int64, float)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return INT64_MIN <= value <= INT64_MAX
    return isinstance(value, str | float | bool)


def _same(a: Any, b: Any) -> bool:
    """Chroma equality: numbers numerically, booleans only with booleans, strings with strings."""
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    return type(a) is type(b) and bool(a == b)


def _field_predicate(key: str, expression: Any, where: Mapping[str, Any]) -> Predicate:
    if not isinstance(expression, dict):
        expression = {"$eq": expression}
    if len(expression) != 1:
        raise _bad(where, f"the expression for {key!r} must hold exactly one operator")
    (op, operand), = expression.items()
    if op in ("$eq", "$ne"):
        if not _is_literal(operand):
            raise _bad(where, f"{op} on {key!r} needs a string, number or boolean")
        if op == "$eq":
            return lambda m: key in m and _same(m[key], operand)
        return lambda m: key not in m or not _same(m[key], operand)
    if op in ("$in", "$nin"):
        if not isinstance(operand, list) or not operand or not all(map(_is_literal, operand)):
            raise _bad(where, f"{op} on {key!r} needs a non-empty list of literals")
        if op == "$in":
            return lambda m: key in m and any(_same(m[key], v) for v in operand)
        return lambda m: key not in m or not any(_same(m[key], v) for v in operand)
    if op in COMPARISONS:
        if not _is_number(operand):
            raise _bad(where, f"{op} on {key!r} needs a number")
        compare = COMPARISONS[op]
        return lambda m: key in m and _is_number(m[key]) and compare(m[key], operand)
    raise _bad(where, f"unknown operator {op!r}")


def _logical_predicate(op: str, clauses: Any, where: Mapping[str, Any]) -> Predicate:
    if not isinstance(clauses, list) or not clauses or not all(clauses):
        raise _bad(where, f"{op} needs a non-empty list of non-empty filters")
    predicates = [compile_where(clause) for clause in clauses]
    combine = all if op == "$and" else any
    return lambda m: combine(p(m) for p in predicates)


def compile_where(where: Mapping[str, Any] | None) -> Predicate:
    """Validate a filter once and return a predicate over a chunk's metadata."""
    if not where:
        return lambda m: True
    if not isinstance(where, Mapping):
        raise _bad(where, "a filter must be a mapping")
    predicates: list[Predicate] = []
    for key, value in where.items():
        if key in ("$and", "$or"):
            predicates.append(_logical_predicate(key, value, where))
        elif isinstance(key, str) and key.startswith("$"):
            raise _bad(where, f"unknown operator {key!r}")
        else:
            predicates.append(_field_predicate(key, value, where))
    if len(predicates) == 1:
        return predicates[0]
    return lambda m: all(p(m) for p in predicates)


def matches(where: Mapping[str, Any] | None, metadata: Mapping[str, Any]) -> bool:
    """True when the metadata satisfies the filter; ConfigError on an invalid filter."""
    return compile_where(where)(metadata)


def normalize_where(where: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """Validate a filter and rewrite it into the strict form Chroma accepts (None when empty)."""
    compile_where(where)
    return _normalize(where) if where else None


def _normalize(where: Mapping[str, Any]) -> dict[str, Any]:
    clauses = [_normalize_clause(key, value) for key, value in where.items()]
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}


def _normalize_clause(key: str, value: Any) -> dict[str, Any]:
    if key not in ("$and", "$or"):
        return {key: value}
    parts = [_normalize(clause) for clause in value]
    return parts[0] if len(parts) == 1 else {key: parts}


def filterable_metadata(chunk: Chunk) -> dict[str, Any]:
    """The metadata both legs filter on: the chunk's scalar metadata plus its location fields."""
    fields = {name: getattr(chunk, name) for name in CHUNK_FIELDS}
    scalars = {
        k: v
        for k, v in chunk.metadata.items()
        if k not in fields and is_scalar(v) and not k.startswith(RESERVED_PREFIXES)
    }
    return {**scalars, **fields}


METADATA_FILTERS = ("lang", "bu", "type")
"""Metadata keys the service filters on (besides recency on `last_modified`)."""
_SINCE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(h|d|w|m|y)\s*$", re.IGNORECASE)
_UNIT_S = {"h": 3600.0, "d": 86400.0, "w": 7 * 86400.0, "m": 30 * 86400.0, "y": 365 * 86400.0}


def to_timestamp(value: Any) -> float | None:
    """Epoch seconds of a number, a datetime/date or an ISO 8601 string; None when it is none."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, date) and not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day, tzinfo=UTC)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            return None
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    return None


def since_timestamp(since: str | int | float | datetime | date | timedelta,
                    now: float | None = None) -> float:
    """The epoch second a recency window starts: `30d`, `12h`, `2w`, `6m`, `1y`, a timedelta,
    or an absolute date/datetime/ISO string/epoch number; ConfigError for anything else."""
    current = time.time() if now is None else now
    if isinstance(since, timedelta):
        return current - since.total_seconds()
    if isinstance(since, str):
        match = _SINCE.match(since)
        if match:
            return current - float(match.group(1)) * _UNIT_S[match.group(2).lower()]
    stamp = to_timestamp(since)
    if stamp is None:
        raise ConfigError(f"invalid recency window {since!r}", where="since",
                          hint="use 30d, 12h, 2w, 6m, 1y or an ISO date such as 2026-01-31")
    return stamp


def metadata_filter(*, lang: str | None = None, bu: str | None = None,
                    type: str | Sequence[str] | None = None,  # noqa: A002 - the request field
                    since: str | int | float | datetime | date | timedelta | None = None,
                    where: Mapping[str, Any] | None = None,
                    now: float | None = None) -> dict[str, Any] | None:
    """A `where` filter from the request fields: equality on `lang` and `bu`, `type` one of a
    list, `last_modified` at or after `since` (chunks without it are left out), and-ed with
    `where`; None when nothing is set."""
    clauses: list[dict[str, Any]] = []
    if lang:
        clauses.append({"lang": lang})
    if bu:
        clauses.append({"bu": bu})
    if type:
        kinds = [type] if isinstance(type, str) else list(type)
        clauses.append({"type": kinds[0]} if len(kinds) == 1 else {"type": {"$in": kinds}})
    if since is not None:
        clauses.append({"last_modified": {"$gte": since_timestamp(since, now)}})
    if where:
        clauses.append(dict(where))
    if not clauses:
        return None
    combined = clauses[0] if len(clauses) == 1 else {"$and": clauses}
    compile_where(combined)
    return combined
