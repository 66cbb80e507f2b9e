"""Profile name → compiled graph: settings preset, graph builder and recursion limit."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph

from ragloom.errors import UnknownNameError
from ragloom.graphs.retrieval import build_retrieval_graph
from ragloom.graphs.staged import build_staged_graph
from ragloom.nodes.deps import RagDeps
from ragloom.profiles.presets import profile_names
from ragloom.settings import RagSettings

BUILDERS: dict[str, Callable[[RagDeps], StateGraph]] = {
    "fast": build_staged_graph,
    "balanced": build_staged_graph,
    "quality": build_staged_graph,
}

STRAIGHT_LIMIT = 25
"""Recursion limit of graphs without loops: their node count plus a margin."""


def recursion_limit(settings: RagSettings) -> int:
    """Hard circuit breaker derived from the iteration budget (straight graphs: a fixed bound)."""
    return STRAIGHT_LIMIT + 12 * settings.loop.max_iterations


def graph_builder(profile: str) -> Callable[[RagDeps], StateGraph]:
    """The builder of a profile's graph, or an error listing the known profiles."""
    if profile not in BUILDERS:
        raise UnknownNameError("profile", profile, profile_names())
    return BUILDERS[profile]


def compile_graph(deps: RagDeps, *, retrieval_only: bool = False) -> CompiledStateGraph[Any]:
    """Compile the profile graph for these dependencies, with its recursion limit attached."""
    builder = build_retrieval_graph if retrieval_only else graph_builder(deps.settings.profile)
    name = f"ragloom-{deps.settings.profile}{'-retrieval' if retrieval_only else ''}"
    compiled = builder(deps).compile(name=name)
    return compiled.with_config(recursion_limit=recursion_limit(deps.settings))


def build_graph(
    profile: str = "balanced", *, settings: RagSettings | None = None, **overrides: Any
) -> CompiledStateGraph[Any]:
    """Compile a profile's graph over the configured collection, ready to `invoke`."""
    from ragloom import resources
    from ragloom.settings import load_settings

    graph_builder(profile)
    run_settings = settings or load_settings(profile, **overrides)
    return compile_graph(resources.rag_deps(run_settings))
