"""Profile presets (DESIGN.md §3); each expands to a full settings layer."""

from __future__ import annotations

import copy
from typing import Any

from ragloom.errors import UnknownNameError

PRESETS: dict[str, dict[str, Any]] = {
    "fast": {
        "retrieval": {"mode": "vector", "candidate_k": 20},
        "rerank": {"name": "none"},
        "groundedness": {"enabled": False},
    },
    "balanced": {
        "retrieval": {"mode": "hybrid", "candidate_k": 50, "fusion": "rrf", "rrf_k": 60},
        "groundedness": {"enabled": False},
    },
    "quality": {
        "retrieval": {"mode": "hybrid", "candidate_k": 100, "fusion": "rrf", "rrf_k": 60},
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
