"""Interfaces of the indexes every backend implements (Chroma embedded or server; bm25s)."""

from __future__ import annotations

from typing import Any, Protocol, Self

import numpy as np

from ragloom.state import Chunk, ScoredChunk

# Metadata filters use Chroma's `where` syntax on both legs: {"source_id": "a.md"},
# {"tags": {"$in": [...]}} or {"$and": [...]}; the BM25 leg evaluates the same subset
# ($eq, $ne, $in, $nin, $gt, $gte, $lt, $lte, $and, $or) in Python.
Filter = dict[str, Any]


class DocumentIndex(Protocol):
    """Dense chunk store: the source of truth for what a collection holds."""

    collection: str

    def upsert(self, chunks: list[Chunk], embeddings: np.ndarray) -> None:
        """Insert or replace chunks with their embeddings (rows aligned with chunks)."""

    def delete_ids(self, ids: list[str]) -> None:
        """Delete chunks by id."""

    def delete_where(self, where: Filter) -> int:
        """Delete chunks matching a metadata filter; return how many were deleted."""

    def search(self, vector: np.ndarray, k: int, where: Filter | None = None) -> list[ScoredChunk]:
        """Return the k nearest chunks (cosine similarity as score, origin `vector`)."""

    def search_ids(
        self, vector: np.ndarray, k: int, where: Filter | None = None
    ) -> list[tuple[str, float]]:
        """Ids and cosine similarities of the k nearest chunks, best first, without payloads."""

    def get_chunks(self, ids: list[str]) -> list[Chunk]:
        """Return the stored chunks for these ids (missing ids are skipped)."""

    def get_embeddings(self, ids: list[str]) -> dict[str, np.ndarray]:
        """Return the stored embedding of each id."""

    def all_ids(self, where: Filter | None = None) -> list[str]:
        """Return every chunk id, optionally restricted by a metadata filter."""

    def all_chunks(self) -> list[Chunk]:
        """Return every chunk (used to rebuild the BM25 index)."""

    def count(self) -> int:
        """Number of chunks stored."""

    def drop(self) -> None:
        """Delete the whole collection."""

    def sibling(self, collection: str) -> Self:
        """An index over another collection of the same store and profile (a reindex's shadow)."""

    def replace_with(self, shadow: Self) -> None:
        """Give shadow's collection this index's name, dropping the old one."""
