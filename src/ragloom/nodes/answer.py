"""The first and last nodes of every query graph: guard the question, then shape the answer.

Also the circuit breaker a loop's router sends a run to when the recursion limit is about to trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragloom.errors import QueryError
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.generate import build_citations
from ragloom.nodes.trace import StageClock, in_stage_order
from ragloom.state import RagAnswer, RagState, TraceStep, Verdict

FAILED_VERDICTS = frozenset({"ungrounded", "unaddressed", "incorrect"})
"""Final verdicts that make an answer best-effort when the run ends with them."""


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


def check_budget(value: Any) -> int | None:
    """Validate a per-run `max_iterations` override (None keeps the settings' budget)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 10:
        raise QueryError(f"max_iterations must be an integer from 0 to 10, got {value!r}",
                         where="input.max_iterations", hint="omit it to use loop.max_iterations")
    return value


def check_top_n(value: Any) -> int | None:
    """Validate a per-run `top_n` (None keeps the settings' rerank.top_n)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1000:
        raise QueryError(f"top_n must be an integer from 1 to 1000, got {value!r}",
                         where="input.top_n", hint="omit it to use rerank.top_n")
    return value


def guard(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Validate the question and the per-run knobs, and set the run's loop budget."""
    with StageClock("guard") as clock:
        question = check_question(state.get("question"), deps.settings.max_query_chars)
        top_n = check_top_n(state.get("top_n"))
        override = check_budget(state.get("max_iterations"))
        budget = deps.settings.loop.max_iterations if override is None else override
        clock.note(chars=len(question), profile=deps.settings.profile, max_iterations=budget)
    return {"question": question, "top_n": top_n, "max_iterations": budget, "iterations": 0,
            "trace": clock.trace()}


def circuit_breaker(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Stop a loop that is about to exceed the recursion limit; the answer is best-effort."""
    with StageClock("circuit_breaker") as clock:
        clock.note(remaining_steps=state.get("remaining_steps"),
                   iterations=state.get("iterations", 0),
                   reason="recursion limit nearly reached: answering with what was found")
    return {"best_effort": True, "trace": clock.trace()}


def _final_failures(verdicts: Sequence[Verdict]) -> list[str]:
    """The failed verdicts among the last verdict of each stage."""
    last: dict[str, str] = {}
    for verdict in verdicts:
        last[verdict.stage] = verdict.verdict
    return [f"{stage}: {verdict}" for stage, verdict in last.items() if verdict in FAILED_VERDICTS]


def answer(state: RagState, deps: RagDeps, *, answering: bool = True,
           skipped: Sequence[TraceStep] = ()) -> dict[str, Any]:
    """Assemble the RagAnswer: the draft and its citations (or, retrieval-only, every passage as
    a citation), the verdicts, the route and the whole trace, left-out stages included."""
    with StageClock("answer") as clock:
        if answering:
            citations = list(state.get("citations", []))
        else:
            passages = state.get("passages") or []
            citations = build_citations(passages, range(1, len(passages) + 1))
        verdicts = list(state.get("verdicts", []))
        failures = _final_failures(verdicts)
        best_effort = bool(state.get("best_effort", False)) or bool(failures)
        clock.note(citations=len(citations), best_effort=best_effort)
        if failures:
            clock.note(failed_checks=failures)
    steps = clock.trace()
    trace = in_stage_order([*state.get("trace", []), *steps], list(skipped))
    result = RagAnswer(
        question=state.get("question", ""),
        text=state.get("draft", "") if answering else "",
        citations=citations,
        trace=trace,
        profile=deps.settings.profile,
        route=state.get("route", ""),
        verdicts=verdicts,
        iterations=state.get("iterations", 0),
        query_variants=list(state.get("query_variants", [])),
        best_effort=best_effort,
    )
    return {"answer": result, "best_effort": best_effort, "trace": [*skipped, *steps]}
