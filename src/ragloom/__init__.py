"""ragloom: LangGraph-native retrieval-augmented generation.

The public face: `ingest`, `ask`, `retrieve`, `build_graph`, `as_retriever`. Importing ragloom is
cheap (each name is imported on first use) and changes nothing in the host process: environment
variables that libraries need (offline Hugging Face, no onnxruntime telemetry) are set only around
the calls that read them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ragloom.profiles.resolver import build_graph
    from ragloom.retriever import as_retriever
    from ragloom.runner import ask, ingest, retrieve
    from ragloom.settings import RagSettings, load_settings
    from ragloom.state import IngestionReport, RagAnswer

__version__ = "0.1.0"

_EXPORTS = {
    "ingest": "ragloom.runner",
    "ask": "ragloom.runner",
    "retrieve": "ragloom.runner",
    "build_graph": "ragloom.profiles.resolver",
    "as_retriever": "ragloom.retriever",
    "load_settings": "ragloom.settings",
    "RagSettings": "ragloom.settings",
    "RagAnswer": "ragloom.state",
    "IngestionReport": "ragloom.state",
}

__all__ = [
    "IngestionReport",
    "RagAnswer",
    "RagSettings",
    "as_retriever",
    "ask",
    "build_graph",
    "ingest",
    "load_settings",
    "retrieve",
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
