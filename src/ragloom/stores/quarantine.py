"""Quarantine: documents a validator rejected, kept on disk with the reason for review.

One directory per source (named by a hash of its id) holding one JSON file per document, so the
records of one source are found and removed without reading the others.
"""

from __future__ import annotations

import builtins
import hashlib
import logging
import shutil
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field, field_validator

from ragloom.stores.manifest import write_atomic

logger = logging.getLogger(__name__)

EXCERPT_CHARS = 500


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


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
    """A collection's quarantine directory: `<hash(source_id)>/<hash(doc_id)>.json`."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def _source_dir(self, source_id: str) -> Path:
        return self.directory / _key(source_id)

    def _migrate_flat(self) -> None:
        """Move records of the earlier flat layout (`<hash>.json`) into per-source directories."""
        if not self.directory.is_dir():
            return
        for path in self.directory.glob("*.json"):
            record = self._read(path)
            if record is not None:
                self.add(record)
            path.unlink(missing_ok=True)

    def add(self, record: QuarantineRecord) -> Path:
        """Store a record atomically, replacing an earlier one for the same document."""
        path = self._source_dir(record.source_id) / f"{_key(record.doc_id)}.json"
        write_atomic(path, record.model_dump_json(indent=2))
        return path

    def list(self) -> list[QuarantineRecord]:
        """Every readable record, sorted by source id then document id."""
        self._migrate_flat()
        if not self.directory.is_dir():
            return []
        records = [r for p in self.directory.glob("*/*.json") if (r := self._read(p)) is not None]
        return sorted(records, key=lambda r: (r.source_id, r.doc_id))

    def source_ids(self) -> builtins.list[str]:
        """Ids of the sources that have records, sorted (one record read per source)."""
        self._migrate_flat()
        if not self.directory.is_dir():
            return []
        found = set()
        for folder in self.directory.iterdir():
            first = next(iter(sorted(folder.glob("*.json"))), None) if folder.is_dir() else None
            if first is not None and (record := self._read(first)) is not None:
                found.add(record.source_id)
        return sorted(found)

    @staticmethod
    def _read(path: Path) -> QuarantineRecord | None:
        try:
            return QuarantineRecord.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            logger.warning("skipping unreadable quarantine record %s: %s", path, exc)
            return None

    def remove(self, source_id: str) -> int:
        """Drop every record of a source (fixed, failed or gone); return how many were removed."""
        self._migrate_flat()
        folder = self._source_dir(source_id)
        if not folder.is_dir():
            return 0
        removed = len(list(folder.glob("*.json")))
        shutil.rmtree(folder, ignore_errors=True)
        return removed
