"""A request's filter fields, and its key's business unit, as one metadata filter for both legs.

The fields map to chunk metadata keys: `lang`, `bu`, `type` (strings) and `last_modified` (epoch
seconds, a number, so the recency window is a numeric comparison on both retrieval legs). The
key's `bu` is always added: a key scoped to a business unit never sees another unit's chunks,
whatever the request asks.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from ragloom.api.errors import ServiceError
from ragloom.api.keys import Principal
from ragloom.api.models import QueryRequest

LANG, BU, TYPE, LAST_MODIFIED = "lang", "bu", "type", "last_modified"
WINDOW_STEP_S = 60


def scoped_bu(requested: str | None, principal: Principal) -> str | None:
    """The business unit a request reads: the key's own (403 when the request names another)."""
    if principal.bu is None:
        return requested
    if requested is not None and requested != principal.bu:
        raise ServiceError(403, f"this key reads business unit {principal.bu!r} only",
                           where="bu", hint=f"omit bu or send bu={principal.bu!r}")
    return principal.bu


def cutoff(since: timedelta | datetime, now: datetime | None = None) -> float:
    """Epoch seconds of the oldest `last_modified` a recency window keeps."""
    if isinstance(since, timedelta):
        return ((now or datetime.now(UTC)) - since).timestamp()
    moment = since if since.tzinfo is not None else since.replace(tzinfo=UTC)
    return moment.timestamp()


def request_filters(request: QueryRequest, principal: Principal,
                    now: datetime | None = None) -> dict[str, Any] | None:
    """The metadata filter (Chroma `where` syntax) of a request under its principal's scope."""
    clauses: list[dict[str, Any]] = []
    if request.lang is not None:
        clauses.append({LANG: request.lang})
    bu = scoped_bu(request.bu, principal)
    if bu is not None:
        clauses.append({BU: bu})
    if request.type:
        types = sorted(set(request.type))
        clauses.append({TYPE: types[0]} if len(types) == 1 else {TYPE: {"$in": types}})
    if request.since is not None:
        # floored to the minute, so a cached answer to the same window lives longer than a second
        moment = cutoff(request.since, now)
        clauses.append({LAST_MODIFIED: {"$gte": float(moment - moment % WINDOW_STEP_S)}})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}
