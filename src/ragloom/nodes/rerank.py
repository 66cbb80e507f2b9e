"""The rerank node: cascade the fused candidates down to top_n with the configured reranker."""

from __future__ import annotations

from typing import Any

from ragloom.nodes.deps import RagDeps
from ragloom.nodes.pool import current_ranking, retrieval_text
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
    """Rerank the fused candidates and keep the best top_n."""
    settings = deps.settings.rerank
    top_n = state.get("top_n") or settings.top_n
    fused = current_ranking(state)
    with StageClock("rerank") as clock:
        reranker = deps.reranker or get_reranker(settings, deps.chat)
        clock.note(reranker=reranker.name, top_n=top_n, inputs=len(fused))
        if not fused:
            return {"reranked": [], "trace": clock.skip("no candidates")}
        reranked, detail = _run(reranker, retrieval_text(state), fused, top_n)
        clock.note(outputs=len(reranked), **detail)
    return {"reranked": reranked, "trace": clock.trace()}
