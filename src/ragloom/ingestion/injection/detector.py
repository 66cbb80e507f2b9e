"""The interface between the screen and its detectors: what a detector reads and what it reports.

A `Detector` reads a document once normalised (`Reading`: each channel raw and laid out) and
reports `Signal`s; the scoring policy (`policy.decide`) alone turns signals into a verdict. The
rule detector, the disguise, chat-turn and link detectors implement it today; a model-based
detector plugs in the same way (`screen.screen(doc, detectors=…)`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal, Protocol

from ragloom.ingestion.injection.layout import Layout
from ragloom.state import SourceDocument

Effect = Literal["raise", "cap", "add"]
"""How the policy combines a signal's score: the document's score is the highest `raise`, held
under the lowest `cap`, plus every `add`."""


class OutOfTime(Exception):
    """The per-document scan budget is spent."""


@dataclass(frozen=True)
class Signal:
    """What a detector found: the signal names it reports, a score, its effect, the evidence."""

    names: frozenset[str]
    score: float
    effect: Effect = "raise"
    evidence: tuple[str, ...] = ()


@dataclass(frozen=True)
class Reading:
    """A document as the detectors read it: its channels, raw and laid out, and the deadline."""

    document: SourceDocument
    texts: list[tuple[str, str]]
    layouts: list[tuple[str, Layout]]
    deadline: float

    def remaining(self) -> float:
        """Seconds left before the deadline; raises `OutOfTime` when none are."""
        return remaining(self.deadline)


def remaining(deadline: float) -> float:
    """Seconds left before a `time.monotonic` deadline; raises `OutOfTime` when none are."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise OutOfTime
    return left


class Detector(Protocol):
    """Reads a document and reports what it found, for the policy to weigh."""

    name: str

    def detect(self, reading: Reading) -> list[Signal]:
        """The signals this detector finds in a reading (none when it finds nothing)."""
        ...
