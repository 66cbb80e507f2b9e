"""The retrieval-only graph: guard → transform → retrieve → fuse → rerank → assemble → answer.

Generation is disabled in its settings, so the generate stage records itself as skipped on purpose
and the answer carries the assembled passages as citations with empty text.

Stages that do no work under a profile's settings (transform `none`, fuse of a single probe without
MMR or sibling evidence, rerank `none`, disabled generate or groundedness) and the guard run inside
the next stage's graph node when `fold_idle_stages` is on (the default): every stage function still
runs and traces itself, but each LangGraph superstep costs ~0.5 ms on a 2-core CPU.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable
from typing import Any

from langgraph.graph import END, START, StateGraph

from ragloom.nodes import answer, assemble, fuse, generate, rerank, retrieve, transform
from ragloom.nodes.deps import RagDeps
from ragloom.settings import RagSettings
from ragloom.state import RagInput, RagOutput, RagState

NodeFn = Callable[..., dict[str, Any]]
Stage = tuple[str, NodeFn]

RETRIEVAL_STAGES: tuple[Stage, ...] = (
    ("guard", answer.guard),
    ("transform", transform.transform),
    ("retrieve", retrieve.retrieve),
    ("fuse", fuse.fuse),
    ("rerank", rerank.rerank),
    ("assemble", assemble.assemble),
)
REDUCED_KEYS = frozenset(
    key
    for key, hint in typing.get_type_hints(RagState, include_extras=True).items()
    if typing.get_origin(hint) is typing.Annotated
)
"""State keys whose updates are appended by a reducer rather than replaced."""


def idle(stage: str, settings: RagSettings) -> bool:
    """Whether a stage only validates or records itself under these settings."""
    match stage:
        case "guard":
            return True
        case "transform":
            return settings.transform.name == "none"
        case "fuse":
            retrieval = settings.retrieval
            return settings.transform.name == "none" and not retrieval.mmr and (
                retrieval.sibling_weight == 0)
        case "rerank":
            return settings.rerank.name == "none"
        case "generate":
            return not settings.generate.enabled
        case "groundedness":
            return not settings.groundedness.enabled
    return False


def in_sequence(nodes: list[NodeFn]) -> NodeFn:
    """One graph node running several stage functions, each seeing the updates before it."""

    def run(state: RagState) -> dict[str, Any]:
        view: dict[str, Any] = dict(state)
        merged: dict[str, Any] = {}
        for node in nodes:
            for key, value in node(view).items():
                if key in REDUCED_KEYS:
                    merged[key] = [*merged.get(key, []), *value]
                    view[key] = [*view.get(key, []), *value]
                else:
                    merged[key] = view[key] = value
        return merged

    return run


def new_graph() -> StateGraph:
    """An empty query graph with the shared state, input and output schemas."""
    return StateGraph(RagState, input_schema=RagInput, output_schema=RagOutput)


def add_stages(graph: StateGraph, stages: list[tuple[str, NodeFn, RagDeps]]) -> str:
    """Add (name, node, deps) stages as a linear chain from START, folding idle stages into the
    next node when the settings ask for it; return the last node's name."""
    after, pending, names = START, [], []
    for position, (name, node, deps) in enumerate(stages):
        pending.append(functools.partial(node, deps=deps))
        names.append(name)
        last = position == len(stages) - 1
        if deps.settings.fold_idle_stages and idle(name, deps.settings) and not last:
            continue
        runner = pending[0] if len(pending) == 1 else in_sequence(pending)
        graph.add_node(name, runner, metadata={"stages": names} if len(names) > 1 else None)
        graph.add_edge(after, name)
        after, pending, names = name, [], []
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
    off = retrieval_only(deps)
    stages = [(name, node, deps) for name, node in RETRIEVAL_STAGES]
    stages += [("generate", generate.generate, off), ("answer", answer.answer, off)]
    graph = new_graph()
    graph.add_edge(add_stages(graph, stages), END)
    return graph
