"""The staged answer graph of the fast, balanced and quality profiles.

guard → [input_guard] → retrieval (subgraph) → [scope] → [generate] → [groundedness] →
[output_guard] → answer, with `refuse` → answer for the questions a guard stops. The profiles
differ only in settings (retrieval mode, candidate_k, reranker, groundedness), which decide the
nodes: generate, scope and the output guard are left out for retrieval-only runs, groundedness
when it is disabled, each guard when its setting is off (graphs/guards.py).
"""

from __future__ import annotations

from langgraph.graph import END, StateGraph

from ragloom.graphs.assembly import DepsSource, bind, chain, query_graph, source_of
from ragloom.graphs.guards import add_guarded_start, add_output_guard, add_scope, guard_skips
from ragloom.graphs.retrieval import build_retrieval_graph, retrieval_skips
from ragloom.nodes import answer, generate, groundedness
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.trace import skipped_step
from ragloom.settings import RagSettings
from ragloom.state import TraceStep

RETRIEVAL_ONLY = "generation disabled (retrieval-only)"


def answer_skips(settings: RagSettings) -> list[TraceStep]:
    """Trace records of the answer stages these settings leave out."""
    if not settings.generate.enabled:
        return [skipped_step("generate", RETRIEVAL_ONLY),
                skipped_step("groundedness", "no draft to check (retrieval-only)")]
    if not settings.groundedness.enabled:
        return [skipped_step("groundedness", "groundedness check disabled")]
    return []


def add_answer_stages(graph: StateGraph, source: DepsSource) -> list[str]:
    """Add generate and, when enabled, groundedness; return their names in order."""
    graph.add_node("generate", bind(generate.generate, source))
    if not source.base.settings.groundedness.enabled:
        return ["generate"]
    graph.add_node("groundedness", bind(groundedness.groundedness, source))
    return ["generate", "groundedness"]


def add_retrieval(graph: StateGraph, source: DepsSource) -> None:
    """Add the compiled retrieval subgraph as the node `retrieval`."""
    graph.add_node("retrieval", build_retrieval_graph(source).compile(name="retrieval"))


def build_staged_graph(deps: RagDeps | DepsSource, *, input_guarded: bool = True) -> StateGraph:
    """Wire guard, the input guard, the retrieval subgraph, the scope check and the answer stages
    with the output guard; returns the graph uncompiled. `input_guarded=False` leaves the input
    guard out (the adaptive graph guards its question once, at its top)."""
    source = source_of(deps)
    settings = source.base.settings
    graph = query_graph()
    add_retrieval(graph, source)
    skips = (retrieval_skips(settings) + answer_skips(settings)
             + guard_skips(settings, input_guarded=input_guarded))
    graph.add_node("answer", bind(answer.answer, source, answering=settings.generate.enabled,
                                  skipped=skips))
    add_guarded_start(graph, source, "retrieval", input_guarded=input_guarded)
    if not settings.generate.enabled:
        chain(graph, ["retrieval", "answer", END])
        return graph
    names = add_answer_stages(graph, source)
    graph.add_edge("retrieval", add_scope(graph, source))
    chain(graph, [*names, add_output_guard(graph, source)])
    graph.add_edge("answer", END)
    return graph
