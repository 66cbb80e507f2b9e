"""Quarantine: documents a validator rejected, kept on disk with the reason for review."""

from __future__ import annotations

import hashlib
import logging
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

from ragloom.stores.manifest import write_atomic

logger = logging.getLogger(__name__)

EXCERPT_CHARS = 500


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class QuarantineRecord(BaseModel):
    """Why one document of a source was rejected, with a short excerpt."""

    source_id: str
    doc_id: str
    reason: str
    signals: list[str] = Field(default_factory=list)
    content_hash: str = ""
    excerpt: str = ""
    quarantined_at: str = Field(default_factory=_now)
    collection: str

    @field_validator("excerpt")
    @classmethod
    def _truncate(cls, excerpt: str) -> str:
        """Keep only the first EXCERPT_CHARS characters."""
        return excerpt[:EXCERPT_CHARS]


class Quarantine:
    """One JSON file per (source_id, doc_id) in a collection's quarantine directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def _file(self, source_id: str, doc_id: str) -> Path:
        key = hashlib.sha256(f"{source_id}\0{doc_id}".encode()).hexdigest()[:32]
        return self.directory / f"{key}.json"

    def add(self, record: QuarantineRecord) -> Path:
        """Store a record atomically, replacing an earlier one for the same document."""
        path = self._file(record.source_id, record.doc_id)
        write_atomic(path, record.model_dump_json(indent=2))
        return path

    def list(self) -> list[QuarantineRecord]:
        """Every readable record, sorted by source id then document id."""
        if not self.directory.is_dir():
            return []
        records = [r for p in self.directory.glob("*.json") if (r := self._read(p)) is not None]
        return sorted(records, key=lambda r: (r.source_id, r.doc_id))

    @staticmethod
    def _read(path: Path) -> QuarantineRecord | None:
        try:
            return QuarantineRecord.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            logger.warning("skipping unreadable quarantine record %s: %s", path, exc)
            return None

    def remove(self, source_id: str) -> int:
        """Drop every record of a source (it ingested clean); return how many were removed."""
        removed = 0
        for record in self.list():
            if record.source_id == source_id:
                self._file(record.source_id, record.doc_id).unlink(missing_ok=True)
                removed += 1
        return removed
