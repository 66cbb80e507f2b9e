"""What every graph builder shares: stage tables, nodes bound to dependencies, schemas, chains.

Each graph is described by one table of `Stage`s in stage order. A stage's `skip` rule says, for
some settings, why the stage is left out (None: it does work and is a node). `plan` splits a table
into the stages that are nodes and the `skipped_step`s of those left out, which the answer node
writes into the trace at their place in the table's order (`nodes/trace.py: in_stage_order`), so
an answer's trace lists every stage without phantom nodes.

Nodes are plain functions `(state, deps) -> update`. `bind` turns one into a LangGraph node that
takes the run's `Runtime[RagContext]` and hands the node the dependencies of the collection the
context names (`DepsSource`), so one compiled graph serves any collection.
"""

from __future__ import annotations

import functools
import itertools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from langgraph.graph import StateGraph
from langgraph.runtime import Runtime

from ragloom.nodes import answer
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.trace import skipped_step
from ragloom.settings import RagSettings
from ragloom.state import RagContext, RagInput, RagOutput, RagState, TraceStep

NodeFn = Callable[..., dict[str, Any]]
LangGraphNode = Callable[..., dict[str, Any]]
SkipRule = Callable[[RagSettings], str | None]


def always(settings: RagSettings) -> None:
    """The skip rule of a stage no settings leave out."""
    return None


@dataclass(frozen=True)
class Stage:
    """One row of a stage table: the stage's name, its node, and why settings leave it out."""

    name: str
    node: NodeFn
    skip: SkipRule = always

    def runs(self, settings: RagSettings) -> bool:
        """Whether the stage is a node under these settings."""
        return self.skip(settings) is None


class Plan(NamedTuple):
    """A stage table under some settings: its nodes and the records of the stages left out."""

    nodes: list[Stage]
    skipped: list[TraceStep]


def plan(table: Sequence[Stage], settings: RagSettings) -> Plan:
    """The stages of the table that are nodes and the skipped steps of the others, in table order."""
    nodes: list[Stage] = []
    skipped: list[TraceStep] = []
    for stage in table:
        reason = stage.skip(settings)
        if reason is None:
            nodes.append(stage)
        else:
            skipped.append(skipped_step(stage.name, reason))
    return Plan(nodes, skipped)


ANSWER = Stage("answer", answer.answer)


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


def add_stages(graph: StateGraph, source: DepsSource, stages: Sequence[Stage]) -> list[str]:
    """Add each stage as a node bound to the dependencies; return their names in order."""
    for stage in stages:
        graph.add_node(stage.name, bind(stage.node, source))
    return [stage.name for stage in stages]


def add_answer(graph: StateGraph, source: DepsSource, table: Sequence[Stage]) -> None:
    """The answer node of a graph with this stage table: it traces the stages the table leaves
    out under the settings, each at its place in the table's order."""
    settings = source.base.settings
    graph.add_node(ANSWER.name, bind(ANSWER.node, source, answering=settings.generate.enabled,
                                     skipped=plan(table, settings).skipped,
                                     order=[stage.name for stage in table]))
