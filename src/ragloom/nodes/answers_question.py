"""The answers-question node (Self-RAG's usefulness check): does the draft address the question?

Groundedness asks whether the claims are supported; this asks whether the answer is *about what
was asked*. A declining answer ("I don't know") does not address it. With a chat model: one
structured call; offline (or when the call fails): the embedding similarity of question and answer
blended with the share of the question's content terms the answer and its cited passages contain.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from ragloom.errors import ChatUnavailableError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.generate import is_abstention
from ragloom.nodes.grade import SEMANTIC_WEIGHT, term_coverage
from ragloom.nodes.text import strip_markers
from ragloom.nodes.trace import StageClock
from ragloom.providers.chat import complete_structured
from ragloom.state import RagState, Verdict

STAGE = "answers_question"
LLM_SYSTEM = (
    "You check whether an answer addresses the question that was asked (not whether it is "
    'true). Reply with JSON: {"answers": true or false, "reason": "a few words"}'
)


class AnswersReply(BaseModel):
    """The structured reply of the LLM check."""

    answers: bool
    reason: str = ""


def offline_score(question: str, answer: str, cited: str, deps: RagDeps) -> float:
    """Similarity of question and answer blended with the question terms answer and citations hold."""
    vectors = deps.embedder.embed_array([question, answer])
    similarity = max(0.0, float(vectors[1] @ vectors[0]))
    return SEMANTIC_WEIGHT * similarity + (1 - SEMANTIC_WEIGHT) * term_coverage(
        question, f"{answer} {cited}")


def answers_question(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Judge whether the draft addresses the original question."""
    question, draft = state["question"], state.get("draft") or ""
    update: dict[str, Any] = {}
    with StageClock(STAGE) as clock:
        if not draft or is_abstention(draft):
            verdict = Verdict(stage=STAGE, verdict="unaddressed", score=0.0,
                              reason="the answer declines or is empty")
            clock.note(checker="none", verdict=verdict.verdict, reason=verdict.reason)
            return {"verdicts": [verdict], "trace": clock.trace()}
        text = strip_markers(draft)
        reply = None
        if deps.chat is not None:
            try:
                reply = complete_structured(deps.chat, LLM_SYSTEM,
                                            f"Question: {question}\n\nAnswer: {text}",
                                            AnswersReply, stage="groundedness")
            except ChatUnavailableError as exc:
                clock.note(fallback=f"heuristic: {exc.what}")
                update["best_effort"] = True
            if reply is None:
                clock.note(fallback="heuristic: no usable verdict from the model")
        if reply is not None:
            checker, passed, score, reason = "llm", reply.answers, float(reply.answers), reply.reason
        else:
            cited = " ".join(c.snippet for c in state.get("citations", []))
            score = round(offline_score(question, text, cited, deps), 4)
            threshold = deps.settings.grade.answers_question
            checker, passed = "heuristic", score >= threshold
            reason = f"question-answer score {score:.2f} (threshold {threshold:.2f})"
        verdict = Verdict(stage=STAGE, verdict="addressed" if passed else "unaddressed",
                          score=score, reason=reason)
        clock.note(checker=checker, verdict=verdict.verdict, score=score)
    update.update({"verdicts": [verdict], "trace": clock.trace()})
    return update
