"""The candidate pool as the retrieval stages leave it: the best ranking the graph has so far."""

from __future__ import annotations

from ragloom.nodes.fuse import dedup
from ragloom.state import RagState, ScoredChunk


def current_ranking(state: RagState) -> list[ScoredChunk]:
    """The ranking stage's chunks, else reranked ones, else fused ones, else the deduplicated
    candidates of the first probe.

    A graph has a node only for the stages that do work, so the stage after retrieve reads
    whichever ranking the stages before it produced.
    """
    if "ranked" in state:
        return list(state["ranked"])
    if "reranked" in state:
        return list(state["reranked"])
    if "fused" in state:
        return list(state["fused"])
    candidates = state.get("candidates") or []
    return dedup(candidates[0]) if candidates else []


def retrieval_text(state: RagState) -> str:
    """What the retrieval stages search for: the probe (a rewrite, a hop), else the question."""
    return state.get("probe") or state["question"]

