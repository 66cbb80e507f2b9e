"""The rewrite node: reformulate the retrieval probe across the vocabulary gap.

With a chat model: one call given the question, the grader's rationale (what was found, which terms
were not) and the claims the checks found unsupported. Offline: pseudo-relevance feedback from the
best graded passages (their shared terms the question lacks), keeping the question's own words
except those the collection does not know; each iteration takes its feedback from the next
passages down the ranking. Every rewrite spends one iteration of the budget, also
when it repeats an earlier probe (traced as `repeated`). Generation still answers the original
question: only `probe` changes.
"""

from __future__ import annotations

from typing import Any

from ragloom.errors import ChatUnavailableError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.feedback import feedback_terms
from ragloom.nodes.text import content_words
from ragloom.nodes.trace import StageClock
from ragloom.providers.chat import complete
from ragloom.state import RagState

STAGE = "rewrite"
FEEDBACK_PASSAGES = 3
FEEDBACK_TERMS = 5
MAX_PROBE_CHARS = 300
LLM_SYSTEM = (
    "You rewrite a search query so that it finds passages answering the question. Use other "
    "words than the failed queries: synonyms, the technical terms a manual would use, the names "
    "of the things asked about. Reply with the new query only, on one line."
)


def offline_probe(state: RagState) -> str:
    """Question words the collection knows, plus feedback terms of a window of passages that
    moves down the best round's ranking with each iteration (the best graded ones first)."""
    question = state["question"]
    gap = set(state.get("missing_terms") or [])
    relevance = state.get("relevance") or {}
    passages = sorted(state.get("passages") or [], key=lambda p: -relevance.get(p.chunk.id, 0.0))
    start = state.get("iterations", 0) * FEEDBACK_PASSAGES
    window = passages[start:start + FEEDBACK_PASSAGES] or passages[:FEEDBACK_PASSAGES]
    kept = [w for w in dict.fromkeys(content_words(question)) if w not in gap] or [question]
    terms = feedback_terms(question, [p.chunk.text for p in window], FEEDBACK_TERMS)
    return " ".join([*kept, *terms])


def _llm_probe(state: RagState, deps: RagDeps, tried: list[str]) -> str:
    """The chat model's new probe ('' when the reply is unusable)."""
    verdicts = state.get("verdicts", [])
    notes = [f"{v.stage}: {v.verdict} ({v.reason})" for v in verdicts[-3:] if v.reason]
    prompt = (f"Question: {state['question']}\nQueries tried: {' | '.join(tried)}\n"
              f"What the checks said: {'; '.join(notes) or 'nothing relevant was found'}\n"
              "New query:")
    reply = complete(deps.chat, LLM_SYSTEM, prompt, stage="rewrite")  # type: ignore[arg-type]
    line = next((ln.strip().strip("\"'`") for ln in reply.splitlines() if ln.strip()), "")
    return line[:MAX_PROBE_CHARS] if content_words(line) else ""


def rewrite(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Write a new probe for the original question and spend one iteration."""
    question = state["question"]
    tried = [question, *state.get("query_variants", [])]
    update: dict[str, Any] = {}
    with StageClock(STAGE) as clock:
        probe = ""
        if deps.chat is not None:
            try:
                probe = _llm_probe(state, deps, tried)
                clock.note(rewriter="llm")
            except ChatUnavailableError as exc:
                clock.note(fallback=f"offline: {exc.what}")
                update["best_effort"] = True
            if not probe:
                clock.note(fallback="offline: no usable query in the model's reply")
        if not probe:
            probe = offline_probe(state)
            clock.note(rewriter="pseudo-relevance feedback")
        iterations = state.get("iterations", 0) + 1
        repeated = any(" ".join(probe.lower().split()) == " ".join(t.lower().split())
                       for t in tried)
        clock.note(probe=probe, iteration=iterations, repeated=repeated,
                   budget=state.get("max_iterations"))
    update.update({"probe": probe, "query_variants": [probe], "iterations": iterations,
                   "trace": clock.trace()})
    return update
