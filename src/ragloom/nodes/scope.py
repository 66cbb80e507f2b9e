"""The scope check after retrieval: is any passage relevant enough to answer the question from?

A question whose best passage is less relevant than `guard.min_relevance` is out of scope: it is
routed to the refusal node (`I don't know` and the closest sources), never to an ungrounded
answer. Relevance is the corrective grade's when the run graded these passages, else the offline
grader's blend of embedding similarity and question-term coverage (`grade.offline_relevance`)
over the best `grade.top_k` passages: stored vectors, one query embedding, no model call.
"""

from __future__ import annotations

from typing import Any

from ragloom.nodes.deps import RagDeps
from ragloom.nodes.grade import offline_relevance
from ragloom.nodes.trace import StageClock
from ragloom.state import RagState, Verdict

STAGE = "scope"


def best_relevance(state: RagState, deps: RagDeps) -> tuple[float, str]:
    """The best passage relevance to the question, and where it comes from."""
    passages = state.get("passages") or []
    if not passages:
        return 0.0, "no passages"
    graded = state.get("relevance") or {}
    known = [graded[p.chunk.id] for p in passages if p.chunk.id in graded]
    if known:
        return max(known), "grade"
    scored = offline_relevance(state["question"], passages[: deps.settings.grade.top_k], deps)
    return max(relevance for relevance, _, _ in scored), "similarity and term coverage"


def scope(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Decide whether the passages can answer the question (in_scope) or not (out_of_scope)."""
    threshold = deps.settings.guard.min_relevance
    with StageClock(STAGE) as clock:
        score, source = best_relevance(state, deps)
        verdict = "out_of_scope" if score < threshold else "in_scope"
        clock.note(verdict=verdict, best_relevance=round(score, 4), threshold=threshold,
                   relevance_from=source, passages=len(state.get("passages") or []))
    reason = f"best passage relevance {score:.2f} ({source}), threshold {threshold:.2f}"
    return {"verdicts": [Verdict(stage=STAGE, verdict=verdict, score=round(score, 4),
                                 reason=reason)],
            "trace": clock.trace()}
