"""The screen's one scoring policy: the detectors' signals to a verdict, clean, suspicious or rejected.

The score is the highest `raise` signal, held under the lowest `cap`, plus every `add`; a row of a
table stays below quarantine. From `SUSPICIOUS_SCORE` a document is flagged, from
`QUARANTINE_SCORE` it is quarantined (`rejected`); the signal names and evidence of every detector
travel with the verdict.
"""

from __future__ import annotations

from ragloom.ingestion.injection.detector import Signal
from ragloom.ingestion.verdict import ValidationResult

QUARANTINE_SCORE = 1.0
"""A document scoring this much is quarantined: high confidence that it performs an injection."""
SUSPICIOUS_SCORE = 0.45
"""From this score up to QUARANTINE_SCORE a document is kept but flagged `suspicious`."""
MENTION_CAP = 0.9
"""The highest score of a document whose hits are all mentions, a bare command or a lone
override: flagged at most, never quarantined by them alone."""
DATA_TYPES = frozenset(("csv",))
"""Documents that are rows of a table: a cell is data (a list of attack prompts is a common
benign table), so a row is at most `suspicious`, never quarantined by its text alone."""


def decide(signals: list[Signal], *, table_row: bool = False) -> ValidationResult:
    """The verdict on a document from its detectors' signals (`table_row`: a row of a data table)."""
    score = max((s.score for s in signals if s.effect == "raise"), default=0.0)
    caps = [s.score for s in signals if s.effect == "cap"]
    if caps:
        score = min(score, *caps)
    for signal in signals:
        if signal.effect == "add":
            score += signal.score
    if table_row:
        score = min(score, MENTION_CAP)
    names = sorted({name for s in signals for name in s.names})
    evidence = [line for s in signals for line in s.evidence]
    return _verdict(score, names, evidence)


def _verdict(score: float, signals: list[str], evidence: list[str]) -> ValidationResult:
    shown = ", ".join(signals)
    if score >= QUARANTINE_SCORE:
        return ValidationResult(status="rejected", signals=signals, score=round(score, 3),
                                evidence=evidence,
                                reason=f"likely prompt injection (score {score:.2f}): {shown}")
    if score >= SUSPICIOUS_SCORE:
        return ValidationResult(status="suspicious", signals=signals, score=round(score, 3),
                                evidence=evidence,
                                reason=f"possible prompt injection (score {score:.2f}): {shown}")
    return ValidationResult(status="clean", signals=signals, score=round(score, 3),
                            evidence=evidence, reason="no injection signals above threshold")
