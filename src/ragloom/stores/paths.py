"""Where each collection's data lives under the data directory."""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from ragloom.errors import ConfigError

COLLECTION_RULE = (
    "3 to 512 characters of letters, digits, '.', '_' or '-', starting and ending with a letter "
    "or digit, without '..' and not an IP address"
)
_COLLECTION_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{1,510})[A-Za-z0-9]$")


def _is_ip_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def validate_collection(name: str) -> str:
    """Return name if Chroma accepts it as a collection name (its full rule), else ConfigError."""
    if (
        not isinstance(name, str)
        or not _COLLECTION_RE.fullmatch(name)
        or ".." in name
        or _is_ip_address(name)
    ):
        raise ConfigError(
            f"invalid collection name {name!r}",
            where="collection",
            hint=f"a collection name is {COLLECTION_RULE}",
        )
    return name


SHADOW_PREFIX = "ragloom-reindex-"
"""Collections named so are a reindex's work in progress, never shown as collections."""


def shadow_collection(collection: str) -> str:
    """Name of the collection a `--reindex` of `collection` builds before swapping it in."""
    return f"{SHADOW_PREFIX}{hashlib.sha256(validate_collection(collection).encode()).hexdigest()[:16]}"


@dataclass(frozen=True)
class DataPaths:
    """Layout of the data directory: chroma/, bm25/<collection>/, manifests/, quarantine/, locks/."""

    data_dir: Path

    @property
    def chroma_dir(self) -> Path:
        """Directory of the embedded Chroma database (shared by all collections)."""
        return self.data_dir / "chroma"

    def bm25_dir(self, collection: str) -> Path:
        """Directory of the persisted BM25 index of a collection."""
        return self.data_dir / "bm25" / validate_collection(collection)

    def manifest_file(self, collection: str) -> Path:
        """Ingestion manifest of a collection (SQLite)."""
        return self.data_dir / "manifests" / f"{validate_collection(collection)}.sqlite"

    def reindex_manifest_file(self, collection: str) -> Path:
        """Manifest a `--reindex` builds beside the live one; it replaces it when the run ends."""
        return self.data_dir / "manifests" / f".reindex-{validate_collection(collection)}.sqlite"

    def legacy_manifest_file(self, collection: str) -> Path:
        """JSON manifest written by ragloom before the SQLite one; migrated on first open."""
        return self.data_dir / "manifests" / f"{validate_collection(collection)}.json"

    @property
    def deleting_dir(self) -> Path:
        """Markers of collections being deleted (see `stores.catalog`)."""
        return self.data_dir / "deleting"

    def deletion_marker(self, collection: str) -> Path:
        """The marker that hides a collection while its deletion runs or waits to be finished."""
        return self.deleting_dir / validate_collection(collection)

    def quarantine_dir(self, collection: str) -> Path:
        """Directory of the quarantined documents of a collection."""
        return self.data_dir / "quarantine" / validate_collection(collection)

    def lock_file(self, collection: str) -> Path:
        """The lock file every writer of a collection holds (see `stores.lock`)."""
        return self.data_dir / "locks" / f"{validate_collection(collection)}.lock"
