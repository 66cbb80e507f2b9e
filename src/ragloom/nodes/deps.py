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
    bm25: Any | None = None  # ragloom.stores.bm25.Bm25Index when hybrid retrieval is on
    chat: BaseChatModel | None = None
    reranker: Any | None = None  # ragloom.providers.rerankers.Reranker
