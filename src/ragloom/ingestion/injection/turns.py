"""The chat-turn detector: a prompt format's turn markers staged in a document's running text."""

from __future__ import annotations

import regex

from ragloom.ingestion.injection.detector import Reading, Signal
from ragloom.ingestion.injection.layout import Layout
from ragloom.ingestion.injection.rules import TEMPLATE_TOPIC

_TURN_OPENER = regex.compile(
    r"<\|im_start\|>[ \t]*(system|user|assistant|developer|tool)\b"
    r"|<\|start_header_id\|>[ \t]*(system|user|assistant|developer|tool|ipython)\b"
    r"|<start_of_turn>[ \t]*(user|model|system|developer)\b"
    r"|<\|(system|user|assistant)\|>|\[/?(inst)\]|<</?[ \t]*(sys)[ \t]*>>"
    r"|^[ \t]*#{1,6}[ \t]*(?P<heading>system|user|assistant|human|instruction|response)[ \t]*:?[ \t]*$"
    r"|^[ \t]*(?P<label>human|assistant)[ \t]*:", regex.MULTILINE)
"""The opening of a chat turn in a model's prompt format (ChatML, Llama 2/3, Gemma, headings
such as `### System:` / `### User:`, `Human:` / `Assistant:` turns); the group names the role."""
_ROLE = {"inst": "user", "sys": "system", "model": "assistant", "human": "user",
         "response": "assistant", "instruction": "user"}
TURN_SUSPICIOUS = 0.6
TURN_REJECTED = 1.0
"""Scores for turn markers in the running text of a document that is not about prompt formats:
an exchange staged with a format's own tokens is quarantined, headings or labels are flagged."""


def staged_turns(layouts: list[tuple[str, Layout]]) -> tuple[set[str], bool]:
    """The chat roles whose turn markers stand in running text (not fenced, indented, quoted or in
    backticks) of a document that does not otherwise talk about prompt formats: a forged turn is
    there to be read by a model as its own prompt, whatever it says. Headings (`## System:`) and
    line labels (`Assistant:`) are common in other texts, so they count only as an exchange (a
    user's heading and an assistant's; both `Human:` and `Assistant:`). True with the roles when
    the prompt format's own tokens stage two roles or more: that is quarantined, the rest flagged.
    The tokens staging two roles inside a code block (a "log" pasted in an issue) are flagged too:
    a text that is not about prompt formats has no reason to show them; in hidden text (comments,
    markup, a JSON-LD string) quotation marks do not make them a quotation: nobody reads it."""
    roles: set[str] = set()
    fenced: set[str] = set()
    headings: set[str] = set()
    labels: set[str] = set()
    outside: list[str] = []
    for channel, layout in layouts:
        if channel == "decoded":
            continue
        text = layout.text
        for paragraph in layout.paragraphs:
            chunk = text[paragraph.start:paragraph.end]
            if paragraph.context == "code":
                fenced |= {_ROLE.get(r, r) for m in _TURN_OPENER.finditer(chunk)
                           if not (m.group("heading") or m.group("label"))
                           for r in m.groups() if r}
            found = [m for m in _TURN_OPENER.finditer(chunk) if paragraph.context == "prose"
                     and (channel == "hidden" or not layout.quoted(
                         max(0, paragraph.start + m.start() - 1), paragraph.start + m.start()))]
            for m in found:
                role = _ROLE.get(next(g for g in m.groups() if g), next(g for g in m.groups() if g))
                (headings if m.group("heading") else labels if m.group("label") else roles).add(role)
            outside.append(_TURN_OPENER.sub(" ", chunk) if found else chunk)
    exchange = (headings if {"user"} & headings and {"assistant"} & headings else set()) | (
        labels if len(labels) >= 2 else set())
    if len(fenced) < 2:
        fenced = set()
    if not (roles or exchange or fenced) or TEMPLATE_TOPIC.search("\n".join(outside)):
        return set(), False
    return roles | exchange | fenced, len(roles) >= 2


class TurnDetector:
    """Forged chat turns: quarantined when a format's own tokens stage two roles, else flagged."""

    name = "staged_turns"

    def detect(self, reading: Reading) -> list[Signal]:
        """One `raise` signal naming the staged roles, or none."""
        turns, staged = staged_turns(reading.layouts)
        if not turns:
            return []
        return [Signal(frozenset({"staged_turns"}), TURN_REJECTED if staged else TURN_SUSPICIOUS,
                       "raise", (f"staged chat turns (running text or a code block): "
                                 f"{', '.join(sorted(turns))}",))]
