"""Answer repair: every sentence of a chat model's answer cites a passage that supports it.

Each claim (a sentence with content words) is checked with the shared claim-support rule
(`nodes/support.py`): a sentence whose own markers support it is kept as written; an uncited or
mis-cited sentence that some passage supports gets that passage's marker; a sentence no passage
supports is dropped (or kept uncited, `generate.unsupported: flag`). When no claim is left supported
the caller answers extractively. Sentences without content words ("Yes.") are kept unmarked;
questions (a small model echoing a FAQ heading or the prompt) and copied headings or titles (as
for extractive answers, a bare heading is never a claim) are dropped, and Markdown heading or list
markup copied from a passage is removed; a marker followed by a capitalised word ends a sentence. Before any of this the generate
node removes what a small model copies from the prompt layout (`strip_echoes`): a copied passage
header such as `[2] (faq.md)` is not a citation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from ragloom.nodes.support import SupportScorer
from ragloom.nodes.text import markers_in, strip_markers, tokenize, words
from ragloom.sentences import split_sentences

if TYPE_CHECKING:
    from ragloom.providers.embeddings import TextEmbedder

_MARKUP = re.compile(r"^\s*(?:#{1,6}\s+|[-*+•]\s+|>\s+)+")
_ECHOED_HEADER = re.compile(r"\[\s*\d+\s*\]\s*\([^()\n]{1,160}\)")
"""The prompt's passage header (`[2] (faq.md)`) copied into a reply: not a citation."""
_SOURCE_LABEL = re.compile(
    r"\((?:[^()\s]+\.(?:md|markdown|txt|rst|pdf|csv|html?|jsonl))\)", re.IGNORECASE)
_INLINE_HEADING = re.compile(r"(?:(?<=\s)|^)#{1,6}\s+")
_RUN_ON = re.compile(r"(\[\d+(?:\s*,\s*\d+)*\])[ \t]*(?:\n\s*)?(?=[A-Z`\"“(])")
"""A marker followed by a capitalised word with no punctuation between (`Title [1] The ...`): a
sentence boundary in a small model's run-on reply."""
_LINE_START = re.compile(r"\n(?=[ \t]+\S)")
"""An indented reply line is its own item (a copied list of headings); other line breaks may wrap
a sentence."""
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_TERMINAL = re.compile(r"[.!?;:…]['\"”’)\]]*$")
MAX_HEADING_WORDS = 8
ATTRIBUTED = "attributed"
EXTRACTIVE_FALLBACK = "extractive_fallback"
UNCHANGED = "none"


class Repair(NamedTuple):
    """The repaired text and what was done to it."""

    text: str
    kept: int
    attributed: int
    corrected: int
    unsupported: list[str]

    @property
    def supported(self) -> int:
        """Claims that now cite a supporting passage."""
        return self.kept + self.attributed + self.corrected

    @property
    def action(self) -> str:
        """`none` when every claim already cited support, else `attributed`."""
        changed = self.attributed or self.corrected or self.unsupported
        return ATTRIBUTED if changed else UNCHANGED


def strip_echoes(reply: str) -> str:
    """The reply without what a small model copies from the prompt layout: passage headers
    (`[2] (faq.md)`), source labels and Markdown heading marks."""
    text = _ECHOED_HEADER.sub(" ", reply)
    text = _SOURCE_LABEL.sub(" ", text)
    return _INLINE_HEADING.sub("", text).strip()


def _squash(text: str) -> str:
    """Lowercase words only, for comparing a claim with heading lines."""
    return " ".join(words(text))


def passage_headings(passages: Sequence[str], titles: Sequence[str] = ()) -> set[str]:
    """The headings and titles of the passages (Markdown heading lines, first lines, titles)."""
    found = {_squash(t) for t in titles if t}
    for text in passages:
        found |= {_squash(m.group(1)) for m in _HEADING_LINE.finditer(text)}
        first = text.strip().split("\n", 1)[0]
        if first and not _TERMINAL.search(first.strip()):
            found.add(_squash(first))
    return found - {""}


def is_bare_heading(claim: str, headings: set[str]) -> bool:
    """A copied heading or title, not a claim: one of the passages' headings, or a short
    Title Case line without end punctuation made only of their words (`Lumen Hub Guide`)."""
    text = claim.strip()
    if _squash(text) in headings:
        return True
    tokens = text.split()
    vocabulary = {w for h in headings for w in h.split()}
    return (not _TERMINAL.search(text) and 0 < len(tokens) <= MAX_HEADING_WORDS
            and all(t[:1].isupper() or not t[:1].isalpha() for t in tokens)
            and set(words(text)) <= vocabulary)


def _with_markers(claim: str, markers: Sequence[int]) -> str:
    """The claim (markers removed) with its markers before its final punctuation."""
    body = claim.rstrip()
    end = len(body)
    while end and body[end - 1] in ".!?;:'\"”’)":
        end -= 1
    group = ", ".join(str(m) for m in markers)
    return f"{body[:end].rstrip()} [{group}]{body[end:]}"


def repair_draft(
    draft: str,
    passages: Sequence[str],
    allowed: Sequence[int],
    *,
    embedder: TextEmbedder | None = None,
    keep_unsupported: bool = False,
    titles: Sequence[str] = (),
) -> Repair:
    """Check each sentence of draft against the passages (marker n = passages[n - 1]); cite the
    supporting passage among `allowed` markers, drop or keep unsupported claims uncited; copied
    headings and titles (the passages' own, or `titles`) are never claims and are dropped."""
    scorer = SupportScorer(passages, embedder)
    headings = passage_headings(passages, titles)
    draft = _LINE_START.sub("\n\n", _RUN_ON.sub(lambda m: f"{m.group(1)}.\n\n", draft))
    pool = [m - 1 for m in allowed if 1 <= m <= len(passages)]
    out: list[str] = []
    kept = attributed = corrected = 0
    unsupported: list[str] = []
    for sentence in split_sentences(draft):
        text = _MARKUP.sub("", sentence.text)
        claim = strip_markers(text)
        if claim.rstrip("'\"”’) ").endswith("?") or is_bare_heading(claim, headings):
            unsupported.append(claim)
            continue
        if not tokenize(claim):
            if any(ch.isalnum() for ch in claim):
                out.append(claim)
            continue
        written = list(dict.fromkeys(markers_in(sentence.text)))
        cited = [m - 1 for m in written if m - 1 in pool]
        if cited and scorer.assess(claim, cited).supported:
            kept += 1
            same = len(cited) == len(written)
            out.append(text if same else _with_markers(claim, [i + 1 for i in cited]))
            continue
        best, support = scorer.best(claim, pool)
        if support.supported:
            corrected += bool(cited)
            attributed += not cited
            out.append(_with_markers(claim, [best + 1]))
        else:
            unsupported.append(claim)
            if keep_unsupported:
                out.append(claim)
    return Repair(" ".join(out), kept, attributed, corrected, unsupported)
