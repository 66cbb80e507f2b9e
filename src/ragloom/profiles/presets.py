"""Profile presets (DESIGN.md §3); each expands to a full settings layer.

Hybrid profiles fuse the legs with a convex combination of min-max-normalised scores (equal
weights, untuned) over 100 candidates per leg. In the ranking matrix (docs/benchmarks.md,
`benchmarks/retrieval.py --matrix`) it is at least as good as dense, BM25 and RRF k=60 in nDCG@10
on every collection built: SciFact at natural, sentence-size and whole-document chunks, HotpotQA,
CSV rows and a mixed long-Markdown + CSV-rows collection.

Sibling evidence is passage-local (`sibling_weight` 0.75 within `sibling_window` 300 characters
of a chunk's start): with sentence-size chunks a relevant passage matches in several neighbouring
chunks (SciFact nDCG@10 0.634 → 0.665), while chunks longer than the window (the default 1000-char
chunks, CSV rows, HotpotQA paragraphs) get no siblings, so no document wins on length or chunk
count. Whole-document sibling evidence (no window) gained at sentence size but lost on HotpotQA, on
the mixed long-Markdown + CSV-rows collection and on held-out data: it is not used.

`quality`, `corrective` and `adaptive` retrieve exactly as `balanced` does (`HYBRID`); `quality`
adds only the groundedness check: no offline second stage tried (pseudo-relevance feedback for BM25 or dense, passage-window BM25) gained measurably on
every collection. The fast profile stays dense-only: one int8 ONNX query embedding and one HNSW
search.
"""

from __future__ import annotations

import copy
from typing import Any

from ragloom.errors import UnknownNameError

HYBRID: dict[str, Any] = {"mode": "hybrid", "candidate_k": 100, "fusion": "convex",
                          "sibling_weight": 0.75, "sibling_window": 300}
"""The retrieval every hybrid profile shares (balanced, quality, corrective, adaptive)."""

PRESETS: dict[str, dict[str, Any]] = {
    "fast": {
        "retrieval": {"mode": "vector", "candidate_k": 20, "query_precision": "int8"},
        "rerank": {"name": "none"},
        "groundedness": {"enabled": False},
    },
    "balanced": {"retrieval": HYBRID, "groundedness": {"enabled": False}},
    "quality": {"retrieval": HYBRID, "groundedness": {"enabled": True}},
    "corrective": {"retrieval": HYBRID, "rerank": {"name": "none"}, "groundedness": {"enabled": True}},
    "adaptive": {"retrieval": HYBRID, "groundedness": {"enabled": True}},
}


def profile_names() -> list[str]:
    """Names of the registered profiles."""
    return sorted(PRESETS)


def preset(name: str) -> dict[str, Any]:
    """Return a copy of the settings layer for a profile, or fail listing the known ones."""
    if name not in PRESETS:
        raise UnknownNameError("profile", name, profile_names())
    return copy.deepcopy(PRESETS[name])
