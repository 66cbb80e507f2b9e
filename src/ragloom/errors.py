"""One exception family for ragloom: every message says what went wrong, where, and what to do.

The family derives from RuntimeError, and input and configuration errors also from ValueError, so
servers that only pass on messages of such errors (langgraph dev / LangGraph Platform) show SDK
clients ragloom's message instead of "An internal error occurred". Messages never hold secrets.
"""

from __future__ import annotations


class RagloomError(RuntimeError):
    """Base of every error ragloom raises on purpose."""

    def __init__(self, what: str, *, where: str | None = None, hint: str | None = None) -> None:
        self.what = what
        self.where = where
        self.hint = hint
        parts = [what if where is None else f"{where}: {what}"]
        if hint:
            parts.append(hint)
        super().__init__(" — ".join(parts))


class ConfigError(RagloomError, ValueError):
    """Invalid settings, profile, component name or configuration file."""


class UnknownNameError(ConfigError):
    """A registry lookup with a name that is not registered."""

    def __init__(self, kind: str, name: str, known: list[str] | tuple[str, ...]) -> None:
        super().__init__(
            f"unknown {kind} {name!r}",
            hint=f"known {kind}s: {', '.join(sorted(known))}",
        )
        self.kind = kind
        self.name = name
        self.known = list(known)


class UnknownCollectionError(UnknownNameError):
    """A query or command names a collection the data directory does not hold."""

    def __init__(self, name: str, known: list[str] | tuple[str, ...], *, where: str) -> None:
        listed = f"known collections: {', '.join(sorted(known))}" if known else (
            "there are no collections here yet (is --data-dir / RAGLOOM_DATA_DIR right?)")
        ConfigError.__init__(
            self, f"unknown collection {name!r}", where=where,
            hint=f"{listed}; create one with `ragloom ingest SOURCE -c {name}`")
        self.kind = "collection"
        self.name = name
        self.known = sorted(known)


class LoadError(RagloomError):
    """A source could not be read or parsed (missing path, bad format, HTTP failure)."""


class RejectedSourceError(RagloomError):
    """A source failed a validator and must be quarantined instead of ingested."""

    def __init__(self, what: str, *, where: str, signals: list[str], content_hash: str = "") -> None:
        super().__init__(what, where=where)
        self.signals = signals
        self.content_hash = content_hash


class StoreError(RagloomError):
    """A vector or BM25 store could not be opened, read or written."""


class EmbeddingProfileMismatchError(StoreError):
    """The collection was built with another embedding profile than the active one."""


class QueryError(RagloomError, ValueError):
    """A question that cannot be processed (empty, oversized)."""


class ChatUnavailableError(RagloomError):
    """The chat model could not answer in time (time-out, connection refused, server error).

    Nodes that call a chat model catch it, fall back to their offline path, trace why and mark the
    answer best-effort; authentication problems are `ConfigError`s instead.
    """
