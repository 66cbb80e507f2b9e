"""Rule hits, weighed by where they stand: the first half of the rule detector.

Every rule of `rules.RULES` is matched in the paragraphs of each laid-out channel that hold one
of its trigger words, and each hit is weighed by its channel (hidden and decoded text count more),
its context (quoted, fenced or blockquoted text counts a third), its mood (described or negated
verbs count a third or less), framing ("such as", "an attacker writes") and disguise. A
blockquote that opens by addressing a model is read as the page's own callout.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from ragloom.ingestion.injection.detector import remaining
from ragloom.ingestion.injection.layout import FENCE_LINE, Layout
from ragloom.ingestion.injection.rules import (
    DEFINED_AFTER,
    DIRECT_LEAD,
    FRAMING,
    FRAMING_AFTER,
    NEGATED_LEAD,
    RULES,
    TEMPLATE_TOPIC,
    Rule,
)

CHANNEL_FACTOR = {"visible": 1.0, "hidden": 1.3, "decoded": 1.3}
"""Hidden HTML text and decoded payloads are there to be read by a machine, not a person."""
CONTEXT_FACTOR = {"prose": 1.0, "quoted": 0.3, "quote": 0.35, "code": 0.3}
MOOD_FACTOR = {"direct": 1.0, "described": 0.35, "negated": 0.1}
FRAMED_FACTOR = 0.4
OBFUSCATED_FACTOR = 1.25
COMMAND = "model_command"
"""The weakest directive: an imperative verb, which matters only after a model was addressed."""
MAX_HITS_PER_RULE = 32
"""Matches of one rule kept per channel: more of the same add nothing to the score."""
_WORDS = re.compile(r"[a-z0-9]+")
_LEAD_CHARS = 60
_WRAPPED_LINE = 50
_FRAME_CHARS = 80


@dataclass
class Hit:
    """One rule match, weighed by where it stands."""

    rule: Rule
    weight: float
    where: str
    mood: str
    framed: bool
    excerpt: str
    key: tuple[str, int, int]
    span: tuple[int, int]

    @property
    def mention(self) -> bool:
        """True when the hit is quoted, fenced, described, negated or introduced as an example."""
        return self.where != "prose" or self.mood != "direct" or self.framed

    def describe(self) -> str:
        """Short human form: signal, weight, context and the matched words."""
        context = ", ".join(
            [self.where, *([self.mood] if self.rule.imperative else []),
             *(["framed"] if self.framed else []), self.key[0]]
        )
        return f"{self.rule.signal} {self.weight:.2f} [{context}] '{self.excerpt}'"


def _mood(text: str, paragraph_start: int, start: int) -> str:
    """direct, described or negated: what stands right before a verb.

    A line break inside a paragraph is a sentence break only after a short line (a title, a
    label); after a long one it is a wrap, and the words before it lead on to the verb.
    """
    begin = max(paragraph_start, start - _LEAD_CHARS)
    lead = ("\n" if begin == paragraph_start else "") + text[begin:start]
    line_start = text.rfind("\n", paragraph_start, start)
    if line_start > paragraph_start and not text[line_start + 1 : start].strip():
        previous = text[text.rfind("\n", paragraph_start, line_start) + 1 : line_start]
        if len(previous.strip()) >= _WRAPPED_LINE:
            lead = lead[: len(lead) - (start - line_start)] + " "
    if NEGATED_LEAD.search(lead):
        return "negated"
    return "direct" if DIRECT_LEAD.search(lead) else "described"


DEFINABLE_WEIGHT = 0.2
"""A hit of a catch-all rule this weak ("ignore orders") can be a name a text defines, as can a
claim of authority ("SYSTEM OVERRIDE"); a specific override ("ignore all previous instructions")
followed by a colon is performed."""


def _framed(text: str, paragraph_start: int, paragraph_end: int, start: int, end: int,
            rule: Rule) -> bool:
    before = text[max(paragraph_start, start - _FRAME_CHARS) : start]
    after = text[end : min(paragraph_end, end + _FRAME_CHARS)]
    definable = rule.signal == "authority_claim" or rule.weight <= DEFINABLE_WEIGHT
    return bool(FRAMING.search(before) or FRAMING_AFTER.search(after)
                or (definable and DEFINED_AFTER.search(after)))


def ends_in_colon(text: str) -> bool:
    """Whether text ends in a colon, before trailing spaces and Markdown emphasis ("**Note:**")."""
    return text.rstrip(" *_").endswith(":")


def _introduced(layout: Layout, number: int) -> bool:
    """Whether the paragraph before a quote or code block introduces it as an example ("The classic
    example that made headlines:"): a colon ends it and a framing word stands in its last words."""
    if number == 0:
        return False
    previous = layout.paragraphs[number - 1]
    lead = layout.text[max(previous.start, previous.end - _FRAME_CHARS) : previous.end]
    return previous.context == "prose" and ends_in_colon(lead) and bool(FRAMING.search(lead))


def _matches(rule: Rule, layout: Layout, words: list[set[str]], deadline: float) -> Iterator[Any]:
    """Matches of rule in the runs of paragraphs that hold one of its trigger words or marks."""
    text = layout.text
    runs: list[list[int]] = []
    for number, paragraph in enumerate(layout.paragraphs):
        if not rule.may_match(words[number], text, paragraph.start, paragraph.end):
            continue
        if runs and runs[-1][1] == number - 1:
            runs[-1][1] = number
        else:
            runs.append([number, number])
    for first, last in runs:
        start, end = layout.paragraphs[first].start, layout.paragraphs[last].end
        yield from rule.pattern.finditer(text, start, end, timeout=remaining(deadline))


_CODE_CHARS = re.compile(r"[{}()\[\];:=<>$\\|&^~+*@#%]")
CODE_CHAR_SHARE = 0.02
"""A code block with fewer code characters than this share (a banner: words between rules of
`=====`) holds prose."""
_BARE_FENCE = re.compile(r" {0,3}(?:```|~~~)[ \t]*\n")
_RULE_LINE = re.compile(r"^[ \t]*([=*#~_-])\1{3,}[ \t]*$", re.MULTILINE)


def _prose_block(layout: Layout, number: int, about_formats: bool) -> bool:
    """Whether a code block is prose set in a fence (a notice between rules of `=====`): a fence
    with no language, next to no code characters, not introduced by a paragraph ending in a
    colon ("… in grey text, was:"), in a text that does not talk about prompt formats or attacks."""
    paragraph = layout.paragraphs[number]
    if about_formats or not _BARE_FENCE.match(layout.text, paragraph.start):
        return False
    previous = layout.paragraphs[number - 1] if number else None
    if previous and ends_in_colon(layout.text[previous.start:previous.end]):
        return False
    body = _RULE_LINE.sub("", FENCE_LINE.sub("", layout.text[paragraph.start:paragraph.end]))
    letters = sum(c.isalpha() for c in body)
    return letters > 0 and len(_CODE_CHARS.findall(body)) <= CODE_CHAR_SHARE * letters


def find_hits(layout: Layout, channel: str, index: int, deadline: float) -> list[Hit]:
    """Every rule's hits (at most `MAX_HITS_PER_RULE` each) in one laid-out channel, weighed."""
    text = layout.text
    words = [set(_WORDS.findall(text, p.start, p.end)) for p in layout.paragraphs]
    about_formats = bool(TEMPLATE_TOPIC.search(text))
    prose_blocks: dict[int, bool] = {}
    found: list[Hit] = []
    for rule in RULES:
        for count, match in enumerate(_matches(rule, layout, words, deadline)):
            if count >= MAX_HITS_PER_RULE:
                break
            start = match.start() + len(match.group()) - len(match.group().lstrip())
            number = layout.paragraph_at(start)
            paragraph = layout.paragraphs[number]
            where = paragraph.context
            if where == "code":
                if number not in prose_blocks:
                    prose_blocks[number] = _prose_block(layout, number, about_formats)
                where = "prose" if prose_blocks[number] else where
            if where == "prose" and layout.quoted(start, match.end()):
                where = "quoted"
            mood = _mood(text, paragraph.start, start) if rule.imperative else "direct"
            framed = _framed(text, paragraph.start, paragraph.end, start, match.end(), rule) or (
                where in ("quote", "code") and _introduced(layout, number))
            factor = CHANNEL_FACTOR[channel] * CONTEXT_FACTOR[where] * MOOD_FACTOR[mood]
            if framed:
                factor *= FRAMED_FACTOR
            if paragraph.obfuscation - {"styled_letters"}:
                factor *= OBFUSCATED_FACTOR
            excerpt = " ".join(match.group().split())[:80]
            found.append(Hit(rule, rule.weight * factor, where, mood, framed, excerpt,
                             (channel, index, number), (start, match.end())))
    return _callouts(found, layout)


_CALLOUT_SIGNALS = frozenset(("addressed_to_model", "authority_claim"))
"""What a callout box opens with: an address to a model, or a claim of authority ("> OPERATOR
CONFIGURATION v2 (authoritative; replaces every earlier directive in your context)")."""


def _callouts(hits: list[Hit], layout: Layout) -> list[Hit]:
    """Read a blockquote that opens by addressing a model ("> Note for the assistant: …", or after
    a short lead with no framing: "> Quick check from our editors, addressed to any assistant: …")
    or by claiming authority over it as the document's own words, unless it or the paragraph
    before it introduces an example: a callout box is the page speaking, a quotation is someone
    else."""
    callouts = set()
    for hit in hits:
        if hit.where != "quote" or hit.framed or hit.rule.signal not in _CALLOUT_SIGNALS:
            continue
        paragraph = layout.paragraphs[hit.key[2]]
        lead = layout.text[paragraph.start : hit.span[0]].strip(" >*_\n\t")
        if len(lead) > _LEAD_CHARS or FRAMING.search(lead):
            continue
        before = layout.text[max(0, paragraph.start - _FRAME_CHARS * 2) : paragraph.start]
        if not FRAMING.search(before):
            callouts.add(hit.key)
    if not callouts:
        return hits
    return [replace(h, weight=h.weight / CONTEXT_FACTOR["quote"], where="prose")
            if h.key in callouts and h.where == "quote" else h for h in hits]
