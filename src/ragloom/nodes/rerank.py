"""The rerank node: cascade the ranked candidates down to top_n with the configured reranker."""

from __future__ import annotations

from typing import Any

from ragloom.nodes.deps import RagDeps
from ragloom.nodes.pool import retrieval_text
from ragloom.nodes.trace import StageClock
from ragloom.providers.rerankers import Reranker, get_reranker
from ragloom.state import RagState, ScoredChunk


def _run(
    reranker: Reranker, question: str, chunks: list[ScoredChunk], top_n: int
) -> tuple[list[ScoredChunk], dict[str, Any]]:
    """Call the reranker, collecting its trace detail when it offers one."""
    traced = getattr(reranker, "rerank_traced", None)
    if callable(traced):
        return traced(question, chunks, top_n)
    return reranker.rerank(question, chunks, top_n)[:top_n], {}


def rerank(state: RagState, deps: RagDeps) -> dict:
    """Rerank the ranked candidates and keep the best top_n; the ones it passes over, in their
    order, are the reserve the ranking stage may refill from."""
    settings = deps.settings.rerank
    top_n = state.get("top_n") or settings.top_n
    pool = state.get("ranked") or []
    with StageClock("rerank") as clock:
        reranker = deps.reranker or get_reranker(settings, deps.chat)
        clock.note(reranker=reranker.name, top_n=top_n, inputs=len(pool))
        if not pool:
            return {"ranked": [], "reserve": [], "trace": clock.skip("no candidates")}
        reranked, detail = _run(reranker, retrieval_text(state), pool, top_n)
        clock.note(outputs=len(reranked), **detail)
    kept = {s.chunk.id for s in reranked}
    reserve = [s for s in pool if s.chunk.id not in kept]
    return {"ranked": reranked, "reserve": reserve, "trace": clock.trace()}
