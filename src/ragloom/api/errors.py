"""Errors of the HTTP service: a RagloomError with the status it answers with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ragloom.errors import RagloomError


class ServiceError(RagloomError):
    """A request the service refuses: the HTTP status, what, where and what to do."""

    def __init__(self, status: int, what: str, *, where: str | None = None,
                 hint: str | None = None, known: Sequence[str] | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(what, where=where, hint=hint)
        self.status = status
        self.known = sorted(known) if known is not None else None
        self.headers = dict(headers or {})
