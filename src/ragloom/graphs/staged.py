"""The staged answer graph of the fast, balanced and quality profiles.

guard → [input_guard] → retrieval (subgraph) → [scope] → [generate] → [groundedness] →
[output_guard] → answer, with `refuse` → answer for the questions a guard stops. The profiles
differ only in settings (retrieval mode, candidate_k, reranker, groundedness), which decide the
nodes through the skip rules of the stage table (`staged_table`): generate, scope and the output
guard are left out for retrieval-only runs, groundedness when it is disabled, each guard when its
setting is off (graphs/guards.py).
"""

from __future__ import annotations

from langgraph.graph import END, StateGraph

from ragloom.graphs.assembly import (
    ANSWER,
    DepsSource,
    Stage,
    add_answer,
    add_stages,
    chain,
    plan,
    query_graph,
    source_of,
)
from ragloom.graphs.guards import (
    OUTPUT_GUARD,
    REFUSE,
    SCOPE,
    add_guarded_start,
    add_output_guard,
    add_scope,
    entry,
)
from ragloom.graphs.retrieval import RETRIEVAL, build_retrieval_graph
from ragloom.nodes import generate, groundedness
from ragloom.nodes.deps import RagDeps
from ragloom.settings import RagSettings

RETRIEVAL_ONLY = "generation disabled (retrieval-only)"
NO_DRAFT = "no draft to check (retrieval-only)"


def _retrieval_only(settings: RagSettings) -> str | None:
    """Why generate is left out: generation is disabled."""
    return None if settings.generate.enabled else RETRIEVAL_ONLY


def _groundedness_off(settings: RagSettings) -> str | None:
    """Why the groundedness check is left out: no draft, or the check is disabled."""
    if not settings.generate.enabled:
        return NO_DRAFT
    return None if settings.groundedness.enabled else "groundedness check disabled"


ANSWER_STAGES = (
    Stage("generate", generate.generate, _retrieval_only),
    Stage("groundedness", groundedness.groundedness, _groundedness_off),
)
"""The answer stages in order: draft, then check it."""


def staged_table(input_guarded: bool = True) -> tuple[Stage, ...]:
    """Every stage of the staged graph, in the order an answer's trace lists them (the retrieval
    stages are the nodes of the `retrieval` subgraph)."""
    return (*entry(input_guarded), *RETRIEVAL, SCOPE, *ANSWER_STAGES, OUTPUT_GUARD, REFUSE, ANSWER)


def add_answer_stages(graph: StateGraph, source: DepsSource) -> list[str]:
    """Add the answer stages that do work under the settings; return their names in order."""
    return add_stages(graph, source, plan(ANSWER_STAGES, source.base.settings).nodes)


def add_retrieval(graph: StateGraph, source: DepsSource) -> None:
    """Add the compiled retrieval subgraph as the node `retrieval`."""
    graph.add_node("retrieval", build_retrieval_graph(source).compile(name="retrieval"))


def build_staged_graph(deps: RagDeps | DepsSource, *, input_guarded: bool = True) -> StateGraph:
    """Wire guard, the input guard, the retrieval subgraph, the scope check and the answer stages
    with the output guard; returns the graph uncompiled. `input_guarded=False` leaves the input
    guard out (the adaptive graph guards its question once, at its top)."""
    source = source_of(deps)
    graph = query_graph()
    add_retrieval(graph, source)
    add_answer(graph, source, staged_table(input_guarded))
    add_guarded_start(graph, source, "retrieval", input_guarded=input_guarded)
    if not source.base.settings.generate.enabled:
        chain(graph, ["retrieval", "answer", END])
        return graph
    names = add_answer_stages(graph, source)
    graph.add_edge("retrieval", add_scope(graph, source))
    chain(graph, [*names, add_output_guard(graph, source)])
    graph.add_edge("answer", END)
    return graph
