"""ragloom: LangGraph-native retrieval-augmented generation.

The public face: `ingest`, `ask`, `retrieve`, `stream`, `build_graph`, `run_graph`,
`as_retriever`, `load_crew`, `run_crew`, `list_collections`, `show_collection`,
`delete_collection` (and the async `aask`, `aretrieve`, `astream`). Importing
ragloom is cheap (each name is imported on first use) and changes nothing in the host process:
environment variables that libraries need (offline Hugging Face, no onnxruntime telemetry) are set
only around the calls that read them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragloom.collections import delete_collection, list_collections, show_collection
    from ragloom.crews.loader import load_crew, run_crew
    from ragloom.registry import build_graph
    from ragloom.retriever import as_retriever
    from ragloom.runner import (
        aask,
        aretrieve,
        arun_graph,
        ask,
        astream,
        ingest,
        retrieve,
        run_graph,
        stream,
    )
    from ragloom.settings import RagSettings, load_settings
    from ragloom.state import IngestionReport, RagAnswer

__version__ = "0.1.0"

_EXPORTS = {
    "ingest": "ragloom.runner",
    "ask": "ragloom.runner",
    "retrieve": "ragloom.runner",
    "run_graph": "ragloom.runner",
    "arun_graph": "ragloom.runner",
    "aask": "ragloom.runner",
    "aretrieve": "ragloom.runner",
    "stream": "ragloom.runner",
    "astream": "ragloom.runner",
    "list_collections": "ragloom.collections",
    "show_collection": "ragloom.collections",
    "delete_collection": "ragloom.collections",
    "build_graph": "ragloom.registry",
    "as_retriever": "ragloom.retriever",
    "load_crew": "ragloom.crews.loader",
    "run_crew": "ragloom.crews.loader",
    "load_settings": "ragloom.settings",
    "RagSettings": "ragloom.settings",
    "RagAnswer": "ragloom.state",
    "IngestionReport": "ragloom.state",
}

# Written out (not `sorted(_EXPORTS)`) so linters and type checkers see the exported names.
__all__ = [
    "IngestionReport",
    "RagAnswer",
    "RagSettings",
    "aask",
    "aretrieve",
    "arun_graph",
    "as_retriever",
    "ask",
    "astream",
    "build_graph",
    "delete_collection",
    "ingest",
    "list_collections",
    "load_crew",
    "load_settings",
    "retrieve",
    "run_crew",
    "run_graph",
    "show_collection",
    "stream",
]


def __getattr__(name: str) -> object:
    """Import the public functions lazily so `import ragloom` stays cheap."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragloom' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    """Public names, for completion in interactive shells."""
    return sorted({*globals(), *__all__})
