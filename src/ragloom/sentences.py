"""The one sentence splitter: trimmed sentences with exact offsets, cut by a named rule.

Callers pin three different boundaries, so the rule is an explicit option of one function, not
three functions:

- `prose` (the default; answers, drafts and passages: extractive answers, groundedness, support,
  refine, repair, the judge): a sentence ends at `.`, `!` or `?` (closing quotes and brackets and
  trailing `[n]` citation markers stay attached) before whitespace and a word that is not
  lowercase, never after an abbreviation or an initial, and always after a citation marker; a
  blank line and the line break before a list item or heading end one too.
- `chunk` (the sentence and semantic chunkers): an end mark and its closing quotes or brackets,
  whitespace, then anything but a lowercase letter; a blank line; the line break before a
  heading, list item or table row. No exceptions for abbreviations: chunk boundaries are stored,
  and changing them re-chunks every collection.
- `lines` (the semantic injection screen's windows): every end mark followed by whitespace, and
  every line break.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal, NamedTuple

SentenceRule = Literal["prose", "chunk", "lines"]

CHUNK_BREAK = re.compile(
    r"(?<=[.!?])[\"'\u201d\u2019)\]]*\s+(?=[^a-z\s])"
    r"|\n[ \t]*\n\s*"
    r"|\n(?=[ \t]*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|\|))"
)
"""The `chunk` rule's separator; the chunkers' recursive sentence level cuts after it too."""

_LINE_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_SENTENCE_END = re.compile(r"[.!?]+['\"”’)\]]*(?:[ \t]*\[\d+(?:\s*,\s*\d+)*\])*")
_BLOCK_BREAK = re.compile(r"\n[ \t]*\n|\n(?=[ \t]*(?:[-*•]\s|#{1,6}\s|\d+[.)]\s))")
_ABBREVIATIONS = frozenset(
    {"e.g", "i.e", "etc", "vs", "mr", "mrs", "ms", "dr", "prof", "st", "fig", "no", "cf", "al"}
)
_CITED_END = re.compile(r"\[\d+(?:\s*,\s*\d+)*\]\s*[.!?]+$")
"""A sentence end right after a citation marker (`... [2].`): always a boundary, even before a
lowercase word (an extracted unit such as `model: Lumen Max; ...`)."""


class Sentence(NamedTuple):
    """A sentence and its character offsets in the text it was split from."""

    text: str
    start: int
    end: int


def _is_abbreviation(text: str, dot_at: int) -> bool:
    """True when the period at dot_at ends an abbreviation or an initial."""
    if text[dot_at] != ".":
        return False
    head = text[:dot_at]
    word = head.rsplit(None, 1)[-1] if head.strip() else ""
    word = word.lstrip("([\"'").lower()
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def _prose_cuts(text: str) -> list[int]:
    """Offsets where a sentence of prose ends."""
    cuts = {m.start() for m in _BLOCK_BREAK.finditer(text)}
    for match in _SENTENCE_END.finditer(text):
        rest = text[match.end() :]
        follower = rest.lstrip()
        cited = bool(_CITED_END.search(text[: match.end()])) and rest != follower
        if not cited and rest and (rest == follower or (follower and follower[0].islower())):
            continue
        if _is_abbreviation(text, match.start()):
            continue
        cuts.add(match.end())
    return sorted(cuts)


def _cuts_after(pattern: re.Pattern[str]) -> Callable[[str], list[int]]:
    """Offsets right after each match of a separator pattern."""
    return lambda text: [m.end() for m in pattern.finditer(text)]


_CUTS: dict[str, Callable[[str], list[int]]] = {
    "prose": _prose_cuts,
    "chunk": _cuts_after(CHUNK_BREAK),
    "lines": _cuts_after(_LINE_BREAK),
}


def split_sentences(text: str, *, rule: SentenceRule = "prose") -> list[Sentence]:
    """Split text into sentences, whitespace trimmed, with offsets: `text[s.start:s.end] == s.text`."""
    sentences: list[Sentence] = []
    begin = 0
    for cut in [*_CUTS[rule](text), len(text)]:
        span = text[begin:cut]
        stripped = span.strip()
        if stripped:
            start = begin + (len(span) - len(span.lstrip()))
            sentences.append(Sentence(stripped, start, start + len(stripped)))
        begin = cut
    return sentences
