"""Reading the verdicts a run has recorded (routers and nodes alike)."""

from __future__ import annotations

from ragloom.state import RagState


def last_verdict(state: RagState, stage: str) -> str | None:
    """The last verdict a stage recorded in this run, or None."""
    return next((v.verdict for v in reversed(state.get("verdicts", [])) if v.stage == stage), None)
