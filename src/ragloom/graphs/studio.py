"""Graphs named in langgraph.json, for `langgraph dev` / LangGraph Studio.

Each is the registry's compiled graph for its profile (the same object the CLI, the Python API
and the service run), with settings resolved by the one resolver from the environment
(RAGLOOM_DATA_DIR, RAGLOOM_COLLECTION, RAGLOOM_CONFIG, ...); a run may read another collection of
the same data directory through its runtime context (`context={"collection": "..."}`) and set
its loop budget in its input (`max_iterations`, up to 10). Graphs compile without a checkpointer
(the server brings its own). Nothing imports this module.
"""

from __future__ import annotations

from ragloom.registry import ingest_graph, query_graph
from ragloom.settings import load_settings

fast = query_graph(load_settings("fast"))
balanced = query_graph(load_settings("balanced"))
quality = query_graph(load_settings("quality"))
corrective = query_graph(load_settings("corrective"))
adaptive = query_graph(load_settings("adaptive"))
retrieval = query_graph(load_settings("balanced"), retrieval_only=True)
ingest = ingest_graph(load_settings(), locked=True)
