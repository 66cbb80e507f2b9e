"""Guardrail wiring shared by the answering graphs: input guard, scope check, output guard, refusal.

    START → guard → [input_guard] ─┬─ pass → <first stage>
                                   └─ refuse → refuse → answer
    ... → [scope] ─┬─ pass → generate → ... → [output_guard] → answer
                   └─ refuse → refuse → answer

Each guard is a node only when it works under the settings (`guard.input`, `guard.min_relevance`
> 0, `guard.output`; scope and output guard need generation); `guard_skips` lists the ones left
out. The adaptive graph guards the question once at its top: its delegates are built without the
input guard (`input_guarded=False`).
"""

from __future__ import annotations

from langgraph.graph import START, StateGraph

from ragloom.graphs.assembly import DepsSource, bind
from ragloom.graphs.routing import route_after_input_guard, route_after_scope
from ragloom.nodes import answer, input_guard, output_guard, refuse, scope
from ragloom.nodes.trace import skipped_step
from ragloom.settings import RagSettings
from ragloom.state import TraceStep

RETRIEVAL_ONLY_GUARD = "retrieval-only: no generated answer to check"


def scope_on(settings: RagSettings) -> bool:
    """Whether the scope check is a node: generation on and a relevance threshold set."""
    return settings.generate.enabled and settings.guard.min_relevance > 0


def output_guard_on(settings: RagSettings) -> bool:
    """Whether the output guard is a node: generation on and `guard.output`."""
    return settings.generate.enabled and settings.guard.output


def guard_skips(settings: RagSettings, *, input_guarded: bool = True) -> list[TraceStep]:
    """Trace records of the guard stages these settings leave out."""
    skips = []
    if input_guarded and not settings.guard.input:
        skips.append(skipped_step("input_guard", "guard.input is off"))
    if not settings.generate.enabled:
        skips.append(skipped_step("scope", "retrieval-only: the passages are returned as ranked"))
    elif not scope_on(settings):
        skips.append(skipped_step("scope", "guard.min_relevance is 0"))
    if not settings.generate.enabled:
        skips.append(skipped_step("output_guard", RETRIEVAL_ONLY_GUARD))
    elif not output_guard_on(settings):
        skips.append(skipped_step("output_guard", "guard.output is off"))
    return skips


def _add_refuse(graph: StateGraph, source: DepsSource) -> None:
    """The refusal node, once per graph, ending in the answer node."""
    if "refuse" not in graph.nodes:
        graph.add_node("refuse", bind(refuse.refuse, source))
        graph.add_edge("refuse", "answer")


def add_guarded_start(graph: StateGraph, source: DepsSource, first: str, *,
                      input_guarded: bool = True) -> None:
    """START → guard → [input_guard → first | refuse]."""
    graph.add_node("guard", bind(answer.guard, source))
    graph.add_edge(START, "guard")
    if not (input_guarded and source.base.settings.guard.input):
        graph.add_edge("guard", first)
        return
    graph.add_node("input_guard", bind(input_guard.input_guard, source))
    graph.add_edge("guard", "input_guard")
    graph.add_conditional_edges("input_guard", route_after_input_guard,
                                {"pass": first, "refuse": "refuse"})
    _add_refuse(graph, source)


def add_scope(graph: StateGraph, source: DepsSource, then: str = "generate") -> str:
    """The scope check before `then` when it is on; returns the node to send passages to."""
    if not scope_on(source.base.settings):
        return then
    graph.add_node("scope", bind(scope.scope, source))
    graph.add_conditional_edges("scope", route_after_scope, {"pass": then, "refuse": "refuse"})
    _add_refuse(graph, source)
    return "scope"


def add_output_guard(graph: StateGraph, source: DepsSource) -> str:
    """The output guard before the answer node when it is on; returns the node a finished draft
    goes to (`output_guard`, else `answer`)."""
    if not output_guard_on(source.base.settings):
        return "answer"
    graph.add_node("output_guard", bind(output_guard.output_guard, source))
    graph.add_edge("output_guard", "answer")
    return "output_guard"
