"""The incremental ingestion graph: plan → load → validate → chunk → embed → upsert → record ⟲ → finalize."""

from __future__ import annotations

import functools
import itertools
from typing import Any

from langgraph.graph import END, START, StateGraph

from ragloom.nodes import ingest as nodes
from ragloom.nodes.ingest import IngestDeps, IngestInput, IngestOutput, IngestState
from ragloom.stores.lock import collection_lock


def build_ingest_graph(deps: IngestDeps) -> StateGraph:
    """Wire the ingestion nodes with their dependencies bound; returns the uncompiled graph."""
    graph = StateGraph(IngestState, input_schema=IngestInput, output_schema=IngestOutput)
    stages = ("plan", "load", "validate", "chunk", "embed", "upsert", "record", "finalize")
    for name in stages:
        graph.add_node(name, functools.partial(getattr(nodes, name), deps=deps))
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", nodes.route_next_batch,
                                {"load": "load", "finalize": "finalize"})
    for left, right in itertools.pairwise(stages[1:7]):
        graph.add_edge(left, right)
    graph.add_conditional_edges("record", nodes.route_next_batch,
                                {"load": "load", "finalize": "finalize"})
    graph.add_edge("finalize", END)
    return graph


def build_locked_ingest_graph(deps: IngestDeps) -> StateGraph:
    """The ingestion graph as one subgraph node that runs under the per-collection lock, as
    `ragloom ingest` does: for served graphs, where a caller cannot take the lock around a run."""
    inner = build_ingest_graph(deps).compile(name="ingest")
    lock_path = deps.paths.lock_file(deps.collection)

    def ingest(state: IngestState) -> dict[str, Any]:
        with collection_lock(lock_path):
            return inner.invoke(state)

    graph = StateGraph(IngestState, input_schema=IngestInput, output_schema=IngestOutput)
    graph.add_node("ingest", ingest)
    graph.add_edge(START, "ingest")
    graph.add_edge("ingest", END)
    return graph
