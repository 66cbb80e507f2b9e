"""Profile presets (DESIGN.md §3); each expands to a full settings layer.

Hybrid profiles fuse the legs with a convex combination of min-max-normalised scores (equal
weights, untuned) over 100 candidates per leg. In the ranking matrix (docs/benchmarks.md,
`benchmarks/retrieval.py --matrix`) it is at least as good as dense, BM25 and RRF k=60 in nDCG@10
on every collection built: SciFact at natural, sentence-size and whole-document chunks, HotpotQA,
CSV rows and a mixed long-Markdown + CSV-rows collection.

Sibling evidence (`retrieval.sibling_weight`) is off: it gains at sentence-size chunks but loses
on HotpotQA, on the mixed collection and on held-out SciFact test / whole documents, and a
component that wins on one dataset and loses on another stays off by default.

`quality` retrieves exactly as `balanced` does and adds the groundedness check: no offline second
stage tried (pseudo-relevance feedback for BM25 or dense, passage-window BM25) gained measurably on
every collection. The fast profile stays dense-only: one int8 ONNX query embedding and one HNSW
search.
"""

from __future__ import annotations

import copy
from typing import Any

from ragloom.errors import UnknownNameError

PRESETS: dict[str, dict[str, Any]] = {
    "fast": {
        "retrieval": {"mode": "vector", "candidate_k": 20, "query_precision": "int8"},
        "rerank": {"name": "none"},
        "groundedness": {"enabled": False},
    },
    "balanced": {
        "retrieval": {"mode": "hybrid", "candidate_k": 100, "fusion": "convex",
                      "sibling_weight": 0.0},
        "groundedness": {"enabled": False},
    },
    "quality": {
        "retrieval": {"mode": "hybrid", "candidate_k": 100, "fusion": "convex",
                      "sibling_weight": 0.0},
        "groundedness": {"enabled": True},
    },
}


def profile_names() -> list[str]:
    """Names of the registered profiles."""
    return sorted(PRESETS)


def preset(name: str) -> dict[str, Any]:
    """Return a copy of the settings layer for a profile, or fail listing the known ones."""
    if name not in PRESETS:
        raise UnknownNameError("profile", name, profile_names())
    return copy.deepcopy(PRESETS[name])
