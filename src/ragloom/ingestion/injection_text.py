"""What the injection scan reads: a document's text normalised, laid out, and decoded where hidden.

`fold` maps text to the form the rules are written for: invisible characters removed, NFKC,
case-folded, accents stripped, look-alike letters from other scripts (Cyrillic, Greek, fullwidth,
mathematical alphabets) folded to Latin by `decancer_py`. `lay_out` splits a folded text into
paragraphs that remember their context — plain prose, a fenced or indented code block, a
blockquote — and the quoted spans inside them, so a rule hit can tell *talking about* an attack
(quoted, fenced) from *performing* one. Letter-spaced runs (`I g n o r e`, `i.g.n.o.r.e`) are closed
up. `payloads` finds text hidden by encoding (base64, hex, percent-encoding, HTML entities, Unicode
tag characters) and returns what it decodes to when that is readable text. Every pattern here is
linear-time: bounded repeats, no nested unbounded quantifiers.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import html
import re
import unicodedata
import urllib.parse
from collections import Counter
from dataclasses import dataclass, field

import decancer_py
import regex

Context = str  # "prose" | "code" | "quote"

_INVISIBLE = regex.compile(
    "[\\p{Cf}\u034f\u115f\u1160\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0\U000e0000-\U000e0fff]"
)
"""Every invisible format character (Unicode category Cf: zero-width, bidi, tag characters, word
joiners, invisible operators, soft hyphen…), variation selectors, the combining grapheme joiner
and the Hangul fillers: removed before matching."""
_ZERO_WIDTH = regex.compile(
    "[\u034f\u180e\u200b-\u200d\u2060-\u2064\ufe00-\ufe0f\ufeff\U000e0100-\U000e01ef]")
"""Characters with no width that split a word when they stand between letters (zero-width
spaces and joiners, word joiner, invisible operators, variation selectors); a soft hyphen is
left out of the count: hyphenated prose has many."""
_SELECTOR = regex.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]")
"""Variation selectors: they split a word only after a Latin letter; after a kanji (Japanese
names, `葛󠄀`) or an emoji they choose its glyph."""
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_TAG_RUN = re.compile("(?<![\U0001f3f4\U000e0020-\U000e007e])[\U000e0020-\U000e007e]{3,}")
"""Unicode tag characters spelling text (ASCII smuggling); emoji flag sequences follow U+1F3F4."""
_MARKS = regex.compile(r"\p{M}+")
_LOOKALIKE = regex.compile(
    "[\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0455\u0458\u0501\u051b\u051d"
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0425\u0406\u0405\u0408"
    "\u03bf\u03bd\u03c1\u0399\u0391\u0392\u0395\u0396\u0397\u039a\u039c\u039d\u039f\u03a1"
    "\u03a4\u03a5\u03a7\u0578\u0585\u0570]"
)
"""Cyrillic, Greek and Armenian letters that look like Latin ones (а е о р с у х і ѕ, ο ν ρ, …);
Greek letters used as symbols in science (α β γ μ) are not among them."""
_LATIN = regex.compile(r"\p{Latin}")
_WORD = regex.compile(r"\w+")
_STYLED_LETTERS = re.compile("[\uff21-\uff3a\uff41-\uff5a\U0001d400-\U0001d7ff\u24b6-\u24e9]")
FENCE_LINE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)
"""A Markdown code-fence line (``` or ~~~)."""
_QUOTE_LINE = re.compile(r"^ {0,3}>")
_QUOTE_MARKS = re.compile(r"^[ \t]{0,3}(?:>[ \t]?){1,8}")
"""The `>` marks that open a blockquote line: blanked (same length) once the line is known to be a
quote, so a phrase wrapped over two quoted lines reads as one."""
_INDENTED = re.compile(r"^(?: {4}|\t)")
_SPACED_RUN = re.compile(
    r"(?<![\w])(?P<run>[a-z](?:(?:[ ]{1,4}|[ ]{0,2}[.\-_*\u00b7|/]{1,2}[ ]{0,2}|[ ]?[.\-_*\u00b7|/][ ]{1,2}"
    r"[.\-_*\u00b7|/][ ]?)[a-z](?![a-z0-9])){4,})(?:[ .\-_*\u00b7|/]{1,2}(?=[:;,!?]))?"
)
"""Single letters joined by spaces, dots, dashes, underscores, stars, middle dots, bars or
slashes; the joint after the last letter, before a colon or comma (`a.s.s.i.s.t.a.n.t.:`,
`t o o l s :`), goes with the run, so the label reads `assistant:`."""
_JOINT = re.compile(r"[^a-z]+")
_BASE64_RUN = re.compile(
    r"(?:(?<![A-Za-z0-9+/=_-])|(?<=[A-Za-z0-9_]=))[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/=_-])")
"""A base64 (or base64url) run standing alone or as the value of `KEY=`."""
_HEX_RUN = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){12,}(?![0-9A-Fa-f])"
                      r"|(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]){11,}[0-9A-Fa-f]{2}(?![0-9A-Fa-f])"
                      r"|(?:\\x[0-9A-Fa-f]{2}){12,}")
"""Hex-encoded bytes: a run of digit pairs (`4173…`), pairs split by spaces or colons (`41 73 …`),
or `\\x41\\x73…` escapes."""
_NOT_HEX = re.compile(r"[^0-9A-Fa-f]")
_PERCENT_RUN = re.compile(r"(?:[\w.~+-]{0,24}%[0-9A-Fa-f]{2}){4,}[\w.~+-]{0,24}")
"""Percent-encoded text: escapes in a row (`%49%67%6E…`) or words joined by them (`stop%20following`)."""
_ENTITY_RUN = re.compile(r"(?:&#(?:x[0-9a-f]{1,6}|\d{1,7});){6,}", re.IGNORECASE)
_PRINTABLE_SHARE = 0.95
_MANY_ZERO_WIDTH = 8
_MAX_PAYLOADS = 64


def _decancer(text: str) -> str:
    return str(decancer_py.parse(text, retain_emojis=True, disable_bidi=True))


def fold(text: str) -> str:
    """Normalise text for matching; newlines are kept, so lines correspond to the input's."""
    text = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text)).casefold()
    if text.isascii():
        return text
    text = _MARKS.sub("", unicodedata.normalize("NFKD", text)).replace("\t", " ")
    return "\n".join(_decancer(line) if not line.isascii() else line for line in text.split("\n"))


def obfuscation(raw: str) -> set[str]:
    """The tricks a raw passage uses to hide words from a keyword filter."""
    found: set[str] = set()
    if raw.isascii():
        return found
    if _TAG_RUN.search(raw):
        found.add("unicode_tags")
    zero_width = sum(1 for m in _ZERO_WIDTH.finditer(raw) if _between_letters(raw, m.start())
                     and (raw[m.start() - 1].isascii() or not _SELECTOR.match(m.group())))
    if zero_width >= _MANY_ZERO_WIDTH:
        found.add("zero_width_many")
    elif zero_width >= 3:
        found.add("zero_width")
    if _BIDI.search(raw):
        found.add("bidi_controls")
    if _STYLED_LETTERS.search(raw):
        found.add("styled_letters")
    mixed = 0
    for word in _WORD.finditer(raw):
        token = word.group()
        if not token.isascii() and _LATIN.search(token) and _LOOKALIKE.search(token):
            mixed += 1
    if mixed >= 2:
        found.add("homoglyphs")
    return found


def _between_letters(text: str, i: int) -> bool:
    return 0 < i < len(text) - 1 and text[i - 1].isalnum() and (
        text[i + 1].isalnum() or bool(_ZERO_WIDTH.match(text[i + 1]))
    )


def _close_run(run: str, vocabulary: frozenset[str]) -> str:
    """`s-y-s-t-e-m  o-v-e-r` → `system over`: the joint between most letters joins, any other
    joint (`  `, `. .`, ` / `) parts words; a run joined the same way throughout is segmented."""
    letters = _JOINT.split(run)
    joints = _JOINT.findall(run)
    common = Counter(joints).most_common(1)[0][0]
    if all(joint == common for joint in joints):
        return segment("".join(letters), vocabulary)
    words = [letters[0]]
    for joint, letter in zip(joints, letters[1:], strict=True):
        if joint == common:
            words[-1] += letter
        else:
            words.append(letter)
    return " ".join(words)


def despace(text: str, vocabulary: frozenset[str]) -> tuple[str, bool]:
    """Close up letter-spaced runs (`i g n o r e`, `i.g.n.o.r.e`); True when one was found."""
    closed = _SPACED_RUN.sub(lambda m: _close_run(m.group("run"), vocabulary), text)
    return closed, closed != text


def segment(squashed: str, vocabulary: frozenset[str]) -> str:
    """Split a run of letters into the longest known words, greedily (unknown letters kept)."""
    longest = max((len(w) for w in vocabulary), default=1)
    out: list[str] = []
    unknown: list[str] = []
    i = 0
    while i < len(squashed):
        for size in range(min(longest, len(squashed) - i), 1, -1):
            if squashed[i : i + size] in vocabulary:
                if unknown:
                    out.append("".join(unknown))
                    unknown = []
                out.append(squashed[i : i + size])
                i += size
                break
        else:
            unknown.append(squashed[i])
            i += 1
    if unknown:
        out.append("".join(unknown))
    return " ".join(out)


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


def _readable(decoded: bytes) -> str | None:
    """Decoded bytes as text when they read as words (UTF-8, printable, with spaces)."""
    try:
        text = decoded.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if len(text) < 12 or text.count(" ") < 2:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\t")
    return text if printable >= _PRINTABLE_SHARE * len(text) else None


def _base64_text(run: str) -> str | None:
    padded = run + "=" * (-len(run) % 4)
    try:
        decoded = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _readable(decoded)


def payloads(raw: str) -> list[tuple[str, str]]:
    """(encoding, decoded text) for each encoded run in raw that decodes to readable text."""
    found: list[tuple[str, str]] = []
    for match in _TAG_RUN.finditer(raw):
        found.append(("unicode_tags", "".join(chr(ord(c) - 0xE0000) for c in match.group())))
    for match in _BASE64_RUN.finditer(raw):
        text = _base64_text(match.group())
        if text:
            found.append(("base64", text))
        if len(found) >= _MAX_PAYLOADS:
            return found
    for match in _HEX_RUN.finditer(raw):
        text = _readable(bytes.fromhex(_NOT_HEX.sub("", match.group())))
        if text:
            found.append(("hex", text))
        if len(found) >= _MAX_PAYLOADS:
            return found
    for match in _PERCENT_RUN.finditer(raw):
        text = _readable(urllib.parse.unquote_to_bytes(match.group()))
        if text:
            found.append(("percent_encoding", text))
    for match in _ENTITY_RUN.finditer(raw):
        text = html.unescape(match.group())
        if _readable(text.encode("utf-8", "replace")):
            found.append(("html_entities", text))
    return found[:_MAX_PAYLOADS]
