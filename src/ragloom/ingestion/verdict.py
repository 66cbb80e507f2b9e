"""A validator's verdict: clean, suspicious or rejected, with its signals, reason and evidence."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

Status = Literal["clean", "suspicious", "rejected"]


class ValidationResult(BaseModel):
    """A validator's outcome: a status, machine-readable signals, a sentence and the evidence."""

    status: Status
    signals: list[str] = Field(default_factory=list)
    reason: str = ""
    score: float = 0.0
    evidence: list[str] = Field(default_factory=list)


def rejected(signal: str, reason: str) -> ValidationResult:
    """A rejection with one signal and the sentence that explains it."""
    return ValidationResult(status="rejected", signals=[signal], reason=reason)
