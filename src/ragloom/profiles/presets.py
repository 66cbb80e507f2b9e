"""Profile presets (DESIGN.md §3); each expands to a full settings layer.

Hybrid profiles fuse the legs with a convex combination of min-max-normalised scores (equal
weights) rather than RRF: measured on SciFact train (809 q) nDCG@10 0.726 vs RRF k=60 0.706, and on
HotpotQA (40 q) 0.822 vs 0.786 (docs/benchmarks.md). `retrieval.fusion: rrf` (k = rrf_k) remains.

Hybrid profiles also score sibling evidence (weight 0.75) over 100 candidates (DESIGN.md says 50
for balanced; the deeper pool is what lets sibling evidence work): with sentence-size chunks (103k)
SciFact nDCG@10 rises 0.629 → 0.672, at the natural size it is neutral (0.725 → 0.728). Quality
keeps a deeper pool than balanced (150). The fast profile stays dense-only: one int8 ONNX query
embedding (~2 ms faster than float32 here, nDCG@10 0.678 vs 0.674 natural, 0.623 vs 0.620 at 103k)
and one HNSW search.
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
                      "sibling_weight": 0.75},
        "groundedness": {"enabled": False},
    },
    "quality": {
        "retrieval": {"mode": "hybrid", "candidate_k": 150, "fusion": "convex",
                      "sibling_weight": 0.75},
        "groundedness": {"enabled": True},
    },
    "corrective": {
        "retrieval": {"mode": "hybrid", "candidate_k": 100, "fusion": "convex",
                      "sibling_weight": 0.75},
        "rerank": {"name": "none"},
        "groundedness": {"enabled": True},
    },
    "adaptive": {
        "retrieval": {"mode": "hybrid", "candidate_k": 100, "fusion": "convex",
                      "sibling_weight": 0.75},
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
