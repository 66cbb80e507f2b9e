"""Live components built once per process and reused across calls (embedder, indexes, models)."""

from __future__ import annotations

import dataclasses
import functools
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragloom.nodes.deps import RagDeps
from ragloom.nodes.trace import log_once
from ragloom.providers.embeddings import Embedder, get_embedder
from ragloom.settings import RagSettings
from ragloom.stores.bm25 import CURRENT_FILE, Bm25Index, CorruptIndexError
from ragloom.stores.paths import DataPaths

if TYPE_CHECKING:
    from ragloom.stores.chroma import ChromaDocumentIndex

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
    """The collection's BM25 snapshot, reloaded when an ingest committed a new one; None when
    there is none or it is unreadable. A query never writes: a missing or damaged index is
    logged once with what to do (re-run `ragloom ingest`, which rebuilds it from the store) and
    the query answers from the dense leg, its trace saying so."""
    directory = data_paths(settings).bm25_dir(settings.collection)
    stamp = _stamp(directory)
    with _lock:
        cached = _bm25.get(directory)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        previous = cached[1] if cached is not None else None
    try:
        index = Bm25Index.open(directory, previous)
    except (CorruptIndexError, OSError) as exc:
        log_once(f"bm25-unreadable:{directory}",
                 f"BM25 index of collection {settings.collection!r} is unreadable ({exc}): "
                 f"queries use the dense leg only; re-run `ragloom ingest` on the collection's "
                 f"sources to rebuild it")
        index = None
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
