"""Chroma-backed `DocumentIndex`: embedded (PersistentClient) or a Chroma server (HttpClient)."""

from __future__ import annotations

import json
import operator
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast
from urllib.parse import urlsplit

import chromadb
import httpx
import numpy as np
from chromadb.api.client import Client
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Include, Metadata
from chromadb.config import Settings
from chromadb.errors import ChromaError, NotFoundError
from pydantic_core import to_jsonable_python

from ragloom.embedding_profile import EmbeddingProfile
from ragloom.errors import (
    ConfigError,
    EmbeddingProfileMismatchError,
    RagloomError,
    StoreError,
    UnknownCollectionError,
)
from ragloom.state import Chunk, ScoredChunk
from ragloom.stores.base import Filter
from ragloom.stores.catalog import has_embedded_store, visible_names
from ragloom.stores.crashpoints import crashpoint
from ragloom.stores.filters import CHUNK_FIELDS, filterable_metadata, normalize_where
from ragloom.stores.paths import DataPaths, validate_collection

PROFILE_KEY = "ragloom:embedding_profile"
JSON_KEY = "ragloom:json"
CONNECT_TIMEOUT_S = 5.0
REQUEST_TIMEOUT_S = 120.0
REOPEN_ATTEMPTS = 3
REOPEN_PAUSE_S = 0.02
_STORE_FAILURES = (ChromaError, httpx.HTTPError, ValueError, OSError, RuntimeError)
_NO_ROWS: dict[str, Any] = {"ids": [], "documents": [], "metadatas": [], "embeddings": []}
_clients: dict[str, Client] = {}
_clients_lock = threading.Lock()
T = TypeVar("T")


def _settings() -> Settings:
    return Settings(anonymized_telemetry=False)


def _batches(items: Sequence[T], size: int) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _parse_server_url(url: str) -> tuple[str, int, bool]:
    """Split a Chroma server URL into (host, port, ssl); ConfigError when it is not http(s)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path.strip("/"):
        raise ConfigError(
            f"invalid Chroma server URL {url!r}",
            where="chroma_url",
            hint="give it as http://HOST:PORT (or https://)",
        )
    ssl = parts.scheme == "https"
    return parts.hostname, parts.port or (443 if ssl else 8000), ssl


def _check_server(url: str) -> None:
    """Fail fast with a StoreError when nothing answers the Chroma heartbeat at url."""
    try:
        response = httpx.get(
            f"{url.rstrip('/')}/api/v2/heartbeat",
            timeout=httpx.Timeout(CONNECT_TIMEOUT_S),
        )
        response.raise_for_status()
    except httpx.HTTPError as exc:
        raise StoreError(
            f"the Chroma server does not answer ({type(exc).__name__}: {exc})",
            where=url,
            hint="start it (chroma run --path DIR --host HOST --port PORT) or fix chroma_url",
        ) from exc


def _bound_request_time(client: Client) -> None:
    """Give the HTTP session timeouts; chromadb 1.5 builds it with none and exposes no setting."""
    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):
        session.timeout = httpx.Timeout(REQUEST_TIMEOUT_S, connect=CONNECT_TIMEOUT_S)


def _open_http_client(url: str) -> Client:
    host, port, ssl = _parse_server_url(url)
    _check_server(url)
    try:
        client = chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=_settings())
    except _STORE_FAILURES as exc:
        raise StoreError(f"cannot connect to the Chroma server: {exc}", where=url) from exc
    _bound_request_time(cast(Client, client))
    return cast(Client, client)


def _open_persistent_client(path: Path) -> Client:
    try:
        path.mkdir(parents=True, exist_ok=True)
        return cast(Client, chromadb.PersistentClient(path=str(path), settings=_settings()))
    except _STORE_FAILURES as exc:
        raise StoreError(f"cannot open the Chroma database: {exc}", where=str(path)) from exc


def get_client(*, path: Path | None = None, server_url: str | None = None) -> Client:
    """Return the process-wide Chroma client for a server URL, else for an embedded path."""
    if server_url is None and path is None:
        raise ConfigError("a Chroma client needs a data path or a server URL")
    key = f"url:{server_url}" if server_url else f"path:{Path(path or '').resolve()}"
    with _clients_lock:
        if key not in _clients:
            _clients[key] = (
                _open_http_client(server_url)
                if server_url
                else _open_persistent_client(Path(path or "").resolve())
            )
        return _clients[key]


def close_clients() -> None:
    """Close every cached client (embedded databases release their files): shutdown and tests."""
    with _clients_lock:
        for client in _clients.values():
            client.close()
        _clients.clear()


def to_chroma_metadata(chunk: Chunk) -> dict[str, Any]:
    """Flatten a chunk for Chroma: scalars as keys, everything else JSON-encoded under JSON_KEY."""
    flat = filterable_metadata(chunk)
    rest = {k: v for k, v in chunk.metadata.items() if k in CHUNK_FIELDS or k not in flat}
    if rest:
        flat[JSON_KEY] = json.dumps(to_jsonable_python(rest), sort_keys=True)
    return flat


def from_chroma(chunk_id: str, text: str | None, metadata: dict[str, Any] | None) -> Chunk:
    """Rebuild the Chunk stored by `to_chroma_metadata`."""
    meta = dict(metadata or {})
    extra = json.loads(meta.pop(JSON_KEY, "{}"))
    fields = {name: meta.pop(name) for name in CHUNK_FIELDS}
    return Chunk(id=chunk_id, text=text or "", **fields, metadata={**meta, **extra})


class ChromaDocumentIndex:
    """A collection of chunks with their embeddings in Chroma, tagged with its embedding profile.

    A server client connects at construction (a dead server fails at once), an embedded database
    opens when it exists or on first use; the collection opens on first
    use, which raises EmbeddingProfileMismatchError when it was built with another profile. `drop`
    works without opening it, so a reindex can purge a collection of another profile.

    With `create=False` (the query side) nothing is ever created: not the data directory, not the
    collection; opening one that does not exist (or is being deleted) raises
    UnknownCollectionError naming the collections there are.
    """

    def __init__(
        self,
        collection: str,
        profile: EmbeddingProfile,
        *,
        data_dir: Path,
        server_url: str | None = None,
        create: bool = True,
    ) -> None:
        self.collection = validate_collection(collection)
        self.profile = profile
        self.create = create
        self._paths = DataPaths(Path(data_dir))
        self._path = self._paths.chroma_dir
        self._where = f"{server_url or f'chroma:{self._path}'}/{collection}"
        self._data_dir = Path(data_dir)
        self._server_url = server_url
        self._client_ref: Client | None = None
        if server_url or has_embedded_store(self._paths):  # a dead server fails here, at once
            self._client_ref = get_client(path=self._path, server_url=server_url)
        self._batch_size: int | None = None
        self._handle: Collection | None = None

    @property
    def _client(self) -> Client:
        """The Chroma client, opened on first use.

        An embedded database that does not exist yet is created by a writing index; a read-only
        one raises UnknownCollectionError until it exists.
        """
        if self._client_ref is None:
            if not self.create and not has_embedded_store(self._paths):
                raise self._unknown()
            self._client_ref = get_client(path=self._path)
        return self._client_ref

    def _unknown(self) -> UnknownCollectionError:
        return UnknownCollectionError(self.collection, self.visible_names(),
                                      where=self._server_url or str(self._data_dir))

    def visible_names(self) -> list[str]:
        """The collections of this store a user sees (see `stores.catalog.visible_names`)."""
        if self._client_ref is None and not has_embedded_store(self._paths):
            return []
        return visible_names(self._names(), self._paths)

    def ensure_exists(self) -> None:
        """Open the collection now (the handle is cached).

        Raises UnknownCollectionError for a read-only index whose collection does not exist.
        """
        self._col()

    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        try:
            yield
        except RagloomError:
            raise  # already says what, where and what to do
        except _STORE_FAILURES as exc:
            raise StoreError(f"cannot {action}: {exc}", where=self._where) from exc

    def _col(self) -> Collection:
        """Open (or create) the collection on first use and check its embedding profile."""
        if self._handle is None:
            if not self.create:
                self._handle = self._open_existing()
            else:
                with self._guard("open the collection"):
                    self._handle = self._client.get_or_create_collection(
                        self.collection,
                        metadata={PROFILE_KEY: self.profile.key()},
                        configuration={"hnsw": {"space": "cosine"}},
                        embedding_function=None,
                    )
            self._check_profile(self._handle)
        return self._handle

    def _open_existing(self) -> Collection:
        """The existing, visible collection of this name; UnknownCollectionError otherwise."""
        if self._paths.deletion_marker(self.collection).exists():
            raise self._unknown()
        handle = self._reopen()
        if handle is None:
            raise self._unknown()
        return handle

    def _read(self, action: str, read: Callable[[Collection], T], empty: T) -> T:
        """Run a read on the collection; when another process dropped it (a reindex), reopen it by
        name and read again, or answer `empty` while it does not exist: never an error."""
        for attempt in range(REOPEN_ATTEMPTS):
            handle = self._handle
            try:
                with self._guard(action):
                    return read(handle if handle is not None else self._col())
            except StoreError as exc:
                if not isinstance(exc.__cause__, NotFoundError) or attempt == REOPEN_ATTEMPTS - 1:
                    raise
            self._handle = self._reopen()
            if self._handle is None:
                return empty
            self._check_profile(self._handle)
        return empty

    def _reopen(self) -> Collection | None:
        """The collection now bearing this name; None when there is none (a reindex swaps names
        with two renames, so a miss is retried briefly)."""
        for attempt in range(REOPEN_ATTEMPTS):
            try:
                with self._guard("reopen the collection"):
                    return self._client.get_collection(self.collection, embedding_function=None)
            except StoreError as exc:
                if not isinstance(exc.__cause__, NotFoundError):
                    raise
            time.sleep(REOPEN_PAUSE_S * (attempt + 1))
        return None

    @property
    def collection_id(self) -> str:
        """Chroma's id of the collection, asked afresh (it changes when the collection is dropped
        and recreated); a cached handle to an older collection is replaced."""
        current = self._col()
        with self._guard("read the collection id"):
            try:
                fresh = self._client.get_collection(self.collection, embedding_function=None)
            except NotFoundError:
                fresh = None
        if fresh is None or fresh.id != current.id:
            self._handle = None
            current = self._col()
        return str(current.id)

    def _check_profile(self, collection: Collection) -> None:
        stored = (collection.metadata or {}).get(PROFILE_KEY)
        if stored != self.profile.key():
            self._handle = None
            raise EmbeddingProfileMismatchError(
                f"collection {self.collection!r} was built with embedding profile "
                f"{stored or 'unknown'!r}, but the active profile is {self.profile.key()!r}",
                where=self._where,
                hint="run with --reindex to rebuild it with the active profile, "
                "or configure the embedding model it was built with",
            )

    @property
    def batch_size(self) -> int:
        """Largest batch the client accepts in one write."""
        if self._batch_size is None:
            with self._guard("read the maximum batch size"):
                self._batch_size = int(self._client.get_max_batch_size())
        return self._batch_size

    def upsert(self, chunks: list[Chunk], embeddings: np.ndarray) -> None:
        """Insert or replace chunks with their embeddings (rows aligned with chunks)."""
        vectors = self._check_embeddings(chunks, embeddings)
        for start in range(0, len(chunks), self.batch_size):
            part = chunks[start : start + self.batch_size]

            def write(col: Collection, part: list[Chunk] = part, start: int = start) -> None:
                col.upsert(
                    ids=[c.id for c in part],
                    embeddings=vectors[start : start + len(part)],
                    documents=[c.text for c in part],
                    metadatas=self._replacing_metadatas(col, part),
                )

            self._write(f"write {len(part)} chunks", write)

    def _write(self, action: str, write: Callable[[Collection], object]) -> None:
        """Run a write; a handle to a collection another process dropped is reopened once."""
        try:
            with self._guard(action):
                write(self._col())
                return
        except StoreError as exc:
            if not isinstance(exc.__cause__, NotFoundError):
                raise
        self._handle = None
        with self._guard(action):
            write(self._col())

    @staticmethod
    def _replacing_metadatas(collection: Collection, chunks: Sequence[Chunk]) -> list[Metadata]:
        """Chroma merges metadata on upsert: keys the new version lacks are set to None."""
        stored = collection.get(ids=[c.id for c in chunks], include=["metadatas"])
        stored_metadatas = stored["metadatas"] or []
        old_keys = {i: set(m or {}) for i, m in zip(stored["ids"], stored_metadatas, strict=True)}
        metadatas: list[Metadata] = []
        for chunk in chunks:
            metadata = to_chroma_metadata(chunk)
            stale = old_keys.get(chunk.id, set()) - set(metadata)
            metadatas.append({**metadata, **dict.fromkeys(stale)})
        return metadatas

    def _check_embeddings(self, chunks: list[Chunk], embeddings: np.ndarray) -> np.ndarray:
        vectors = np.asarray(embeddings, dtype=np.float32).reshape(len(chunks), -1)
        if chunks and vectors.shape[1] != self.profile.dimension:
            raise StoreError(
                f"embeddings have dimension {vectors.shape[1]}, "
                f"the profile {self.profile.key()!r} has {self.profile.dimension}",
                where=self._where,
            )
        ids = [c.id for c in chunks]
        if len(set(ids)) != len(ids):
            duplicates = sorted({i for i in ids if ids.count(i) > 1})
            raise StoreError(
                f"duplicate chunk ids in one upsert: {duplicates[:5]}", where=self._where
            )
        return vectors

    def delete_ids(self, ids: list[str]) -> None:
        """Delete chunks by id (unknown ids are ignored)."""
        for part in _batches(list(dict.fromkeys(ids)), self.batch_size):
            self._write(f"delete {len(part)} chunks",
                        operator.methodcaller("delete", ids=list(part)))

    def delete_where(self, where: Filter) -> int:
        """Delete chunks matching a metadata filter; return how many were deleted."""
        if not where:
            raise ConfigError("delete_where needs a non-empty filter", where=self._where)
        ids = self.all_ids(where)
        self.delete_ids(ids)
        return len(ids)

    def search(self, vector: np.ndarray, k: int, where: Filter | None = None) -> list[ScoredChunk]:
        """Return the k nearest chunks, score = cosine similarity, origin `vector`."""
        result = self._query(vector, k, where, ["documents", "metadatas", "distances"])
        if result is None:
            return []
        rows = zip(
            result["ids"][0],
            (result["documents"] or [[]])[0],
            (result["metadatas"] or [[]])[0],
            (result["distances"] or [[]])[0],
            strict=True,
        )
        return [
            ScoredChunk(
                chunk=from_chroma(i, text, dict(meta or {})),
                score=1.0 - float(distance),
                score_origin="vector",
            )
            for i, text, meta, distance in rows
        ]

    def search_ids(
        self, vector: np.ndarray, k: int, where: Filter | None = None
    ) -> list[tuple[str, float]]:
        """Ids and cosine similarities of the k nearest chunks, best first, without payloads.

        Several times cheaper than `search` when the caller holds the chunks in memory.
        """
        result = self._query(vector, k, where, ["distances"])
        if result is None:
            return []
        distances = (result["distances"] or [[]])[0]
        return [(i, 1.0 - float(d)) for i, d in zip(result["ids"][0], distances, strict=True)]

    def _query(self, vector: np.ndarray, k: int, where: Filter | None, include: Include) -> Any:
        """One nearest-neighbour query; None when k is not positive."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.profile.dimension:
            raise StoreError(
                f"query vector has dimension {query.shape[0]}, expected {self.profile.dimension}",
                where=self._where,
            )
        if k <= 0:
            return None
        return self._read("search", lambda col: col.query(
            query_embeddings=query.reshape(1, -1),
            n_results=k,
            where=normalize_where(where),
            include=include,
        ), None)

    def get_chunks(self, ids: list[str]) -> list[Chunk]:
        """Return the stored chunks for these ids, in the order asked (missing ids are skipped)."""
        found: dict[str, Chunk] = {}
        for part in _batches(list(dict.fromkeys(ids)), self.batch_size):
            got = self._read("read chunks", operator.methodcaller(
                "get", ids=list(part), include=["documents", "metadatas"]), _NO_ROWS)
            found.update(self._chunks_of(got))
        return [found[i] for i in dict.fromkeys(ids) if i in found]

    @staticmethod
    def _chunks_of(got: Any) -> dict[str, Chunk]:
        documents = got["documents"] or []
        metadatas = got["metadatas"] or []
        return {
            i: from_chroma(i, text, dict(meta or {}))
            for i, text, meta in zip(got["ids"], documents, metadatas, strict=True)
        }

    def get_embeddings(self, ids: list[str]) -> dict[str, np.ndarray]:
        """Return the stored embedding of each id that exists."""
        found: dict[str, np.ndarray] = {}
        for part in _batches(list(dict.fromkeys(ids)), self.batch_size):
            got = self._read("read embeddings", operator.methodcaller(
                "get", ids=list(part), include=["embeddings"]), _NO_ROWS)
            vectors = got["embeddings"] if got["embeddings"] is not None else []
            for i, vector in zip(got["ids"], vectors, strict=True):
                found[i] = np.asarray(vector, dtype=np.float32)
        return found

    def _pages(self, where: Filter | None, include: Include) -> Iterator[Any]:
        chroma_where = normalize_where(where)
        offset = 0
        while True:
            got = self._read("list chunks", operator.methodcaller(
                "get", where=chroma_where, include=include, limit=self.batch_size, offset=offset
            ), _NO_ROWS)
            yield got
            if len(got["ids"]) < self.batch_size:
                return
            offset += len(got["ids"])

    def all_ids(self, where: Filter | None = None) -> list[str]:
        """Return every chunk id, optionally restricted by a metadata filter."""
        return [i for page in self._pages(where, []) for i in page["ids"]]

    def all_chunks(self) -> list[Chunk]:
        """Return every chunk (used to rebuild the BM25 index)."""
        chunks: dict[str, Chunk] = {}
        for page in self._pages(None, ["documents", "metadatas"]):
            chunks.update(self._chunks_of(page))
        return list(chunks.values())

    def count(self) -> int:
        """Number of chunks stored."""
        return int(self._read("count chunks", lambda col: col.count(), 0))

    def sibling(self, collection: str) -> ChromaDocumentIndex:
        """An index over another collection of the same store and profile (a reindex's shadow)."""
        return ChromaDocumentIndex(collection, self.profile, data_dir=self._data_dir,
                                   server_url=self._server_url, create=self.create)

    def exists(self) -> bool:
        """Whether the collection exists (without creating it)."""
        return self.collection in self._names()

    def _names(self) -> set[str]:
        if self._client_ref is None and not has_embedded_store(self._paths):
            return set()
        with self._guard("list collections"):
            return {c.name if hasattr(c, "name") else str(c) for c in self._client.list_collections()}

    def replace_with(self, shadow: ChromaDocumentIndex) -> None:
        """Give shadow's collection this name: this one is renamed aside, shadow renamed, the old
        one dropped. A reader with a handle to the old collection reads it until it is dropped,
        then reopens the new one by name."""
        aside = f"{shadow.collection}-old"
        with self._guard("swap in the rebuilt collection"):
            names = self._names()
            if self.collection in names:
                self._client.get_collection(self.collection).modify(name=aside)
            crashpoint("chroma.swap")
            self._client.get_collection(shadow.collection).modify(name=self.collection)
            if self.collection in names:
                self._client.delete_collection(aside)
        self._handle = shadow._handle = None

    def recover_swap(self, shadow: str) -> list[str]:
        """Settle what an interrupted reindex left: a collection renamed aside comes back when
        this name is missing (else it is dropped), and the shadow is dropped. Returns notes."""
        notes = []
        with self._guard("recover an interrupted reindex"):
            names = self._names()
            aside = f"{shadow}-old"
            if aside in names and self.collection not in names:
                self._client.get_collection(aside).modify(name=self.collection)
                notes.append(f"restored collection {self.collection!r} from an interrupted reindex")
            elif aside in names:
                self._client.delete_collection(aside)
            if shadow in names:
                self._client.delete_collection(shadow)
                notes.append("removed the collection an interrupted reindex was building")
        self._handle = None
        return notes

    def drop(self) -> None:
        """Delete the whole collection; the next write creates it again, empty."""
        self._handle = None
        try:
            with self._guard("drop the collection"):
                self._client.delete_collection(self.collection)
        except StoreError as exc:
            if not isinstance(exc.__cause__, NotFoundError):
                raise

    def close(self) -> None:
        """Forget the collection handle; the shared client stays open (see `close_clients`)."""
        self._handle = None
