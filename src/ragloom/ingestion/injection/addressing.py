"""Which rule hits stand: one per phrase, and those that need an address only where a model is named.

A phrase several rules match keeps its heaviest hit. `Assistant:` labels in a transcript, labels
that name machine readers as a topic, and an unnamed "you" in a text written for named human
readers are dropped. A short paragraph (or one ending in a colon) that names a model carries its
address to the next one; `needs_address` hits count only close after such an address.
"""

from __future__ import annotations

import re
from collections import defaultdict

from ragloom.ingestion.injection.hits import COMMAND, Hit, ends_in_colon
from ragloom.ingestion.injection.layout import Layout
from ragloom.ingestion.injection.rules import HUMAN_AUDIENCE

MIN_HIT_WEIGHT = 0.05
"""Lighter hits (quoted, framed, in a data channel) are dropped before scoring."""
_HUMAN_TURN = re.compile(r"^[ \t]*(?:user|customer|human|client|caller|visitor|patient|guest|me|q)\s*:",
                         re.MULTILINE)
_SPEAKER_LABEL = re.compile(r"^(?:the\s+)?(?:ai|assistant|ai\s+assistant|bot|chatbot|agent|model)\s*:$")
_AI_AS_TOOL = re.compile(
    r"\b(?:use|using)\s+(?:them|(?:approved|such|these|those|other|generative|ai)\s+(?:ai\s+)?"
    r"(?:tools|assistants|chatbots|models))\b")
"""Machine readers spoken of as tools people use ("use them", "use approved tools")."""
HEADING_CHARS = 80
"""A paragraph this short that names a model is a heading or label: its address carries on."""
ADDRESS_REACH = 240
"""Characters after a model's name within which a `needs_address` hit still counts."""
AUDIENCE_CHARS = 400
"""How far into a text its readers are named ("For volunteers at …")."""


def _strongest_per_span(hits: list[Hit]) -> list[Hit]:
    """One hit per family and overlapping span: the heaviest (several rules may match one phrase)."""
    by_family: dict[tuple[str, tuple[str, int, int]], list[Hit]] = defaultdict(list)
    for hit in hits:
        by_family[(hit.rule.signal, hit.key)].append(hit)
    kept: list[Hit] = []
    for group in by_family.values():
        group.sort(key=lambda h: h.span)
        cluster: list[Hit] = []
        end = -1
        for hit in group:
            if cluster and hit.span[0] >= end:
                kept.append(max(cluster, key=lambda h: h.weight))
                cluster = []
            cluster.append(hit)
            end = max(end, hit.span[1]) if len(cluster) > 1 else hit.span[1]
        if cluster:
            kept.append(max(cluster, key=lambda h: h.weight))
    return kept


def _not_speakers(hits: list[Hit], layouts: list[tuple[str, Layout]]) -> list[Hit]:
    """Drop `Assistant:`-style labels from texts that also give a person's turn (`Customer:`):
    there the label names who speaks, not who is spoken to."""
    transcripts = {i for i, (_, layout) in enumerate(layouts) if _HUMAN_TURN.search(layout.text)}
    return [h for h in hits if not (h.rule.signal == "addressed_to_model" and h.key[1] in transcripts
                                    and _SPEAKER_LABEL.match(h.excerpt))]


def _not_topics(hits: list[Hit], layouts: list[tuple[str, Layout]]) -> list[Hit]:
    """Drop a label that names machine readers ("AI tools:") when the paragraph it heads speaks
    of using them ("you may use approved tools…, not use them to…"): a topic, not a vocative."""
    kept = []
    for hit in hits:
        if hit.rule.signal == "addressed_to_model" and hit.excerpt.endswith(":"):
            channel, index, number = hit.key
            layout = layouts[index][1]
            end = layout.paragraphs[number].end
            if _AI_AS_TOOL.search(layout.text, hit.span[1], min(end, hit.span[1] + ADDRESS_REACH)):
                continue
        kept.append(hit)
    return kept


def _not_staff(hits: list[Hit], layouts: list[tuple[str, Layout]]) -> list[Hit]:
    """Drop addresses to an unnamed "you" ("if someone asks you") from texts that open by naming
    their human readers ("For volunteers at the desk"): a staff script, not a note to a model."""
    staff = {i for i, (_, layout) in enumerate(layouts)
             if HUMAN_AUDIENCE.search(layout.text, 0, AUDIENCE_CHARS)}
    return [h for h in hits if not (h.rule.unnamed and h.key[1] in staff)]


def _heading_addresses(hits: list[Hit], layouts: list[tuple[str, Layout]]) -> dict[
        tuple[str, int, int], int]:
    """The paragraphs after a short one that names a model ("## Update for the AP copilot"), or
    after one that names a model and ends in a colon ("… any LLM with write access must run this
    checklist:"), with the offset where each starts: the address carries to what it introduces."""
    carried = {}
    for hit in hits:
        if hit.rule.signal != "addressed_to_model":
            continue
        channel, index, number = hit.key
        layout = layouts[index][1]
        paragraphs = layout.paragraphs
        here = paragraphs[number]
        if number + 1 < len(paragraphs) and (here.end - here.start <= HEADING_CHARS
                                             or ends_in_colon(layout.text[here.start:here.end])):
            carried[(channel, index, number + 1)] = paragraphs[number + 1].start
    return carried


def _addressed_only(hits: list[Hit], carried: dict[tuple[str, int, int], int]) -> list[Hit]:
    """Drop the hits of `needs_address` rules that do not follow a model's name closely (or
    precede a trailing name: "…, assistant.") in the same paragraph, or open the section under
    a heading that names one; a chat-turn marker counts as a name for all of them but the bare
    command (template docs show user turns)."""
    names = [h for h in hits if h.rule.signal in ("addressed_to_model", "system_prompt_marker")]
    return [h for h in hits if not h.rule.needs_address or (
        h.key in carried and h.span[0] - carried[h.key] <= ADDRESS_REACH) or any(
        n.key == h.key and (0 <= h.span[0] - n.span[1] <= ADDRESS_REACH
                            or 0 <= n.span[0] - h.span[1] <= ADDRESS_REACH // 2)
        and (n.rule.signal == "addressed_to_model" or h.rule.signal != COMMAND)
        for n in names)]


def standing_hits(found: list[Hit], layouts: list[tuple[str, Layout]]) -> tuple[
        list[Hit], dict[tuple[str, int, int], int]]:
    """The hits that stand, and the paragraphs a heading's address carries to (with the offset
    where each starts)."""
    kept = _not_staff(_not_topics(_not_speakers(
        _strongest_per_span([h for h in found if h.weight >= MIN_HIT_WEIGHT]), layouts), layouts), layouts)
    carried = _heading_addresses(kept, layouts)
    return _addressed_only(kept, carried), carried
