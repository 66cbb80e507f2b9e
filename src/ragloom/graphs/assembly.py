"""What every graph builder shares: nodes bound to their dependencies, schemas, chains.

A builder adds a node only for a stage that does work under its settings; for each stage it leaves
out it makes a `skipped_step`, which the node that ends the graph writes into the trace at its place
in the stage order (`nodes/trace.py: in_stage_order`), so an answer's trace lists every stage
without phantom nodes.

Nodes are plain functions `(state, deps) -> update`. `bind` turns one into a LangGraph node that
takes the run's `Runtime[RagContext]` and hands the node the dependencies of the collection the
context names (`DepsSource`), so one compiled graph serves any collection.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

from langgraph.graph import StateGraph
from langgraph.runtime import Runtime

from ragloom.nodes.deps import RagDeps
from ragloom.state import RagContext, RagInput, RagOutput, RagState

NodeFn = Callable[..., dict[str, Any]]
LangGraphNode = Callable[..., dict[str, Any]]

class DepsSource:
    """The dependencies a run uses: the graph's own, or those of the collection in its context."""

    def __init__(self, deps: RagDeps) -> None:
        self.base = deps
        self._other: dict[str, RagDeps] = {}
        self._lock = threading.Lock()

    def for_context(self, context: RagContext | None) -> RagDeps:
        """Dependencies for a run whose runtime context is `context` (None: the graph's own)."""
        wanted = getattr(context, "collection", None)  # a parent graph's context may be another type
        if not wanted or wanted == self.base.settings.collection:
            return self.base
        with self._lock:
            if wanted not in self._other:
                from ragloom import resources

                self._other[wanted] = resources.collection_deps(self.base, wanted)
            return self._other[wanted]


def source_of(deps: RagDeps | DepsSource) -> DepsSource:
    """A DepsSource for deps (unchanged when it already is one)."""
    return deps if isinstance(deps, DepsSource) else DepsSource(deps)


def bind(node: NodeFn, source: DepsSource, **options: Any) -> LangGraphNode:
    """A LangGraph node running `node(state, deps, **options)` with the run's dependencies."""
    fn = functools.partial(node, **options) if options else node

    def run(state: RagState, runtime: Runtime[RagContext]) -> dict[str, Any]:
        return fn(state, source.for_context(runtime.context))

    run.__name__ = getattr(node, "__name__", "node")
    run.__doc__ = node.__doc__
    return run


def query_graph(input_schema: type = RagInput, output_schema: type = RagOutput) -> StateGraph:
    """An empty graph over RagState with the runtime context schema and the given I/O schemas."""
    # Typed with an open context so the builders' plain `StateGraph` annotations accept it.
    graph: StateGraph[RagState, Any, Any, Any] = StateGraph(
        RagState, context_schema=RagContext, input_schema=input_schema, output_schema=output_schema)
    return graph


def chain(graph: StateGraph, names: Sequence[str]) -> None:
    """Connect nodes one after another."""
    for left, right in itertools.pairwise(names):
        graph.add_edge(left, right)
