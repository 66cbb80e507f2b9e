"""The disguise detector: tricks that hide words from a keyword filter count on their own."""

from __future__ import annotations

from ragloom.ingestion.injection.detector import Reading, Signal
from ragloom.ingestion.injection.layout import Layout

OBFUSCATION_WEIGHT = {
    "unicode_tags": 0.5,
    "homoglyphs": 0.3,
    "zero_width_many": 0.5,
    "zero_width": 0.25,
    "bidi_controls": 0.15,
}
"""Hiding tricks count on their own too; invisible ones report as `invisible_unicode`."""
_SIGNAL_OF_TRICK = {
    "unicode_tags": "invisible_unicode",
    "zero_width": "invisible_unicode",
    "zero_width_many": "invisible_unicode",
    "bidi_controls": "invisible_unicode",
    "homoglyphs": "homoglyphs",
    "letter_spacing": "letter_spacing",
    "styled_letters": "styled_letters",
}


def tricks(layouts: list[tuple[str, Layout]]) -> set[str]:
    """The hiding tricks (`normalize.obfuscation`, letter spacing) of every paragraph laid out."""
    found: set[str] = set()
    for _, layout in layouts:
        for paragraph in layout.paragraphs:
            found |= paragraph.obfuscation
    return found


class DisguiseDetector:
    """Invisible characters, look-alike letters, letter spacing: an `add` signal of their weights."""

    name = "disguise"

    def detect(self, reading: Reading) -> list[Signal]:
        """One `add` signal naming the tricks the document uses, or none."""
        used = tricks(reading.layouts)
        if not used:
            return []
        return [Signal(frozenset(_SIGNAL_OF_TRICK[t] for t in used),
                       sum(OBFUSCATION_WEIGHT.get(trick, 0.0) for trick in used), "add",
                       tuple(f"obfuscation: {t}" for t in sorted(used)))]
