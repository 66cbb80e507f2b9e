"""The staged answer graph of the fast, balanced and quality profiles.

guard → retrieval (subgraph) → [generate] → [groundedness] → answer. The profiles differ only in
settings (retrieval mode, candidate_k, reranker, groundedness), which decide the nodes: generate
is left out for retrieval-only runs, groundedness when it is disabled.
"""

from __future__ import annotations

from langgraph.graph import END, START, StateGraph

from ragloom.graphs.assembly import DepsSource, bind, chain, query_graph, source_of
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


def add_retrieval(graph: StateGraph, source: DepsSource) -> None:
    """Add the compiled retrieval subgraph as the node `retrieval`."""
    graph.add_node("retrieval", build_retrieval_graph(source).compile(name="retrieval"))


def build_staged_graph(deps: RagDeps | DepsSource) -> StateGraph:
    """Wire guard, the retrieval subgraph and the answer stages; returns the graph uncompiled."""
    source = source_of(deps)
    settings = source.base.settings
    graph = query_graph()
    graph.add_node("guard", bind(answer.guard, source))
    add_retrieval(graph, source)
    names = ["guard", "retrieval"]
    if settings.generate.enabled:
        graph.add_node("generate", bind(generate.generate, source))
        names.append("generate")
        if settings.groundedness.enabled:
            graph.add_node("groundedness", bind(groundedness.groundedness, source))
            names.append("groundedness")
    skips = retrieval_skips(settings) + answer_skips(settings)
    graph.add_node("answer", bind(answer.answer, source, answering=settings.generate.enabled,
                                  skipped=skips))
    chain(graph, [START, *names, "answer", END])
    return graph
