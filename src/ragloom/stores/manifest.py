"""The ingestion manifest: what each source contributed to a collection, written atomically."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

MANIFEST_VERSION = 1


class DocEntry(BaseModel):
    """One document of a source: its text hash and the ids of its chunks."""

    content_hash: str
    chunk_ids: list[str] = Field(default_factory=list)


class SourceEntry(BaseModel):
    """One ingested source: raw-bytes hash, chunker fingerprint and its documents."""

    origin: str
    content_hash: str
    chunker: str
    docs: dict[str, DocEntry] = Field(default_factory=dict)
    recorded_at: str


class Manifest(BaseModel):
    """Everything ingested into one collection, keyed by source id."""

    version: int = MANIFEST_VERSION
    collection: str
    embedding_profile: str
    sources: dict[str, SourceEntry] = Field(default_factory=dict)

    def chunk_ids(self) -> set[str]:
        """Every chunk id recorded for any source."""
        return {i for s in self.sources.values() for d in s.docs.values() for i in d.chunk_ids}


def load_manifest(path: Path) -> tuple[Manifest | None, str | None]:
    """Read a manifest: (None, None) when missing, (None, warning) when unreadable or too new."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"Manifest {path} cannot be read ({exc})"
    try:
        manifest = Manifest.model_validate_json(text)
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"]
        return None, f"Manifest {path} is corrupt ({reason})"
    if manifest.version != MANIFEST_VERSION:
        return None, (
            f"Manifest {path} has version {manifest.version}, this ragloom reads version "
            f"{MANIFEST_VERSION}"
        )
    return manifest, None


def write_atomic(path: Path, data: str) -> None:
    """Replace path with data: temp file beside it, fsync, rename, then fsync the directory."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def save_manifest(path: Path, manifest: Manifest) -> None:
    """Write the manifest atomically: a crash leaves the previous file intact."""
    write_atomic(path, manifest.model_dump_json(indent=2))
