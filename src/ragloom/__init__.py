"""ragloom: LangGraph-native retrieval-augmented generation.

The public face: `ingest`, `ask`, `retrieve`, `build_graph`, `run_graph`, `as_retriever`,
`load_crew`, `run_crew`.
"""

from __future__ import annotations

import os

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

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
    "build_graph": "ragloom.profiles.resolver",
    "as_retriever": "ragloom.retriever",
    "load_crew": "ragloom.crews.loader",
    "run_crew": "ragloom.crews.loader",
    "load_settings": "ragloom.settings",
    "RagSettings": "ragloom.settings",
    "RagAnswer": "ragloom.state",
    "IngestionReport": "ragloom.state",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    """Import the public functions lazily so `import ragloom` stays cheap."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragloom' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
