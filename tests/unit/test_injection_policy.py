"""The screen's interface: detectors report signals on one reading, one policy weighs them all."""

from __future__ import annotations

import time

from ragloom.ingestion.injection.detector import Reading, Signal
from ragloom.ingestion.injection.policy import decide
from ragloom.ingestion.injection.screen import DETECTORS, screen
from ragloom.state import SourceDocument


def test_the_policy_takes_the_highest_raise_under_the_lowest_cap_plus_every_add() -> None:
    verdict = decide([Signal(frozenset({"a"}), 0.5), Signal(frozenset({"b"}), 1.2),
                      Signal(frozenset(), 0.9, "cap"), Signal(frozenset({"c"}), 0.15, "add", ("trick",))])
    assert (verdict.status, verdict.score) == ("rejected", 1.05)
    assert verdict.signals == ["a", "b", "c"] and verdict.evidence == ["trick"]
    assert decide([Signal(frozenset({"a"}), 0.5)]).status == "suspicious"
    assert decide([Signal(frozenset({"a"}), 1.5)], table_row=True).status == "suspicious"
    assert decide([]).status == "clean"


class _Model:
    """A stand-in for a model-based detector: one signal, whatever the text."""

    name = "model"

    def __init__(self) -> None:
        self.channels: list[list[str]] = []

    def detect(self, reading: Reading) -> list[Signal]:
        """Note the channels read; report one flagging signal."""
        self.channels.append([channel for channel, _ in reading.layouts])
        return [Signal(frozenset({"model"}), 0.6, evidence=("model: 0.97",))]


def test_a_model_detector_plugs_in_beside_the_rules() -> None:
    doc = SourceDocument(doc_id="d", source_id="d", text="Opening hours: 9 to 5.\n\n<!-- a note -->\n")
    assert screen(doc, time.monotonic() + 5).status == "clean"
    model = _Model()
    verdict = screen(doc, time.monotonic() + 5, (*DETECTORS, model))
    assert verdict.status == "suspicious" and verdict.signals == ["model"]
    assert verdict.evidence == ["model: 0.97"] and model.channels == [["visible", "hidden"]]
