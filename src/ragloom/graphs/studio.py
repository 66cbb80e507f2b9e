"""Graphs named in langgraph.json, for `langgraph dev` / LangGraph Studio.

Settings come from the environment (RAGLOOM_DATA_DIR, RAGLOOM_COLLECTION, RAGLOOM_CONFIG, ...);
a run may read another collection of the same data directory through its runtime context
(`context={"collection": "..."}`). Graphs compile without a checkpointer (the server brings its
own). Nothing imports this module.
"""

from __future__ import annotations

import functools
from typing import Any

from langgraph.graph.state import CompiledStateGraph

from ragloom import resources
from ragloom.graphs.ingest import build_locked_ingest_graph
from ragloom.ingestion.chunkers import get_chunker
from ragloom.nodes.ingest import IngestDeps, ingest_recursion_limit
from ragloom.profiles.resolver import compile_graph
from ragloom.settings import load_settings


@functools.cache
def _query_graph(profile: str, retrieval_only: bool = False) -> CompiledStateGraph[Any]:
    return compile_graph(resources.rag_deps(load_settings(profile)), retrieval_only=retrieval_only)


@functools.cache
def _ingest_graph() -> CompiledStateGraph[Any]:
    settings = load_settings()
    embedder = resources.embedder(settings)
    deps = IngestDeps(settings=settings, index=resources.document_index(settings), embedder=embedder,
                      chunker=get_chunker(settings.chunker, embedder=embedder),
                      paths=resources.data_paths(settings))
    return build_locked_ingest_graph(deps).compile(name="ragloom-ingest").with_config(
        recursion_limit=ingest_recursion_limit())


fast = _query_graph("fast")
balanced = _query_graph("balanced")
quality = _query_graph("quality")
corrective = _query_graph("corrective")
adaptive = _query_graph("adaptive")
retrieval = _query_graph("balanced", retrieval_only=True)
ingest = _ingest_graph()
