"""The first and last nodes of every query graph: guard the question, then shape the answer.

`guard` validates the question and the per-run knobs (top_n, max_iterations, lang, ranking) and
settles the request's language: the input's `lang`, else detected from the question, else
`guard.default_lang`. A run a guardrail refused (`refused`) keeps its refusal text, without
citations, also in retrieval-only graphs.

Also the circuit breaker a loop's router sends a run to when the recursion limit is about to trip.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragloom.errors import QueryError
from ragloom.language import detect_language
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.generate import build_citations
from ragloom.nodes.ranking import KNOBS, run_ranking
from ragloom.nodes.trace import StageClock, in_stage_order
from ragloom.state import RagAnswer, RagState, RunInput, TraceStep, Verdict, run_knobs

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


def request_language(question: str, given: str | None, deps: RagDeps) -> tuple[str, str]:
    """The request's language and how it was chosen (given, detected, or the default)."""
    if given:
        return given, "input"
    detected = detect_language(question, deps.settings.ingest.languages,
                               deps.settings.resolved_cache_dir())
    if detected:
        return detected, "detected"
    return deps.settings.guard.default_lang, "default"


def guard(state: RagState, deps: RagDeps) -> dict[str, Any]:
    """Validate the question and the per-run knobs, set the run's loop budget and language."""
    with StageClock("guard") as clock:
        question = check_question(state.get("question"), deps.settings.max_query_chars)
        given = RunInput.checked({**run_knobs(state, budget=True), "question": question})
        ranking = run_ranking(deps.settings.ranking, given.ranking)
        lang, chosen = request_language(question, given.lang, deps)
        budget = (deps.settings.loop.max_iterations if given.max_iterations is None
                  else given.max_iterations)
        clock.note(chars=len(question), profile=deps.settings.profile, max_iterations=budget,
                   lang=lang, lang_from=chosen)
        if ranking is not None:
            clock.note(ranking=ranking.model_dump(exclude={"per_request"}))
    return {"question": question, "top_n": given.top_n, "max_iterations": budget, "iterations": 0,
            "lang": lang,
            "ranking": ranking.model_dump(include=set(KNOBS)) if ranking is not None else None,
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
           skipped: Sequence[TraceStep] = (), order: Sequence[str] = ()) -> dict[str, Any]:
    """Assemble the RagAnswer: the draft and its citations (or, retrieval-only, every passage as
    a citation), the verdicts, the route and the whole trace, the left-out stages (`skipped`)
    placed by the graph's stage order."""
    refused = state.get("refused")
    with StageClock("answer") as clock:
        if answering or refused:
            citations = list(state.get("citations", []))
        else:
            passages = state.get("passages") or []
            citations = build_citations(passages, range(1, len(passages) + 1))
        verdicts = list(state.get("verdicts", []))
        failures = _final_failures(verdicts)
        best_effort = bool(state.get("best_effort", False)) or bool(failures)
        clock.note(citations=len(citations), best_effort=best_effort)
        if refused:
            clock.note(refused=refused)
        if failures:
            clock.note(failed_checks=failures)
    steps = clock.trace()
    trace = in_stage_order([*state.get("trace", []), *steps], skipped, order)
    result = RagAnswer(
        question=state.get("question", ""),
        text=state.get("draft", "") if answering or refused else "",
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
