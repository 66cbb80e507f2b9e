"""What the manifest records about a source besides its chunks: identity, stat, time."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime

from ragloom.ingestion.chunkers import chunker_fingerprint
from ragloom.ingestion.loaders import SourceRef
from ragloom.settings import IngestSettings, RagSettings

RACY_NS = 2_000_000_000
"""A file modified this recently when it was read may change again within the same mtime tick:
its stat is not trusted next time (the bytes are hashed instead)."""


def now() -> str:
    """The current UTC time, to the second, as recorded in the manifest and the quarantine."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def loader_identity(source_id: str, kind: str, settings: IngestSettings) -> str:
    """The loader options that decide a source's documents (CSV rows or whole files)."""
    if kind == "url" or source_id.lower().endswith(".csv"):
        return f"|csv_mode={settings.csv_mode}"
    return ""


def source_identity(ref: SourceRef, settings: RagSettings) -> str:
    """Everything besides its bytes that decides a source's chunks: the chunker settings and the
    loader options of its format. A change re-chunks the source on the next ingest."""
    return chunker_fingerprint(settings.chunker) + loader_identity(ref.source_id, ref.kind,
                                                                    settings.ingest)


def legacy_identity(settings: RagSettings) -> Callable[[str, str], str]:
    """Identity of a source migrated from a JSON manifest: its chunker, today's loader options."""
    def identity_of(source_id: str, chunker: str) -> str:
        kind = "url" if "://" in source_id else "file"
        return chunker + loader_identity(source_id, kind, settings.ingest)
    return identity_of


def trusted_stat(ref: SourceRef) -> tuple[int, int]:
    """(size, mtime_ns) to record for a file; (-1, -1) when unknown or too recent to trust."""
    if ref.size is None or ref.mtime_ns is None or time.time_ns() - ref.mtime_ns < RACY_NS:
        return -1, -1
    return ref.size, ref.mtime_ns
