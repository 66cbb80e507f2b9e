"""The collections of a data directory: which ones are visible, and their crash-safe deletion.

A collection is visible when Chroma holds it, it is not a reindex's shadow and no deletion marker
hides it. Deleting writes the marker first (the collection disappears at once), then drops the
Chroma collection, the BM25 index, the manifest and the quarantine, and removes the marker last:
a crash in between leaves the marker, and the next deletion, listing or ingest of that name
finishes the job. Nothing here creates a file, except the marker of a deletion.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from ragloom.stores.crashpoints import crashpoint
from ragloom.stores.manifest import fsync_path, remove_database, write_atomic
from ragloom.stores.paths import SHADOW_PREFIX, DataPaths, shadow_collection

CHROMA_DB_FILE = "chroma.sqlite3"
"""The file an embedded Chroma database keeps under `chroma/`."""


def has_embedded_store(paths: DataPaths) -> bool:
    """Whether the data directory holds an embedded Chroma database (without creating one)."""
    return (paths.chroma_dir / CHROMA_DB_FILE).is_file()


def pending_deletions(paths: DataPaths) -> list[str]:
    """Collections whose deletion started and has not finished, sorted."""
    try:
        return sorted(p.name for p in paths.deleting_dir.iterdir() if not p.name.startswith("."))
    except FileNotFoundError:
        return []


def visible_names(names: Iterable[str], paths: DataPaths) -> list[str]:
    """The names among Chroma's collections a user sees: no reindex shadows, none being deleted."""
    hidden = set(pending_deletions(paths))
    return sorted(n for n in names if not n.startswith(SHADOW_PREFIX) and n not in hidden)


def mark_deleting(paths: DataPaths, collection: str) -> None:
    """Hide a collection for good: the first, atomic step of its deletion."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    write_atomic(paths.deletion_marker(collection),
                 json.dumps({"collection": collection, "started": started}))


def purge(paths: DataPaths, collection: str, drop: Callable[[str], None]) -> None:
    """Remove everything of a collection marked as deleting, then its marker (idempotent).

    `drop(name)` deletes one Chroma collection and ignores a missing one; the reindex shadow of
    the collection and the live one it renamed aside are dropped too.
    """
    shadow = shadow_collection(collection)
    for name in (collection, shadow, f"{shadow}-old"):
        drop(name)
    crashpoint("catalog.purge")
    bm25_dir = paths.bm25_dir(collection)
    shutil.rmtree(bm25_dir, ignore_errors=True)
    if bm25_dir.parent.is_dir():  # staging and swap directories of interrupted BM25 writes
        for staged in bm25_dir.parent.glob(f".{bm25_dir.name}.*"):
            shutil.rmtree(staged, ignore_errors=True)
    remove_database(paths.manifest_file(collection))
    remove_database(paths.reindex_manifest_file(collection))
    paths.legacy_manifest_file(collection).unlink(missing_ok=True)
    shutil.rmtree(paths.quarantine_dir(collection), ignore_errors=True)
    marker = paths.deletion_marker(collection)
    marker.unlink(missing_ok=True)
    if marker.parent.is_dir():
        fsync_path(marker.parent)


def has_leftovers(paths: DataPaths, collection: str) -> bool:
    """Whether files of a collection remain outside Chroma (a manifest, BM25 index, quarantine)."""
    places: tuple[Path, ...] = (paths.manifest_file(collection), paths.bm25_dir(collection),
                                paths.quarantine_dir(collection))
    return any(p.exists() for p in places)
