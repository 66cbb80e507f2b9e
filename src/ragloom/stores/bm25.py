"""Persisted BM25 index of one collection: bm25s with the English stemmer and stopwords."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import bm25s
import numpy as np
import Stemmer

from ragloom.state import Chunk, ScoredChunk
from ragloom.stores.base import Filter
from ragloom.stores.filters import compile_where, filterable_metadata

logger = logging.getLogger(__name__)

FORMAT = 1
MODEL_DIR = "model"
CHUNKS_FILE = "chunks.jsonl"
META_FILE = "meta.json"
MASK_CACHE_SIZE = 32
_local = threading.local()


def ids_revision(ids: Iterable[str]) -> str:
    """Revision of a set of chunk ids: sha256 of the sorted ids, one per line."""
    return hashlib.sha256("\n".join(sorted(ids)).encode("utf-8")).hexdigest()


def _stemmer() -> Stemmer.Stemmer:
    """The English stemmer of this thread (stemmer objects are not shared across threads)."""
    if not hasattr(_local, "stemmer"):
        _local.stemmer = Stemmer.Stemmer("english")
    return _local.stemmer


def tokenize(texts: list[str]) -> Any:
    """Tokenize texts into bm25s ids + vocabulary: lowercase, English stopwords, stemmed."""
    return bm25s.tokenize(texts, stopwords="en", stemmer=_stemmer(), show_progress=False)


def query_tokens(query: str) -> list[str]:
    """Tokens of a query, produced exactly as the corpus tokens are."""
    tokens = bm25s.tokenize(
        [query], stopwords="en", stemmer=_stemmer(), return_ids=False, show_progress=False
    )
    return [t for t in tokens[0] if t]


def _fsync_tree(directory: Path) -> None:
    for path in [*directory.rglob("*"), directory]:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _write_model(chunks: list[Chunk], directory: Path) -> None:
    if chunks:
        model = bm25s.BM25()
        model.index(tokenize([c.text for c in chunks]), show_progress=False)
        model.save(str(directory / MODEL_DIR), show_progress=False)


def _write_chunks(chunks: list[Chunk], directory: Path) -> None:
    with open(directory / CHUNKS_FILE, "w", encoding="utf-8") as handle:
        for chunk in chunks:
            handle.write(chunk.model_dump_json() + "\n")


def _write_meta(chunks: list[Chunk], directory: Path) -> None:
    meta = {"format": FORMAT, "revision": ids_revision(c.id for c in chunks), "count": len(chunks)}
    (directory / META_FILE).write_text(json.dumps(meta, indent=2), encoding="utf-8")


def _replace_dir(new: Path, target: Path) -> None:
    """Move new into place of target; the old directory is removed only once new is in place."""
    if not target.exists():
        os.replace(new, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    os.replace(target, old / target.name)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)


class Bm25Index:
    """Keyword index over a collection's chunks; build once, load once, query in about a ms."""

    def __init__(self, model: bm25s.BM25 | None, chunks: list[Chunk], revision: str) -> None:
        self._model = model
        self._chunks = chunks
        self._by_id = {c.id: c for c in chunks}
        self._revision = revision
        self._metadata = [filterable_metadata(c) for c in chunks]
        self._masks: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    @classmethod
    def build(cls, chunks: list[Chunk], directory: Path) -> Bm25Index:
        """Index chunks and persist them atomically into directory (replacing what was there)."""
        directory = Path(directory)
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.tmp-", dir=directory.parent))
        try:
            _write_model(chunks, staging)
            _write_chunks(chunks, staging)
            _write_meta(chunks, staging)
            _fsync_tree(staging)
            _replace_dir(staging, directory)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        loaded = cls.load(directory)
        if loaded is None:
            raise OSError(f"{directory}: the BM25 index just written cannot be read back")
        return loaded

    @classmethod
    def load(cls, directory: Path) -> Bm25Index | None:
        """Load a persisted index; None when it is missing or unreadable (then rebuild it)."""
        directory = Path(directory)
        if not (directory / META_FILE).is_file():
            return None
        try:
            return cls._read(directory)
        except Exception as exc:  # any corruption means "rebuild", never a crash
            logger.warning("BM25 index at %s is unreadable and will be rebuilt: %s", directory, exc)
            return None

    @classmethod
    def _read(cls, directory: Path) -> Bm25Index:
        meta = json.loads((directory / META_FILE).read_text(encoding="utf-8"))
        if meta.get("format") != FORMAT:
            raise ValueError(f"unknown format {meta.get('format')!r}")
        lines = (directory / CHUNKS_FILE).read_text(encoding="utf-8").splitlines()
        chunks = [Chunk.model_validate_json(line) for line in lines]
        revision = ids_revision(c.id for c in chunks)
        if len(chunks) != meta["count"] or revision != meta["revision"]:
            raise ValueError("chunks do not match meta.json")
        model = None
        if chunks:
            model = bm25s.BM25.load(str(directory / MODEL_DIR), show_progress=False)
            if model.scores["num_docs"] != len(chunks):
                raise ValueError("the model and the chunks differ in size")
        return cls(model, chunks, revision)

    @property
    def revision(self) -> str:
        """`ids_revision` of the indexed chunk ids; compare it with the document index's ids."""
        return self._revision

    @property
    def ids(self) -> list[str]:
        """Ids of the indexed chunks, in index order."""
        return [c.id for c in self._chunks]

    def lookup(self, ids: Iterable[str]) -> dict[str, Chunk]:
        """The indexed chunks among ids, by id (ids not indexed are left out)."""
        return {i: self._by_id[i] for i in ids if i in self._by_id}

    def __len__(self) -> int:
        """Number of indexed chunks."""
        return len(self._chunks)

    def vocabulary_coverage(self, query: str) -> float | None:
        """Share of the query's terms (stemmed, stopwords out) the index knows; None when the
        query has no such term."""
        tokens = list(dict.fromkeys(query_tokens(query)))
        if not tokens:
            return None
        if self._model is None:
            return 0.0
        return len(self._model.get_tokens_ids(tokens)) / len(tokens)

    def search(self, query: str, k: int, where: Filter | None = None) -> list[ScoredChunk]:
        """Return up to k chunks with a positive BM25 score, best first (origin `bm25`)."""
        mask = self._mask(where)
        if self._model is None or k <= 0:
            return []
        token_ids = self._model.get_tokens_ids(query_tokens(query))
        if not token_ids:
            return []
        scores = self._model.get_scores_from_ids(token_ids, weight_mask=mask)
        return [
            ScoredChunk(chunk=self._chunks[i], score=float(scores[i]), score_origin="bm25")
            for i in _top_positive(scores, min(k, len(self._chunks)))
        ]

    def _mask(self, where: Filter | None) -> np.ndarray | None:
        """0/1 weights of the chunks matching the filter, cached per filter."""
        predicate = compile_where(where)
        if not where:
            return None
        key = json.dumps(where, sort_keys=True, default=str)
        with self._lock:
            if key in self._masks:
                self._masks.move_to_end(key)
                return self._masks[key]
        mask = np.fromiter(map(predicate, self._metadata), dtype=bool, count=len(self._metadata))
        weights = mask.astype(np.float32)
        with self._lock:
            self._masks[key] = weights
            while len(self._masks) > MASK_CACHE_SIZE:
                self._masks.popitem(last=False)
        return weights


def _top_positive(scores: np.ndarray, k: int) -> list[int]:
    """Indices of the k highest positive scores, best first (ties by index)."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) > k:
        part = np.argpartition(-scores[positive], k - 1)[:k]
        positive = positive[part]
    order = np.lexsort((positive, -scores[positive]))
    return [int(i) for i in positive[order]]
