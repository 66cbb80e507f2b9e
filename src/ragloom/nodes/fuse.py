"""The fuse node: combine the per-probe candidate lists into one ranking, then apply sibling
evidence and MMR (the arithmetic lives in nodes/fusion_math.py)."""

from __future__ import annotations

from ragloom.nodes.deps import RagDeps
from ragloom.nodes.fusion_math import dedup, mmr, rrf, sibling_evidence, union_max
from ragloom.nodes.pool import retrieval_text
from ragloom.nodes.trace import StageClock
from ragloom.state import RagState, ScoredChunk


def fuse(state: RagState, deps: RagDeps) -> dict:
    """Combine the per-probe candidate lists into one deduplicated ranking."""
    settings = deps.settings
    with StageClock("fuse") as clock:
        lists = state.get("candidates") or []
        limit = settings.retrieval.candidate_k
        if len(lists) <= 1:
            method = "pass-through"
            fused = dedup(lists[0] if lists else [])[:limit]
        elif settings.transform.name == "rag-fusion":
            method = "rrf"
            fused = rrf(lists, k=settings.retrieval.rrf_k, limit=limit)
        else:
            method = "union-max"
            fused = union_max(lists, limit=limit)
        clock.note(method=method, probes=len(lists), inputs=sum(len(c) for c in lists))
        if settings.retrieval.sibling_weight > 0:
            window = settings.retrieval.sibling_window
            fused = sibling_evidence(fused, settings.retrieval.sibling_weight, window)
            clock.note(sibling_weight=settings.retrieval.sibling_weight, sibling_window=window,
                       with_siblings=sum(s.score_origin.endswith("+siblings") for s in fused))
        if settings.retrieval.mmr and len(fused) > 1:
            fused = _diversify(state, deps, fused)
            clock.note(mmr=True, mmr_lambda=settings.retrieval.mmr_lambda)
        clock.note(fused=len(fused))
    return {"ranked": fused, "trace": clock.trace()}


def _diversify(state: RagState, deps: RagDeps, fused: list[ScoredChunk]) -> list[ScoredChunk]:
    """Reorder fused by MMR against the embedding of what was searched for."""
    query = deps.embedder.embed_array([retrieval_text(state)])[0]
    embeddings = deps.index.get_embeddings([s.chunk.id for s in fused])
    return mmr(query, fused, embeddings, deps.settings.retrieval.mmr_lambda)
