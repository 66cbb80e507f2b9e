"""The example crews named in langgraph.json, for `langgraph dev` / LangGraph Studio.

Settings come from the environment (RAGLOOM_DATA_DIR, RAGLOOM_CONFIG, ...) through the one
resolver; the packaged example crews read the configured collection of that data directory
(RAGLOOM_COLLECTION, else `default`, which `ragloom ingest PATH` fills).
Invoke with `{"inputs": {...}}`; the output is `{"result": CrewResult}`. Graphs compile without a
checkpointer (the server brings its own, per thread). Nothing imports this module.
"""

from __future__ import annotations

from ragloom.crews.loader import load_crew

crew_support = load_crew("support", checkpointer=None)
crew_research = load_crew("research", checkpointer=None)
crew_triage = load_crew("triage", checkpointer=None)
