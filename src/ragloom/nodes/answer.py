"""The first and last nodes of every query graph: guard the question, then shape the answer."""

from __future__ import annotations

from typing import Any

from ragloom.errors import QueryError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.trace import StageClock
from ragloom.state import RagAnswer, RagState


def check_question(question: Any, max_chars: int) -> str:
    """Return the stripped question, or raise QueryError when it is empty or oversized."""
    if not isinstance(question, str) or not question.strip():
        raise QueryError("the question is empty", where="question",
                         hint="pass a non-empty question string")
    text = question.strip()
    if len(text) > max_chars:
        raise QueryError(
            f"the question has {len(text)} characters, over the limit of {max_chars}",
            where="question",
            hint="shorten it or raise max_query_chars in the settings",
        )
    return text


def guard(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Validate the question and set the per-run defaults."""
    with StageClock("guard") as clock:
        question = check_question(state.get("question"), deps.settings.max_query_chars)
        clock.note(chars=len(question), profile=deps.settings.profile)
    return {"question": question, "iterations": state.get("iterations", 0), "trace": clock.trace()}


def answer(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Assemble the RagAnswer from the draft, its citations, the verdicts and the trace."""
    with StageClock("answer") as clock:
        citations = list(state.get("citations", []))
        clock.note(citations=len(citations))
    trace = [*state.get("trace", []), *clock.trace()]
    result = RagAnswer(
        question=state.get("question", ""),
        text=state.get("draft", ""),
        citations=citations,
        trace=trace,
        profile=deps.settings.profile,
        route=state.get("route", ""),
        verdicts=list(state.get("verdicts", [])),
        iterations=state.get("iterations", 0),
        query_variants=list(state.get("query_variants", [])),
        best_effort=bool(state.get("best_effort", False)),
    )
    return {"answer": result, "trace": clock.trace()}
