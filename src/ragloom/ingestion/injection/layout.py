"""Layout: a folded text split into paragraphs that remember their context, and its quoted spans.

`lay_out` folds a text (`normalize.fold`, letter-spaced runs closed up) and splits it into
paragraphs — plain prose, a fenced or indented code block, a blockquote — with the quoted spans
inside them, so a rule hit can tell *talking about* an attack (quoted, fenced) from *performing*
one. Every pattern here is linear-time.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from ragloom.ingestion.injection.normalize import despace, fold, obfuscation

Context = str  # "prose" | "code" | "quote"

FENCE_LINE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)
"""A Markdown code-fence line (``` or ~~~)."""
_QUOTE_LINE = re.compile(r"^ {0,3}>")
_QUOTE_MARKS = re.compile(r"^[ \t]{0,3}(?:>[ \t]?){1,8}")
"""The `>` marks that open a blockquote line: blanked (same length) once the line is known to be a
quote, so a phrase wrapped over two quoted lines reads as one."""
_INDENTED = re.compile(r"^(?: {4}|\t)")


@dataclass
class Paragraph:
    """A run of lines with one context, as offsets into the folded text."""

    start: int
    end: int
    context: Context
    obfuscation: set[str] = field(default_factory=set)


@dataclass
class Layout:
    """A folded text with its paragraphs and quoted spans, for locating rule hits."""

    text: str
    paragraphs: list[Paragraph]
    quotes: list[tuple[int, int]]

    def __post_init__(self) -> None:
        """Index the paragraph starts for lookups by offset."""
        self._starts = [p.start for p in self.paragraphs]

    def paragraph_at(self, pos: int) -> int:
        """Index of the paragraph that contains position pos."""
        return max(0, bisect.bisect_right(self._starts, pos) - 1)

    def quoted(self, start: int, end: int) -> bool:
        """True when the span [start, end) lies mostly inside quotation marks or backticks."""
        i = bisect.bisect_right(self.quotes, (start, len(self.text))) - 1
        return i >= 0 and self.quotes[i][0] <= start and self.quotes[i][1] >= (start + end) // 2


_QUOTE_PAIRS = (('"', '"'), ("`", "`"), ("<<", ">>"), (",,", '"'), ("\u201e", "\u201c"))


def _quoted_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """Spans between paired quotation marks in text[start:end] (straight quotes pair in order)."""
    spans: list[tuple[int, int]] = []
    for opening, closing in _QUOTE_PAIRS:
        pos = start
        while True:
            i = text.find(opening, pos, end)
            if i < 0:
                break
            j = text.find(closing, i + len(opening), end)
            if j < 0:
                break
            spans.append((i, j + len(closing)))
            pos = j + len(closing)
    pos = start
    while True:  # single quotes: an opening one follows a non-letter, a closing one precedes one
        i = text.find("'", pos, end)
        if i < 0:
            break
        if i > start and text[i - 1].isalnum():
            pos = i + 1
            continue
        j = i + 1
        while True:
            j = text.find("'", j, end)
            if j < 0 or j + 1 >= end or not text[j + 1].isalnum():
                break
            j += 1
        if j < 0:
            break
        spans.append((i, j + 1))
        pos = j + 1
    return spans


def lay_out(raw: str, vocabulary: frozenset[str]) -> Layout:
    """Fold raw text and split it into paragraphs by blank lines, fences and quote markers."""
    raw_lines = raw.split("\n")
    folded_lines = fold(raw).split("\n")
    if len(folded_lines) != len(raw_lines):  # NFKC never adds or drops newlines; be safe anyway
        folded_lines = [fold(line).replace("\n", " ") for line in raw_lines]
    pieces: list[str] = []
    paragraphs: list[Paragraph] = []
    quotes: list[tuple[int, int]] = []
    offset = 0
    in_fence = False
    current: Paragraph | None = None
    previous_blank = True
    for raw_line, line in zip(raw_lines, folded_lines, strict=True):
        fence = bool(FENCE_LINE.match(line))
        if fence:
            in_fence = not in_fence
        if in_fence or fence:
            context = "code"
        elif _QUOTE_LINE.match(line):
            context = "quote"
        elif _INDENTED.match(line) and (previous_blank or (current and current.context == "code")):
            context = "code"
        else:
            context = "prose"
        if context == "quote":
            line = _QUOTE_MARKS.sub(lambda m: " " * len(m.group()), line)
        blank = not line.strip()
        line, spaced = despace(line, vocabulary) if not blank else (line, False)
        if blank:
            if current is not None:
                paragraphs.append(current)
                current = None
        elif current is None or current.context != context:
            if current is not None:
                paragraphs.append(current)
            current = Paragraph(offset, offset, context)
        if current is not None:
            current.end = offset + len(line)
        if current is not None and not raw_line.isascii():
            current.obfuscation |= obfuscation(raw_line)
        if current is not None and spaced:
            current.obfuscation.add("letter_spacing")
        pieces.append(line)
        offset += len(line) + 1
        previous_blank = blank
    if current is not None:
        paragraphs.append(current)
    text = "\n".join(pieces)
    for paragraph in paragraphs:
        if paragraph.context == "prose":
            quotes.extend(_quoted_spans(text, paragraph.start, paragraph.end))
    quotes.sort()
    return Layout(text, paragraphs or [Paragraph(0, len(text), "prose")], quotes)


def in_code(text: str, start: int) -> bool:
    """Whether text[start] stands in inline code (an odd number of backticks before it on its
    line), an indented line or a fenced block."""
    line_start = text.rfind("\n", 0, start) + 1
    if text.count("`", line_start, start) % 2 or text.startswith("    ", line_start):
        return True
    return len(FENCE_LINE.findall(text, 0, line_start)) % 2 == 1
