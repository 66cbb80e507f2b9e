"""The rule detector: the rules' hits scored by paragraph and by document.

In a paragraph the signal families add up (a family's best hit fully, its second in part), with a
bonus when a model is addressed and asked something and when two kinds of directive meet; the
document scores its best paragraph plus part of the directives of the next three. A document
whose directives are all quoted, described or negated, or only a bare command, stays below
quarantine (`policy.MENTION_CAP`), and so does a lone override of some earlier text in plain view.
"""

from __future__ import annotations

import re
from collections import defaultdict

from ragloom.ingestion.injection.addressing import standing_hits
from ragloom.ingestion.injection.detector import Reading, Signal
from ragloom.ingestion.injection.disguise import tricks
from ragloom.ingestion.injection.hits import COMMAND, Hit, find_hits
from ragloom.ingestion.injection.policy import MENTION_CAP

SIGNAL_WEIGHT = 0.1
"""A hit at least this heavy (after its context factors) is a signal: it names the verdict, counts as
a directive or as a lone override, and marks hidden or decoded text."""
MENTION_EXTRA = 0.1
"""Ceiling for a document whose every hit is quoted, fenced, described or negated."""
SECOND_HIT = 0.3
"""Share of a family's second-best hit in a paragraph that adds to its best one."""
ADDRESS_BONUS = 0.4
"""Added to a paragraph that addresses a model *and* asks it to do something."""
DIRECTIVES_BONUS = 0.2
"""Added to a paragraph where two different kinds of directive meet (override and steering…)."""
STRONG_HIT = 0.5
"""A hit this heavy earns `DIRECTIVES_BONUS` for its paragraph without a model addressed."""
OTHER_PARAGRAPHS = 0.3
OTHER_PARAGRAPH_FLOOR = 0.3
"""Weaker paragraphs do not add up: a long document collects stray weak hits by chance."""
_DIRECTIVES = frozenset(
    ("instruction_override", "answer_steering", "secrecy", "role_play", "prompt_leak",
     "exfiltration", "agent_action", "encoded_instruction", "authority_claim", COMMAND)
)
_EVIDENCE = 4


def _paragraph_score(hits: list[Hit], addressed: float) -> tuple[float, float]:
    """(score, directive part) of one paragraph: families add up, the best hit of a family counts
    fully and the second in part; asking something (plainly: not quoted, described or framed)
    of a model that was addressed adds a bonus, and so do two kinds of directive together when
    a model was addressed or one of them is strong.

    A bare command (`model_command`: an imperative verb right after a model was named) never
    counts as a second kind of directive.
    """
    by_family: dict[str, list[float]] = defaultdict(list)
    for hit in hits:
        by_family[hit.rule.signal].append(hit.weight)
    total = directive = 0.0
    for family, weights in by_family.items():
        weights.sort(reverse=True)
        value = weights[0] + (SECOND_HIT * weights[1] if len(weights) > 1 else 0.0)
        total += value
        if family in _DIRECTIVES:
            directive += value
    asked = any(h.rule.signal in _DIRECTIVES and not h.mention for h in hits)
    if addressed and asked:
        total += ADDRESS_BONUS * addressed
        directive += ADDRESS_BONUS * addressed
    strong = addressed or max(h.weight for h in hits) >= STRONG_HIT
    if strong and len((_DIRECTIVES - {COMMAND}) & by_family.keys()) >= 2:
        total += DIRECTIVES_BONUS
        directive += DIRECTIVES_BONUS
    return total, directive


def _address(hits: list[Hit]) -> float:
    """How plainly a paragraph speaks to a model: its best address or chat-marker hit, relative."""
    return max(
        (h.weight / h.rule.weight for h in hits
         if h.rule.signal in ("addressed_to_model", "system_prompt_marker")),
        default=0.0,
    )


def _document_score(hits: list[Hit], carried: dict[tuple[str, int, int], int]) -> float:
    """The best paragraph, plus part of the directives in the next three."""
    groups: dict[tuple[str, int, int], list[Hit]] = defaultdict(list)
    for hit in hits:
        groups[hit.key].append(hit)
    scores = []
    for (channel, index, number), group in groups.items():
        previous = groups.get((channel, index, number - 1), [])
        addressed = max(_address(group), _address(
            [h for h in previous if h.rule.signal == "system_prompt_marker"
             or (channel, index, number) in carried]))
        scores.append(_paragraph_score(group, addressed))
    if not scores:
        return 0.0
    scores.sort(reverse=True)
    others = [directive for _, directive in scores[1:] if directive >= OTHER_PARAGRAPH_FLOOR]
    return scores[0][0] + OTHER_PARAGRAPHS * sum(sorted(others, reverse=True)[:3])


_SWEEPING = re.compile(
    r"\b(?:all|any|every|everything|above|your|you|system|todas|tous|toutes|alle|deine)\b")
"""Words that make an override sweep over whatever a reader was told, not one old version's steps."""


def _lone_override(hits: list[Hit]) -> bool:
    """True when the only signal is one visible override of some earlier text ("ignore the previous
    steps", not "ignore all your instructions"), with nothing asked and no model named: manuals
    say this to people, so (unless the text is disguised) it flags but does not quarantine."""
    strong = [h for h in hits if h.weight >= SIGNAL_WEIGHT]
    return (len(strong) == 1 and strong[0].rule.signal == "instruction_override"
            and strong[0].key[0] == "visible" and not _SWEEPING.search(strong[0].excerpt))


class RuleDetector:
    """The rules of `rules.RULES`, matched in every channel and scored as a whole."""

    name = "rules"

    def detect(self, reading: Reading) -> list[Signal]:
        """One `raise` signal with the document's rule score, the families found and the heaviest
        hits; a `cap` below quarantine when the only directive is a lone override in plain view."""
        found: list[Hit] = []
        for index, (channel, layout) in enumerate(reading.layouts):
            reading.remaining()
            found.extend(find_hits(layout, channel, index, reading.deadline))
        hits, carried = standing_hits(found, reading.layouts)
        score = _document_score(hits, carried)
        directives = [h for h in hits if h.weight >= SIGNAL_WEIGHT and h.rule.signal in _DIRECTIVES]
        if all(h.rule.signal == COMMAND for h in directives):  # a bare command: at most suspicious
            score = min(score, MENTION_CAP)
        if directives and all(h.mention for h in directives):  # cited attacks do not add up
            score = min(score, MENTION_CAP, max(h.weight for h in hits) + MENTION_EXTRA)
        names = {h.rule.signal for h in hits if h.weight >= SIGNAL_WEIGHT}
        if any(h.key[0] == "hidden" and h.weight >= SIGNAL_WEIGHT for h in hits):
            names.add("hidden_text")
        if any(h.key[0] == "decoded" and h.weight >= SIGNAL_WEIGHT for h in hits):
            names.add("encoded_payload")
        evidence = tuple(h.describe() for h in sorted(hits, key=lambda h: -h.weight)[:_EVIDENCE])
        signals = [Signal(frozenset(names), score, "raise", evidence)]
        if not tricks(reading.layouts) and _lone_override(hits):
            signals.append(Signal(frozenset(), MENTION_CAP, "cap"))
        return signals
