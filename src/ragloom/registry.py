"""The one graph registry: every compiled graph of every surface comes from here, compiled once.

A query graph is compiled once per (settings identity, retrieval-only) and reused by the CLI,
the Python API, the HTTP service, Studio's `langgraph.json` entries, crews, agent tools and the
LangChain retriever alike; so are the retrieval subgraph crews feed their agents with and the
ingest graph. Settings arrive resolved (`settings.resolve_settings`); the live components behind
a graph (index, embedder, chat model, reranker) come from `resources`.

A compiled query graph carries the recursion limit of the largest loop budget a run may ask for
(`MAX_ITERATIONS`), so a served or Studio run with `max_iterations: 10` is never cut short; the
runner sets each run's own, tighter limit from the run's budget.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING, Any

from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph

from ragloom import resources
from ragloom.errors import UnknownNameError
from ragloom.graphs.adaptive import build_adaptive_graph
from ragloom.graphs.assembly import DepsSource
from ragloom.graphs.corrective import build_corrective_graph
from ragloom.graphs.retrieval import compile_retrieval, without_generation
from ragloom.graphs.staged import build_staged_graph
from ragloom.nodes.deps import RagDeps
from ragloom.profiles.presets import profile_names
from ragloom.settings import RagSettings, resolve_settings
from ragloom.state import MAX_ITERATIONS

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

Builder = Callable[[RagDeps], StateGraph]
Compiled = CompiledStateGraph[Any]

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
MAX_ENTRIES = 64
"""Compiled graphs kept; past it the registry starts again (a graph holds its components)."""

_compiled: dict[Hashable, Compiled] = {}
_lock = threading.Lock()


def recursion_limit(budget: int) -> int:
    """The hard circuit breaker of a run whose loop budget is `budget` iterations."""
    return STRAIGHT_LIMIT + STEPS_PER_ITERATION * (budget + 1)


def graph_builder(profile: str) -> Builder:
    """The builder of a profile's graph, or an error listing the known profiles."""
    if profile not in BUILDERS:
        raise UnknownNameError("profile", profile, profile_names())
    return BUILDERS[profile]


def _cached(key: Hashable, compile_: Callable[[], Compiled]) -> Compiled:
    """The graph registered under key, compiled on first use."""
    with _lock:
        if key in _compiled:
            return _compiled[key]
    graph = compile_()
    with _lock:
        if len(_compiled) >= MAX_ENTRIES:
            _compiled.clear()
        return _compiled.setdefault(key, graph)


def compile_profile(deps: RagDeps, *, retrieval_only: bool = False) -> Compiled:
    """Compile the profile graph over these dependencies (the one place a profile's graph is
    compiled). `retrieval_only` builds it without generation: its answer lists the passages as
    citations (corrective and adaptive still grade, rewrite, refine and hop)."""
    profile = deps.settings.profile
    builder = graph_builder(profile)
    run_deps = without_generation(deps) if retrieval_only else deps
    name = f"ragloom-{profile}{'-retrieval' if retrieval_only else ''}"
    return builder(run_deps).compile(name=name).with_config(
        recursion_limit=recursion_limit(MAX_ITERATIONS))


def query_graph(settings: RagSettings, *, retrieval_only: bool = False) -> Compiled:
    """The compiled graph of `settings.profile` over `settings.collection` (a run's context may
    name another collection of the same data directory), compiled once per settings identity.
    Raises for an unknown profile."""
    graph_builder(settings.profile)
    key = ("query", settings.model_dump_json(), retrieval_only)
    return _cached(key, lambda: compile_profile(resources.rag_deps(settings),
                                                retrieval_only=retrieval_only))


def retrieval_subgraph(settings: RagSettings, *, chat: BaseChatModel | None = None) -> Compiled:
    """The compiled retrieval subgraph (transform → … → assemble) of a collection, for crews'
    knowledge nodes; `chat` replaces the configured chat model (transforms, llm reranker). A
    collection that does not exist is an error when the subgraph runs, not when it compiles."""
    key = ("retrieval", settings.model_dump_json(), id(chat) if chat is not None else None)

    def compile_() -> Compiled:
        deps = resources.rag_deps(settings)
        if chat is not None:
            deps = dataclasses.replace(deps, chat=chat)
        return compile_retrieval(DepsSource(deps))

    return _cached(key, compile_)


def ingest_graph(settings: RagSettings, *, locked: bool = False) -> Compiled:
    """The compiled ingest graph of `settings.collection`; `locked` wraps it in the collection
    lock (for served graphs, whose callers cannot take the lock around a run)."""
    from ragloom.graphs.ingest import build_ingest_graph, build_locked_ingest_graph
    from ragloom.ingestion.chunkers import get_chunker
    from ragloom.nodes.ingest import IngestDeps, ingest_recursion_limit

    def compile_() -> Compiled:
        embedder = resources.embedder(settings)
        deps = IngestDeps(settings=settings, index=resources.document_index(settings),
                          embedder=embedder, chunker=get_chunker(settings.chunker,
                                                                 embedder=embedder),
                          paths=resources.data_paths(settings))
        builder = build_locked_ingest_graph if locked else build_ingest_graph
        return builder(deps).compile(name="ragloom-ingest").with_config(
            recursion_limit=ingest_recursion_limit())

    return _cached(("ingest", settings.model_dump_json(), locked), compile_)


def forget(settings: RagSettings) -> None:
    """Drop the compiled graphs of the settings' collection (after it was deleted)."""
    with _lock:
        _compiled.clear()
    resources.forget_collection(settings)


def build_graph(
    profile: str | None = None, *, settings: RagSettings | None = None, **overrides: Any
) -> Compiled:
    """The compiled graph of a profile over the configured collection, ready to `invoke`.

    Settings resolve as on every surface (`resolve_settings`): `settings` (optional) is the base,
    `profile` puts its preset under the base's own values, keyword overrides go on top. Run it
    with `ragloom.run_graph(graph, question)` to turn a tripped recursion limit into a
    best-effort answer instead of an exception.
    """
    return query_graph(resolve_settings(settings, profile=profile, **overrides))
