"""A source before parsing: its reference, its bytes, and the size cap on them."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from ragloom.errors import RejectedSourceError
from ragloom.ingestion.validation import decode_text


class SourceRef(BaseModel):
    """One source to ingest: a file (absolute POSIX path) or a web page (its URL).

    Files carry the size and mtime seen when the spec was expanded: an unchanged stat settles a
    recorded source without reading it.
    """

    source_id: str
    origin: str
    kind: Literal["file", "url"]
    size: int | None = None
    mtime_ns: int | None = None


class RawSource(BaseModel):
    """The bytes of a source, with what is known about them before parsing."""

    ref: SourceRef
    data: bytes
    content_hash: str
    suffix: str
    media_type: str
    modified: str | None = None


FoundSource = tuple[str, str, Literal["file", "url"], int | None, int | None]
"""(source_id, origin, kind, size, mtime_ns) of a source found by `expand_specs`."""


def to_ref(item: FoundSource) -> SourceRef:
    """The SourceRef of a found source."""
    source_id, origin, kind, size, mtime_ns = item
    return SourceRef(source_id=source_id, origin=origin, kind=kind, size=size, mtime_ns=mtime_ns)


def oversized(where: str, size: int, limit: int) -> RejectedSourceError:
    """The rejection of a source over the size cap (`ingest.max_bytes`)."""
    return RejectedSourceError(
        f"oversized: {size} bytes exceeds the limit of {limit} bytes",
        where=where,
        signals=["oversized"],
    )


def decode(raw: RawSource) -> str:
    r"""The text (UTF-8, or UTF-16/32 marked by a BOM; BOM dropped) with newlines as `\n`."""
    text = decode_text(raw.data)
    return text.replace("\r\n", "\n").replace("\r", "\n")
