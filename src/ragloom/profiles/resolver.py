"""Profile name → compiled graph: settings preset, graph builder and recursion limit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph

from ragloom.errors import UnknownNameError
from ragloom.graphs.adaptive import build_adaptive_graph
from ragloom.graphs.corrective import build_corrective_graph
from ragloom.graphs.retrieval import without_generation
from ragloom.graphs.staged import build_staged_graph
from ragloom.nodes.deps import RagDeps
from ragloom.profiles.presets import profile_names
from ragloom.settings import RagSettings

Builder = Callable[[RagDeps], StateGraph]

BUILDERS: dict[str, Builder] = {
    "fast": build_staged_graph,
    "balanced": build_staged_graph,
    "quality": build_staged_graph,
    "corrective": build_corrective_graph,
    "adaptive": build_adaptive_graph,
}

STRAIGHT_LIMIT = 25
"""Supersteps of a graph without loops (about ten nodes) plus a margin."""
STEPS_PER_ITERATION = 10
"""Supersteps one corrective iteration may take (rewrite, retrieval, grade, refine or web,
generate, groundedness, answers-question), with a margin."""


def recursion_limit(settings: RagSettings, max_iterations: int | None = None) -> int:
    """Hard circuit breaker derived from the iteration budget (per-run override included)."""
    budget = settings.loop.max_iterations if max_iterations is None else max_iterations
    return STRAIGHT_LIMIT + STEPS_PER_ITERATION * (budget + 1)


def graph_builder(profile: str) -> Builder:
    """The builder of a profile's graph, or an error listing the known profiles."""
    if profile not in BUILDERS:
        raise UnknownNameError("profile", profile, profile_names())
    return BUILDERS[profile]


def compile_graph(deps: RagDeps, *, retrieval_only: bool = False) -> CompiledStateGraph[Any]:
    """Compile the profile graph for these dependencies, with its recursion limit attached.

    `retrieval_only` builds the same graph without generation: its answer lists the passages as
    citations (corrective and adaptive still grade, rewrite, refine and hop).
    """
    builder = graph_builder(deps.settings.profile)
    run_deps = without_generation(deps) if retrieval_only else deps
    name = f"ragloom-{deps.settings.profile}{'-retrieval' if retrieval_only else ''}"
    compiled = builder(run_deps).compile(name=name)
    return compiled.with_config(recursion_limit=recursion_limit(deps.settings))


def build_graph(
    profile: str | None = None, *, settings: RagSettings | None = None, **overrides: Any
) -> CompiledStateGraph[Any]:
    """Compile a profile's graph over the configured collection, ready to `invoke`.

    `settings` (optional) is the base; `profile` and keyword overrides apply on top of it, key by
    key. Run it with `ragloom.run_graph(graph, question)` to turn a tripped recursion limit into a
    best-effort answer instead of an exception.
    """
    from ragloom import resources
    from ragloom.settings import resolve_settings

    run_settings = resolve_settings(settings, profile=profile, **overrides)
    graph_builder(run_settings.profile)
    return compile_graph(resources.rag_deps(run_settings))
