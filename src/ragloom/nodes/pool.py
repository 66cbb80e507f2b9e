"""What the retrieval stages search for."""

from __future__ import annotations

from ragloom.state import RagState


def retrieval_text(state: RagState) -> str:
    """What the retrieval stages search for: the probe (a rewrite, a hop), else the question."""
    return state.get("probe") or state["question"]
