"""The groundedness node: check that every claim is supported by the passages it cites.

The heuristic checker applies the shared claim-support rule (`nodes/support.py`: stemmed-token
coverage blended with sentence similarity, numbers must match) to each sentence and the passages
its markers cite. An `ungrounded` verdict marks the answer best-effort, so every surface warns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ragloom.errors import ChatUnavailableError
from ragloom.nodes.assemble import render_context
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.generate import is_abstention
from ragloom.nodes.support import SupportScorer
from ragloom.nodes.text import markers_in, strip_markers, tokenize
from ragloom.nodes.trace import StageClock, log_once
from ragloom.providers.chat import complete, parse_json_reply
from ragloom.sentences import split_sentences
from ragloom.state import RagState, ScoredChunk, Verdict

if TYPE_CHECKING:
    from ragloom.providers.embeddings import TextEmbedder

STAGE = "groundedness"
LLM_SYSTEM = (
    "You check whether an answer is supported by the passages. Reply with JSON only: "
    '{"grounded": true or false, "score": number between 0 and 1 (share of supported claims)}.'
)


def heuristic_score(draft: str, passages: Sequence[ScoredChunk],
                    embedder: TextEmbedder | None = None) -> tuple[float, int, int]:
    """Return (supported share, supported, claims); a claim is a sentence with content words,
    supported when the passages its markers cite support it under the shared rule."""
    scorer = SupportScorer([p.chunk.text for p in passages], embedder)
    claims = supported = 0
    for sentence in split_sentences(draft):
        claim = strip_markers(sentence.text)
        if not tokenize(claim):
            continue
        claims += 1
        cited = sorted({m - 1 for m in markers_in(sentence.text) if 1 <= m <= len(passages)})
        supported += bool(cited) and scorer.assess(claim, cited).supported
    return (supported / claims if claims else 1.0), supported, claims


def _as_bool(value: Any) -> bool | None:
    """A JSON boolean, or a yes/no/true/false string; None otherwise."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return {"true": True, "yes": True, "false": False, "no": False}.get(value.strip().lower())
    return None


def _as_score(value: Any) -> float | None:
    """A number clamped to [0, 1]; None when not numeric."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        return min(1.0, max(0.0, float(value)))
    except (TypeError, ValueError):
        return None


def parse_llm_verdict(text: str, threshold: float) -> tuple[bool, float] | None:
    """Parse {"grounded": bool, "score": float} tolerantly; None when unusable."""
    data = parse_json_reply(text, dict)
    if data is None:
        return None
    grounded, score = _as_bool(data.get("grounded")), _as_score(data.get("score"))
    if grounded is None and score is None:
        return None
    if grounded is None:
        grounded = score is not None and score >= threshold
    return grounded, score if score is not None else float(grounded)


def _llm_check(
    draft: str, passages: Sequence[ScoredChunk], deps: RagDeps, clock: StageClock
) -> tuple[bool, float] | None:
    """Ask the chat model for a verdict; None (traced) when the call or the parse fails.

    Suspicious passages follow `generate.suspicious` (left out or fenced as quoted data)."""
    context = render_context(passages, "linear", deps.settings.generate.suspicious)
    prompt = f"Passages:\n\n{context}\n\nAnswer:\n{draft}"
    try:
        reply = complete(deps.chat, LLM_SYSTEM, prompt, stage="groundedness")  # type: ignore[arg-type]
    except ChatUnavailableError as exc:
        clock.note(fallback=f"heuristic: chat model failed: {exc}", chat_unavailable=True)
        return None
    parsed = parse_llm_verdict(reply, deps.settings.groundedness.threshold)
    if parsed is None:
        clock.note(fallback="heuristic: unparseable model verdict")
    return parsed


def _checker(deps: RagDeps, clock: StageClock) -> str:
    """The checker that can run: `llm` needs a chat model, otherwise the heuristic (traced)."""
    wanted = deps.settings.groundedness.checker
    if wanted == "llm" and deps.chat is None:
        log_once("groundedness.no-chat", "no chat model: groundedness uses the heuristic checker")
        clock.note(fallback="heuristic: llm checker needs a chat model")
        return "heuristic"
    return wanted


def groundedness(state: RagState, deps: RagDeps) -> dict:
    """Judge whether the draft's claims are supported by the passages they cite."""
    settings = deps.settings.groundedness
    draft = state.get("draft") or ""
    passages = state.get("passages") or []
    with StageClock(STAGE) as clock:
        if not settings.enabled:
            return {"verdicts": [], "trace": clock.skip("groundedness check disabled")}
        if not draft:
            return {"verdicts": [], "trace": clock.skip("no draft to check")}
        if is_abstention(draft):
            verdict = Verdict(
                stage=STAGE, verdict="grounded", score=1.0, reason="abstention: no claims"
            )
            clock.note(checker="none", verdict=verdict.verdict, reason=verdict.reason)
            return {"verdicts": [verdict], "trace": clock.trace()}
        checker = _checker(deps, clock)
        parsed = _llm_check(draft, passages, deps, clock) if checker == "llm" else None
        if parsed is not None:
            grounded, score = parsed
            reason = "llm checker"
        else:
            checker = "heuristic"
            score, supported, claims = heuristic_score(draft, passages, deps.embedder)
            grounded = score >= settings.threshold
            reason = f"{supported}/{claims} claims supported by their cited passages"
        verdict = Verdict(
            stage=STAGE,
            verdict="grounded" if grounded else "ungrounded",
            score=score,
            reason=reason,
        )
        clock.note(
            checker=checker, verdict=verdict.verdict, score=score, threshold=settings.threshold
        )
        if not grounded:
            clock.note(best_effort="ungrounded answer: flagged to the user")
    update: dict = {"verdicts": [verdict], "trace": clock.trace()}
    flagged = not grounded or clock.detail.get("chat_unavailable", False)
    return {**update, "best_effort": True} if flagged else update
