"""The incremental ingestion graph: plan → load → validate → chunk → embed → upsert → record ⟲ → finalize."""

from __future__ import annotations

import functools

from langgraph.graph import END, START, StateGraph

from ragloom.nodes import ingest as nodes
from ragloom.nodes.ingest import IngestDeps, IngestInput, IngestOutput, IngestState


def build_ingest_graph(deps: IngestDeps) -> StateGraph:
    """Wire the ingestion nodes with their dependencies bound; returns the uncompiled graph."""
    graph = StateGraph(IngestState, input_schema=IngestInput, output_schema=IngestOutput)
    stages = ("plan", "load", "validate", "chunk", "embed", "upsert", "record", "finalize")
    for name in stages:
        graph.add_node(name, functools.partial(getattr(nodes, name), deps=deps))
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", nodes.route_next_batch,
                                {"load": "load", "finalize": "finalize"})
    for left, right in zip(stages[1:6], stages[2:7]):
        graph.add_edge(left, right)
    graph.add_conditional_edges("record", nodes.route_next_batch,
                                {"load": "load", "finalize": "finalize"})
    graph.add_edge("finalize", END)
    return graph
