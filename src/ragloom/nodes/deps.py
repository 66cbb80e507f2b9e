"""Live dependencies of the query nodes, bound by the graph builders.

Graphs served by `langgraph dev` receive JSON only, so live objects (indexes, models) cannot travel
in the runtime context: builders bind a `RagDeps` into each node; per-run knobs (question, filters,
top_n) travel in the input state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragloom.settings import RagSettings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from ragloom.providers.embeddings import Embedder
    from ragloom.stores.base import DocumentIndex


@dataclass
class RagDeps:
    """Settings plus the live components one query graph uses."""

    settings: RagSettings
    index: DocumentIndex
    embedder: Embedder
    bm25: Any | None = None
    """A ragloom.stores.bm25.Bm25Index, or a zero-argument loader returning the current one."""
    chat: BaseChatModel | None = None
    reranker: Any | None = None  # ragloom.providers.rerankers.Reranker

    def bm25_index(self) -> Any | None:
        """The BM25 index to search now (a loader picks up indexes rebuilt by later ingests)."""
        return self.bm25() if callable(self.bm25) else self.bm25
