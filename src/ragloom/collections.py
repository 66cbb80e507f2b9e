"""The collections of a data directory as users see them: list, show, delete.

`list_collections` and `show_collection` read the Chroma store and each collection's manifest
and quarantine without loading a model and without creating anything. `delete_collection`
removes a collection's Chroma collection, BM25 index, manifest and quarantine together, under the
collection's ingest lock and crash-safe (see `stores.catalog`). The HTTP service's catalogue lists
names through `collection_names`, so every surface sees the same collections.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ragloom.errors import StoreError, UnknownCollectionError
from ragloom.settings import RagSettings, resolve_settings
from ragloom.stores import catalog
from ragloom.stores.lock import collection_lock
from ragloom.stores.manifest import LAST_INGEST_KEY, ManifestStore
from ragloom.stores.paths import DataPaths, validate_collection
from ragloom.stores.quarantine import Quarantine, QuarantineRecord

DELETE_LOCK_TIMEOUT_S = 30.0
"""How long a deletion waits for an ingest of the collection to finish."""


class CollectionSummary(BaseModel):
    """One collection: its size, the embedding profile it was built with, its last ingest."""

    name: str
    chunks: int = Field(description="chunks stored in Chroma")
    sources: int = Field(description="sources recorded in the manifest")
    embedding_profile: str | None = None
    last_ingest: str | None = Field(default=None, description="when the last ingest finished (UTC)")


class SourceSummary(BaseModel):
    """One source recorded in a collection's manifest."""

    source_id: str
    documents: int
    chunks: int
    recorded_at: str


class CollectionDetails(BaseModel):
    """A collection in detail: its sources, its quarantine, and repairs its next ingest makes."""

    summary: CollectionSummary
    sources: list[SourceSummary] = Field(default_factory=list)
    quarantine: list[QuarantineRecord] = Field(default_factory=list)
    interrupted_batches: int = Field(
        default=0, description="batches an interrupted ingest left; the next ingest re-ingests them")
    bm25_stale: bool = Field(
        default=False, description="the BM25 index waits for a rebuild (the next ingest or query does it)")


def _settings(settings: RagSettings | None, data_dir: str | Path | None) -> RagSettings:
    return resolve_settings(settings, data_dir=data_dir)


def _paths(settings: RagSettings) -> DataPaths:
    return DataPaths(Path(settings.data_dir).expanduser().resolve())


def _client(settings: RagSettings, paths: DataPaths) -> Any | None:
    """The Chroma client of the data directory; None when there is no store (nothing is created)."""
    if settings.chroma_url is None and not catalog.has_embedded_store(paths):
        return None
    from ragloom.stores.chroma import get_client

    return get_client(path=paths.chroma_dir, server_url=settings.chroma_url)


def _where(settings: RagSettings, paths: DataPaths) -> str:
    return settings.chroma_url or str(paths.data_dir)


def collection_names(settings: RagSettings) -> list[str]:
    """The visible collections of the settings' data directory (or Chroma server), sorted."""
    paths = _paths(settings)
    client = _client(settings, paths)
    if client is None:
        return []
    return catalog.visible_names((c.name for c in client.list_collections()), paths)


def _summary(name: str, client: Any, paths: DataPaths) -> CollectionSummary:
    from ragloom.stores.chroma import PROFILE_KEY

    handle = client.get_collection(name, embedding_function=None)
    sources, profile, last = 0, None, None
    if paths.manifest_file(name).exists():
        with ManifestStore(paths.manifest_file(name)) as store:
            sources, profile = store.source_count(), store.get_meta("profile")
            last = store.get_meta(LAST_INGEST_KEY)
    return CollectionSummary(name=name, chunks=int(handle.count()), sources=sources,
                             embedding_profile=(handle.metadata or {}).get(PROFILE_KEY) or profile,
                             last_ingest=last)


def list_collections(*, data_dir: str | Path | None = None,
                     settings: RagSettings | None = None) -> list[CollectionSummary]:
    """Every visible collection with its chunk and source counts, profile and last ingest.

    Deletions a crash interrupted are finished first (those an ingest holds are left for later).
    """
    run_settings = _settings(settings, data_dir)
    paths = _paths(run_settings)
    client = _client(run_settings, paths)
    if client is None:
        return []
    for name in catalog.pending_deletions(paths):
        with contextlib.suppress(StoreError):
            _finish(run_settings, paths, client, name, timeout_s=0.0)
    names = catalog.visible_names((c.name for c in client.list_collections()), paths)
    return [_summary(name, client, paths) for name in names]


def _require(name: str, settings: RagSettings, paths: DataPaths, client: Any | None) -> None:
    names = [] if client is None else catalog.visible_names(
        (c.name for c in client.list_collections()), paths)
    if validate_collection(name) not in names:
        raise UnknownCollectionError(name, names, where=_where(settings, paths))


def show_collection(name: str, *, data_dir: str | Path | None = None,
                    settings: RagSettings | None = None) -> CollectionDetails:
    """One collection in detail: sources with chunk counts, quarantined documents with reasons,
    and what an interrupted ingest left; UnknownCollectionError for an unknown name."""
    run_settings = _settings(settings, data_dir)
    paths = _paths(run_settings)
    client = _client(run_settings, paths)
    _require(name, run_settings, paths, client)
    details = CollectionDetails(summary=_summary(name, client, paths),
                                quarantine=Quarantine(paths.quarantine_dir(name)).list())
    if paths.manifest_file(name).exists():
        with ManifestStore(paths.manifest_file(name)) as store:
            entries = store.all_entries()
            details.sources = [SourceSummary(source_id=sid, documents=len(e.docs),
                                             chunks=len(e.chunk_ids()), recorded_at=e.recorded_at)
                               for sid, e in sorted(entries.items())]
            details.interrupted_batches = len(store.intents())
            details.bm25_stale = store.get_meta("bm25_stale") == "1"
    return details


def _finish(settings: RagSettings, paths: DataPaths, client: Any | None, name: str, *,
            timeout_s: float) -> None:
    """Delete a collection under its ingest lock: marker, then every store, then no marker."""
    from chromadb.errors import NotFoundError

    def drop(chroma_name: str) -> None:
        if client is not None:
            with contextlib.suppress(NotFoundError):
                client.delete_collection(chroma_name)

    with collection_lock(paths.lock_file(name), timeout_s=timeout_s):
        catalog.mark_deleting(paths, name)
        catalog.purge(paths, name, drop)
    from ragloom import registry

    registry.forget(settings.model_copy(update={"collection": name}))


def delete_collection(name: str, *, data_dir: str | Path | None = None,
                      settings: RagSettings | None = None,
                      lock_timeout_s: float = DELETE_LOCK_TIMEOUT_S) -> CollectionSummary | None:
    """Delete a collection: Chroma, BM25 index, manifest and quarantine together.

    Crash-safe: the collection disappears at the first step (a deletion marker) and a crash later
    leaves it hidden until the next deletion, listing or ingest of the name finishes the cleanup.
    Waits up to `lock_timeout_s` for an ingest of the collection. Returns what was deleted (None
    when only an interrupted deletion was finished); UnknownCollectionError for an unknown name.
    """
    run_settings = _settings(settings, data_dir)
    paths = _paths(run_settings)
    client = _client(run_settings, paths)
    pending = paths.deletion_marker(validate_collection(name)).exists()
    summary = None
    if not pending and not catalog.has_leftovers(paths, name):
        _require(name, run_settings, paths, client)
    if not pending and client is not None and name in collection_names(run_settings):
        summary = _summary(name, client, paths)
    _finish(run_settings, paths, client, name, timeout_s=lock_timeout_s)
    return summary
