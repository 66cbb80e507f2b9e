"""Live components built once per process and reused across calls (embedder, indexes, models)."""

from __future__ import annotations

import dataclasses
import functools
import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragloom.nodes.deps import RagDeps
from ragloom.errors import StoreError
from ragloom.providers.embeddings import Embedder, get_embedder
from ragloom.settings import RagSettings
from ragloom.stores.bm25 import CURRENT_FILE, Bm25Index, CorruptIndexError
from ragloom.stores.lock import collection_lock
from ragloom.stores.manifest import ManifestStore
from ragloom.stores.paths import DataPaths

if TYPE_CHECKING:
    from ragloom.stores.chroma import ChromaDocumentIndex

log = logging.getLogger(__name__)

_lock = threading.Lock()
_indexes: dict[tuple[str, str | None, str, str, bool], ChromaDocumentIndex] = {}
_bm25: dict[Path, tuple[tuple[int, int, int] | None, Bm25Index | None]] = {}
_deps: dict[str, RagDeps] = {}


def data_paths(settings: RagSettings) -> DataPaths:
    """The on-disk layout under the settings' data directory."""
    return DataPaths(Path(settings.data_dir).expanduser().resolve())


def embedder(settings: RagSettings) -> Embedder:
    """The process-wide embedder for these settings."""
    return get_embedder(settings.embedding, cache_dir=settings.resolved_cache_dir())


def document_index(settings: RagSettings, *, create: bool = True) -> ChromaDocumentIndex:
    """The process-wide Chroma index of the settings' collection.

    chromadb is imported here, on first use, not when this module is. `create=False` gives the
    query side's index, which never creates anything and raises UnknownCollectionError for a
    collection that does not exist.
    """
    from ragloom.stores.chroma import ChromaDocumentIndex

    paths = data_paths(settings)
    profile = embedder(settings).profile
    key = (str(paths.data_dir), settings.chroma_url, settings.collection, profile.key(), create)
    with _lock:
        if key not in _indexes:
            _indexes[key] = ChromaDocumentIndex(
                settings.collection, profile, data_dir=paths.data_dir,
                server_url=settings.chroma_url, create=create
            )
        return _indexes[key]


def require_collection(settings: RagSettings) -> None:
    """UnknownCollectionError unless the settings' collection exists (checked once per index)."""
    document_index(settings, create=False).ensure_exists()


def forget_collection(settings: RagSettings) -> None:
    """Drop every cached component of the settings' collection (after it was deleted)."""
    data_dir, name = str(data_paths(settings).data_dir), settings.collection
    with _lock:
        for index_key in [k for k in _indexes if k[0] == data_dir and k[2] == name]:
            del _indexes[index_key]
        _bm25.pop(data_paths(settings).bm25_dir(name), None)
        for deps_key in [k for k, d in _deps.items() if d.settings.collection == name
                         and str(data_paths(d.settings).data_dir) == data_dir]:
            del _deps[deps_key]


def bm25_index(settings: RagSettings) -> Bm25Index | None:
    """The collection's BM25 snapshot, reloaded when an ingest committed a new one and repaired
    from Chroma when it is unreadable or missing; None when there is nothing to index."""
    directory = data_paths(settings).bm25_dir(settings.collection)
    stamp = _stamp(directory)
    with _lock:
        cached = _bm25.get(directory)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        previous = cached[1] if cached is not None else None
    try:
        index = Bm25Index.open(directory, previous)
        if index is None and document_index(settings, create=False).count() > 0:
            return _repair_bm25(settings, "missing", directory)
    except (CorruptIndexError, OSError) as exc:
        log.warning("BM25 index at %s is unreadable: %s", directory, exc)
        return _repair_bm25(settings, f"unreadable ({exc})", directory)
    with _lock:
        _bm25[directory] = (stamp, index)
    return index


def _stamp(directory: Path) -> tuple[int, int, int] | None:
    """Identity of the committed CURRENT.json (a commit replaces the file: new inode)."""
    try:
        stat = (directory / CURRENT_FILE).stat()
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def _repair_bm25(settings: RagSettings, reason: str, directory: Path) -> Bm25Index | None:
    """Rebuild the BM25 index from Chroma (the source of truth) under the collection lock; None
    when an ingest holds the lock (it repairs the index when it finishes; a later query retries)."""
    paths = data_paths(settings)
    collection = settings.collection
    start = time.perf_counter()
    try:
        with collection_lock(paths.lock_file(collection), timeout_s=0.0):
            applied, epoch = 0, ""
            if paths.manifest_file(collection).exists():
                with ManifestStore(paths.manifest_file(collection)) as store:
                    applied, epoch = store.last_seq(), store.get_meta("epoch") or ""
            chunks = document_index(settings, create=False).all_chunks()
            index = Bm25Index.build(chunks, paths.bm25_dir(collection), applied_seq=applied,
                                    epoch=epoch)
    except StoreError as exc:
        log.warning("BM25 index of %r not repaired now (%s): %s", collection, reason, exc.what)
        return None
    note = (f"bm25 index {reason}: rebuilt from Chroma ({len(chunks)} chunks, "
            f"{(time.perf_counter() - start) * 1000:.0f} ms)")
    log.warning(note)
    index.note_repair(note)
    with _lock:
        _bm25[directory] = (_stamp(directory), index)
    return index


def rag_deps(settings: RagSettings) -> RagDeps:
    """Everything a query graph needs, built once per process and shared (the same object for
    the same settings, so graphs compiled over it are reused too)."""
    from ragloom.nodes.transform import check_transform
    from ragloom.providers.chat import get_chat_model
    from ragloom.providers.rerankers import get_reranker

    key = settings.model_dump_json()
    with _lock:
        if key in _deps:
            return _deps[key]
    check_transform(settings.transform.name)
    chat = get_chat_model(settings.chat)
    reranker: Any = get_reranker(settings.rerank, chat=chat)
    deps = RagDeps(
        settings=settings,
        index=document_index(settings, create=False),
        embedder=embedder(settings),
        bm25=functools.partial(bm25_index, settings),
        chat=chat,
        reranker=reranker,
    )
    with _lock:
        return _deps.setdefault(key, deps)


def collection_deps(deps: RagDeps, collection: str) -> RagDeps:
    """The same dependencies (models, reranker) over another collection of the same data dir.

    Raises UnknownCollectionError for a collection that does not exist.
    """
    settings = deps.settings.model_copy(update={"collection": collection})
    require_collection(settings)
    return dataclasses.replace(deps, settings=settings, index=document_index(settings, create=False),
                               bm25=functools.partial(bm25_index, settings))
