"""Profile presets (DESIGN.md §3); each expands to a full settings layer.

Hybrid profiles fuse the legs with a convex combination of min-max-normalised scores (equal
weights) rather than RRF: measured on SciFact train (809 q) nDCG@10 0.726 vs RRF k=60 0.706, and on
HotpotQA (40 q) 0.822 vs 0.786 (docs/benchmarks.md). `retrieval.fusion: rrf` (k = rrf_k) remains.
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
        "retrieval": {"mode": "hybrid", "candidate_k": 50, "fusion": "convex"},
        "groundedness": {"enabled": False},
    },
    "quality": {
        "retrieval": {"mode": "hybrid", "candidate_k": 100, "fusion": "convex"},
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
