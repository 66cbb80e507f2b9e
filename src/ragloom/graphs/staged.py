"""The staged answer graph of the fast, balanced and quality profiles.

guard → transform → retrieve → fuse → rerank → assemble → generate → groundedness → answer; the
profiles differ only in settings (retrieval mode, candidate_k, reranker, groundedness). Idle stages
share the next stage's graph node (see `graphs/retrieval.py`).
"""

from __future__ import annotations

from langgraph.graph import END, StateGraph

from ragloom.graphs.retrieval import RETRIEVAL_STAGES, add_stages, new_graph
from ragloom.nodes import answer, generate, groundedness
from ragloom.nodes.deps import RagDeps

ANSWER_STAGES = (
    ("generate", generate.generate),
    ("groundedness", groundedness.groundedness),
    ("answer", answer.answer),
)


def build_staged_graph(deps: RagDeps) -> StateGraph:
    """Wire the shared stages into the staged answer graph; returns it uncompiled."""
    graph = new_graph()
    last = add_stages(graph, [(name, node, deps) for name, node in RETRIEVAL_STAGES + ANSWER_STAGES])
    graph.add_edge(last, END)
    return graph
