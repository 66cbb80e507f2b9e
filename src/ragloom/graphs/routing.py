"""Every router of the query graphs: pure sync functions of state returning node names.

Builders wire them with explicit path maps (`add_conditional_edges(node, router, PATHS)`) and bind
their build-time policy (which optional nodes exist) with `functools.partial`. A router raises on
a verdict it does not know; it never writes state. Loops are bounded twice: the iteration budget
(`iterations` < `max_iterations`, set by guard from the input or `loop.max_iterations`) and, as the
circuit breaker, LangGraph's `remaining_steps` before the recursion limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from langgraph.types import Send

from ragloom.guardrails.classifier import REFUSED
from ragloom.nodes.verdicts import last_verdict
from ragloom.state import RagState, run_knobs

GradeRoute = Literal["generate", "refine", "rewrite", "web", "answer", "circuit_breaker"]
CheckRoute = Literal["answer", "rewrite", "circuit_breaker"]
ClassRoute = Literal["direct", "retrieval", "iterative", "decompose"]
BridgeRoute = Literal["merge"]
GuardRoute = Literal["pass", "refuse"]

FINISH_STEPS = 6
"""Supersteps a corrective run needs from a decision point to its end (refine or web, generate,
groundedness, answers-question, circuit breaker, answer): a router with fewer left trips the
circuit breaker instead of looping."""

ROUTES = ("no_retrieval", "single_shot", "iterative", "multi_hop")
"""The adaptive classifier's routes."""


@dataclass(frozen=True)
class LoopPolicy:
    """What a corrective graph was built with: generation (else retrieval-only) and web search."""

    answering: bool = True
    web: bool = False


def budget_left(state: RagState) -> bool:
    """Whether the iteration budget allows another rewrite round."""
    return state.get("iterations", 0) < (state.get("max_iterations") or 0)


def out_of_steps(state: RagState) -> bool:
    """Whether the recursion limit is too close for another round (the circuit breaker)."""
    remaining = state.get("remaining_steps")
    return remaining is not None and remaining <= FINISH_STEPS


def route_after_grade(state: RagState, policy: LoopPolicy = LoopPolicy()) -> GradeRoute:
    """Route a grade: correct → generate; ambiguous → refine; incorrect → rewrite while budget lasts, then web
    (when built with it and not yet searched; its pages are graded again), then a best-effort
    answer from what there is."""
    if out_of_steps(state):
        return "circuit_breaker"
    verdict = last_verdict(state, "grade")
    finish: GradeRoute = "generate" if policy.answering else "answer"
    match verdict:
        case "correct":
            return finish
        case "ambiguous":
            return "refine"
        case "incorrect":
            if budget_left(state):
                return "rewrite"
            if policy.web and last_verdict(state, "web") is None:
                return "web"
            return finish
        case _:
            raise ValueError(f"route_after_grade: unknown grade verdict {verdict!r}")


def route_after_check(state: RagState) -> CheckRoute:
    """Both checks pass → answer; either fails → rewrite while budget lasts, else answer (the
    answer node marks it best-effort from the failed verdicts)."""
    if out_of_steps(state):
        return "circuit_breaker"
    grounded = last_verdict(state, "groundedness")
    addressed = last_verdict(state, "answers_question")
    if grounded not in (None, "grounded", "ungrounded"):
        raise ValueError(f"route_after_check: unknown groundedness verdict {grounded!r}")
    if addressed not in ("addressed", "unaddressed"):
        raise ValueError(f"route_after_check: unknown answers-question verdict {addressed!r}")
    if grounded != "ungrounded" and addressed == "addressed":
        return "answer"
    return "rewrite" if budget_left(state) else "answer"


def route_after_input_guard(state: RagState) -> GuardRoute:
    """Route an input verdict: ok → pass (on to retrieval or the classifier); any refused category → refuse."""
    verdict = last_verdict(state, "input_guard")
    if verdict == "ok":
        return "pass"
    if verdict in REFUSED:
        return "refuse"
    raise ValueError(f"route_after_input_guard: unknown input guard verdict {verdict!r}")


def route_after_scope(state: RagState) -> GuardRoute:
    """in_scope → pass (on to generate); out_of_scope → refuse (`I don't know`)."""
    verdict = last_verdict(state, "scope")
    match verdict:
        case "in_scope":
            return "pass"
        case "out_of_scope":
            return "refuse"
        case _:
            raise ValueError(f"route_after_scope: unknown scope verdict {verdict!r}")


def route_by_class(state: RagState) -> ClassRoute:
    """The adaptive classifier's route → the node that handles it."""
    route = state.get("route")
    match route:
        case "no_retrieval":
            return "direct"
        case "single_shot":
            return "retrieval"
        case "iterative":
            return "iterative"
        case "multi_hop":
            return "decompose"
        case _:
            raise ValueError(f"route_by_class: unknown route {route!r}")


def hop_payload(state: RagState, probe: str, index: int, wave: int,
                source: str | None = None) -> dict[str, Any]:
    """The input one hop's retrieval runs on."""
    return {**run_knobs(state), "probe": probe, "hop": index, "wave": wave, "source": source}


def send_hops(state: RagState) -> list[Send]:
    """Fan the decomposition's sub-questions out to `hop`, one parallel branch each."""
    probes = state.get("probes") or [state["question"]]
    return [Send("hop", hop_payload(state, probe, i, 1)) for i, probe in enumerate(probes, 1)]


def send_bridge_hops(state: RagState) -> list[Send] | BridgeRoute:
    """Fan the planned bridge hops out to `bridge_hop`, or go straight to merge without any."""
    plan = state.get("bridge_plan") or []
    if not plan:
        return "merge"
    return [Send("bridge_hop", hop_payload(state, h.probe, h.index, h.wave, h.source))
            for h in plan]
