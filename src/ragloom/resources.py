"""Live components built once per process and reused across calls (embedder, indexes, models)."""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragloom.nodes.deps import RagDeps
from ragloom.providers.embeddings import Embedder, get_embedder
from ragloom.settings import RagSettings
from ragloom.stores.bm25 import Bm25Index
from ragloom.stores.paths import DataPaths

if TYPE_CHECKING:
    from ragloom.stores.chroma import ChromaDocumentIndex

_lock = threading.Lock()
_indexes: dict[tuple[str, str | None, str, str], ChromaDocumentIndex] = {}
_bm25: dict[Path, tuple[float, Bm25Index | None]] = {}


def data_paths(settings: RagSettings) -> DataPaths:
    """The on-disk layout under the settings' data directory."""
    return DataPaths(Path(settings.data_dir).expanduser().resolve())


def embedder(settings: RagSettings) -> Embedder:
    """The process-wide embedder for these settings."""
    return get_embedder(settings.embedding, cache_dir=settings.resolved_cache_dir())


def document_index(settings: RagSettings) -> ChromaDocumentIndex:
    """The process-wide Chroma index of the settings' collection (chromadb is imported here, on
    first use, not when this module is)."""
    from ragloom.stores.chroma import ChromaDocumentIndex

    paths = data_paths(settings)
    profile = embedder(settings).profile
    key = (str(paths.data_dir), settings.chroma_url, settings.collection, profile.key())
    with _lock:
        if key not in _indexes:
            _indexes[key] = ChromaDocumentIndex(
                settings.collection, profile, data_dir=paths.data_dir, server_url=settings.chroma_url
            )
        return _indexes[key]


def bm25_index(settings: RagSettings) -> Bm25Index | None:
    """The collection's BM25 index, reloaded when another run rebuilt it; None when absent."""
    return _bm25_at(_bm25_dir(settings))


def _bm25_dir(settings: RagSettings) -> Path:
    return data_paths(settings).bm25_dir(settings.collection)


def _bm25_at(directory: Path) -> Bm25Index | None:
    """The BM25 index persisted in directory, reloaded when its meta.json changed."""
    try:
        stamp = (directory / "meta.json").stat().st_mtime
    except FileNotFoundError:
        stamp = -1.0
    with _lock:
        cached = _bm25.get(directory)
        if cached is None or cached[0] != stamp:
            cached = (stamp, Bm25Index.load(directory) if stamp >= 0 else None)
            _bm25[directory] = cached
        return cached[1]


def rag_deps(settings: RagSettings) -> RagDeps:
    """Everything a query graph needs, built once per process and shared."""
    from ragloom.nodes.transform import check_transform
    from ragloom.providers.chat import get_chat_model
    from ragloom.providers.rerankers import get_reranker

    check_transform(settings.transform.name)
    chat = get_chat_model(settings.chat)
    reranker: Any = get_reranker(settings.rerank, chat=chat)
    return RagDeps(
        settings=settings,
        index=document_index(settings),
        embedder=embedder(settings),
        bm25=functools.partial(_bm25_at, _bm25_dir(settings)),  # path resolved once
        chat=chat,
        reranker=reranker,
    )
