"""Guardrail wiring shared by the answering graphs: input guard, scope check, output guard, refusal.

    START → guard → [input_guard] ─┬─ pass → <first stage>
                                   └─ refuse → refuse → answer
    ... → [scope] ─┬─ pass → generate → ... → [output_guard] → answer
                   └─ refuse → refuse → answer

Each guard is a node only when it works under the settings (`guard.input`, `guard.min_relevance`
> 0, `guard.output`; scope and output guard need generation): the skip rules of `INPUT_GUARD`,
`SCOPE` and `OUTPUT_GUARD`, which the answering graphs' stage tables list. The adaptive graph
guards the question once at its top: its delegates are built without the input guard
(`input_guarded=False`), and their tables leave it out.
"""

from __future__ import annotations

from langgraph.graph import START, StateGraph

from ragloom.graphs.assembly import DepsSource, Stage, add_stages
from ragloom.graphs.routing import route_after_input_guard, route_after_scope
from ragloom.nodes import answer, input_guard, output_guard, refuse, scope
from ragloom.settings import RagSettings

RETRIEVAL_ONLY_GUARD = "retrieval-only: no generated answer to check"


def _input_guard_off(settings: RagSettings) -> str | None:
    """Why the input guard is left out: `guard.input` is off."""
    return None if settings.guard.input else "guard.input is off"


def _scope_off(settings: RagSettings) -> str | None:
    """Why the scope check is left out: retrieval-only, or no relevance threshold."""
    if not settings.generate.enabled:
        return "retrieval-only: the passages are returned as ranked"
    return None if settings.guard.min_relevance > 0 else "guard.min_relevance is 0"


def _output_guard_off(settings: RagSettings) -> str | None:
    """Why the output guard is left out: retrieval-only, or `guard.output` is off."""
    if not settings.generate.enabled:
        return RETRIEVAL_ONLY_GUARD
    return None if settings.guard.output else "guard.output is off"


GUARD = Stage("guard", answer.guard)
INPUT_GUARD = Stage("input_guard", input_guard.input_guard, _input_guard_off)
SCOPE = Stage("scope", scope.scope, _scope_off)
OUTPUT_GUARD = Stage("output_guard", output_guard.output_guard, _output_guard_off)
REFUSE = Stage("refuse", refuse.refuse)
"""Never left out on purpose: added with the first guard that can refuse."""


def entry(input_guarded: bool = True) -> tuple[Stage, ...]:
    """The stages a graph starts with: guard, then the input guard unless the graph is built
    without it (an adaptive delegate)."""
    return (GUARD, INPUT_GUARD) if input_guarded else (GUARD,)


def _add_refuse(graph: StateGraph, source: DepsSource) -> None:
    """The refusal node, once per graph, ending in the answer node."""
    if REFUSE.name not in graph.nodes:
        add_stages(graph, source, [REFUSE])
        graph.add_edge(REFUSE.name, "answer")


def add_guarded_start(graph: StateGraph, source: DepsSource, first: str, *,
                      input_guarded: bool = True) -> None:
    """START → guard → [input_guard → first | refuse]."""
    add_stages(graph, source, [GUARD])
    graph.add_edge(START, "guard")
    if not (input_guarded and INPUT_GUARD.runs(source.base.settings)):
        graph.add_edge("guard", first)
        return
    add_stages(graph, source, [INPUT_GUARD])
    graph.add_edge("guard", "input_guard")
    graph.add_conditional_edges("input_guard", route_after_input_guard,
                                {"pass": first, "refuse": "refuse"})
    _add_refuse(graph, source)


def add_scope(graph: StateGraph, source: DepsSource, then: str = "generate") -> str:
    """The scope check before `then` when it is on; returns the node to send passages to."""
    if not SCOPE.runs(source.base.settings):
        return then
    add_stages(graph, source, [SCOPE])
    graph.add_conditional_edges("scope", route_after_scope, {"pass": then, "refuse": "refuse"})
    _add_refuse(graph, source)
    return "scope"


def add_output_guard(graph: StateGraph, source: DepsSource) -> str:
    """The output guard before the answer node when it is on; returns the node a finished draft
    goes to (`output_guard`, else `answer`)."""
    if not OUTPUT_GUARD.runs(source.base.settings):
        return "answer"
    add_stages(graph, source, [OUTPUT_GUARD])
    graph.add_edge("output_guard", "answer")
    return "output_guard"
