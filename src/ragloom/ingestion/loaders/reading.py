"""Read a source's bytes: a local file here, a web page through `web_fetch`."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from ragloom.errors import LoadError
from ragloom.ingestion.loaders.formats import MEDIA_TYPES
from ragloom.ingestion.loaders.sources import RawSource, SourceRef, oversized
from ragloom.ingestion.loaders.web_fetch import read_url
from ragloom.settings import IngestSettings
from ragloom.state import content_hash


def _read_file(ref: SourceRef, settings: IngestSettings) -> RawSource:
    """Read a local file, rejecting one over the size cap before reading it."""
    path = Path(ref.source_id)
    try:
        stat = path.stat()
    except FileNotFoundError as exc:
        raise LoadError("no such file or directory", where=ref.source_id) from exc
    except OSError as exc:
        raise LoadError(f"cannot stat: {exc.strerror}", where=ref.source_id) from exc
    if not path.is_file():
        raise LoadError("not a regular file", where=ref.source_id)
    if stat.st_size > settings.max_bytes:
        raise oversized(ref.source_id, stat.st_size, settings.max_bytes)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(f"cannot read: {exc.strerror}", where=ref.source_id) from exc
    suffix = path.suffix.lower()
    return RawSource(
        ref=ref,
        data=data,
        content_hash=content_hash(data),
        suffix=suffix,
        media_type=MEDIA_TYPES.get(suffix, "application/octet-stream"),
        modified=datetime.fromtimestamp(stat.st_mtime, tz=UTC).isoformat(),
    )


def read_source(ref: SourceRef, settings: IngestSettings) -> RawSource:
    """Read a source's bytes; oversized ones are rejected before (files) or while (URLs) reading."""
    if ref.kind == "url":
        return read_url(ref, settings)
    return _read_file(ref, settings)
