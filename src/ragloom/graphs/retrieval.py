"""The retrieval-only graph: guard → transform → retrieve → fuse → rerank → assemble → answer.

Generation is disabled in its settings, so the generate stage records itself as skipped on purpose
and the answer carries the assembled passages as citations with empty text.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph

from ragloom.nodes import answer, assemble, fuse, generate, rerank, retrieve, transform
from ragloom.nodes.deps import RagDeps
from ragloom.state import RagInput, RagOutput, RagState

RETRIEVAL_STAGES: tuple[tuple[str, Callable[..., dict[str, Any]]], ...] = (
    ("guard", answer.guard),
    ("transform", transform.transform),
    ("retrieve", retrieve.retrieve),
    ("fuse", fuse.fuse),
    ("rerank", rerank.rerank),
    ("assemble", assemble.assemble),
)


def bind(node: Callable[..., dict[str, Any]], deps: RagDeps) -> Callable[..., dict[str, Any]]:
    """Bind a node's dependencies, keeping the `(state) -> update` shape LangGraph expects."""
    return functools.partial(node, deps=deps)


def new_graph() -> StateGraph:
    """An empty query graph with the shared state, input and output schemas."""
    return StateGraph(RagState, input_schema=RagInput, output_schema=RagOutput)


def add_chain(graph: StateGraph, stages: tuple[tuple[str, Callable[..., dict[str, Any]]], ...],
              deps: RagDeps, after: str = START) -> str:
    """Add stages as a linear chain after node `after`; return the last node's name."""
    for name, node in stages:
        graph.add_node(name, bind(node, deps))
        graph.add_edge(after, name)
        after = name
    return after


def retrieval_only(deps: RagDeps) -> RagDeps:
    """The same dependencies with generation disabled (no chat model is ever called)."""
    settings = deps.settings.model_copy(
        update={"generate": deps.settings.generate.model_copy(update={"enabled": False})}
    )
    return RagDeps(settings=settings, index=deps.index, embedder=deps.embedder, bm25=deps.bm25,
                   chat=None, reranker=deps.reranker)


def build_retrieval_graph(deps: RagDeps) -> StateGraph:
    """Retrieval-only graph: ranked passages as citations, generation skipped on purpose."""
    graph = new_graph()
    last = add_chain(graph, RETRIEVAL_STAGES, deps)
    off = retrieval_only(deps)
    last = add_chain(graph, (("generate", generate.generate), ("answer", answer.answer)), off, last)
    graph.add_edge(last, END)
    return graph
