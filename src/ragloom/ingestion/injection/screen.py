"""The injection screen: a document normalised once, read by each detector, judged by the policy.

`read` gathers a document's channels (`channels`: visible, hidden, metadata, decoded) and lays
each out (`layout`: folded, paragraphs, quotes); every `Detector` reports `Signal`s on that
reading; `policy.decide` turns them into the verdict. `scan_injection` runs the screen under a
per-document time budget and rejects a document that exhausts it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ragloom.ingestion.injection.channels import channels
from ragloom.ingestion.injection.detector import Detector, OutOfTime, Reading, remaining
from ragloom.ingestion.injection.disguise import DisguiseDetector
from ragloom.ingestion.injection.layout import lay_out
from ragloom.ingestion.injection.links import LinkDetector
from ragloom.ingestion.injection.policy import DATA_TYPES, decide
from ragloom.ingestion.injection.rule_detector import RuleDetector
from ragloom.ingestion.injection.rules import VOCABULARY
from ragloom.ingestion.injection.turns import TurnDetector
from ragloom.ingestion.verdict import ValidationResult, rejected
from ragloom.state import SourceDocument

DEFAULT_BUDGET_S = 5.0
BUDGET_CHARS = 1_000_000
"""The scan budget is per document, and grows with documents longer than this many characters."""
DETECTORS: tuple[Detector, ...] = (RuleDetector(), DisguiseDetector(), TurnDetector(),
                                   LinkDetector())
"""The detectors of the default screen, in the order their evidence is shown."""


def read(doc: SourceDocument, deadline: float) -> Reading:
    """A document's channels, each laid out for the detectors."""
    texts = channels(doc)
    layouts = []
    for channel, text in texts:
        remaining(deadline)
        layouts.append((channel, lay_out(text, VOCABULARY)))
    return Reading(doc, texts, layouts, deadline)


def screen(doc: SourceDocument, deadline: float,
           detectors: Sequence[Detector] = DETECTORS) -> ValidationResult:
    """The policy's verdict on what the detectors find in a document, by a `time.monotonic`
    deadline (`OutOfTime` or `TimeoutError` past it)."""
    reading = read(doc, deadline)
    signals = [signal for detector in detectors for signal in detector.detect(reading)]
    return decide(signals, table_row=doc.metadata.get("source_type") in DATA_TYPES)


def scan_injection(doc: SourceDocument, *, budget_s: float = DEFAULT_BUDGET_S) -> ValidationResult:
    """Score prompt-injection signals in a document's visible, hidden and encoded text.

    The scan may take budget_s seconds, and as much again per million characters beyond the first.
    """
    size = len(doc.text) + sum(len(str(h)) for h in doc.metadata.get("hidden_text") or [])
    allowed = budget_s * max(1.0, size / BUDGET_CHARS)
    try:
        return screen(doc, time.monotonic() + allowed)
    except (OutOfTime, TimeoutError):
        return rejected(
            "scan_timeout",
            f"the injection scan did not finish within its budget of {allowed:.3g} s "
            f"(ingest.scan_budget_s = {budget_s:g} s per {BUDGET_CHARS:,} characters); a document "
            "this slow to scan is held back for review",
        )
