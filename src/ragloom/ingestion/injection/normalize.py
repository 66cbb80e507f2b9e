"""Normalisation, the injection screen's language-independent first step: text as the rules read it.

`fold` maps text to the form the rules are written for: invisible characters removed, NFKC,
case-folded, accents stripped, look-alike letters from other scripts (Cyrillic, Greek, fullwidth,
mathematical alphabets) folded to Latin by `decancer_py`. `despace` closes up letter-spaced runs
(`I g n o r e`, `i.g.n.o.r.e`). `obfuscation` names the tricks a raw passage uses to hide words
from a keyword filter. Every pattern here is linear-time: bounded repeats, no nested unbounded
quantifiers.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

import decancer_py
import regex

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
TAG_RUN = re.compile("(?<![\U0001f3f4\U000e0020-\U000e007e])[\U000e0020-\U000e007e]{3,}")
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
_SPACED_RUN = re.compile(
    r"(?<![\w])(?P<run>[a-z](?:(?:[ ]{1,4}|[ ]{0,2}[.\-_*\u00b7|/]{1,2}[ ]{0,2}|[ ]?[.\-_*\u00b7|/][ ]{1,2}"
    r"[.\-_*\u00b7|/][ ]?)[a-z](?![a-z0-9])){4,})(?:[ .\-_*\u00b7|/]{1,2}(?=[:;,!?]))?"
)
"""Single letters joined by spaces, dots, dashes, underscores, stars, middle dots, bars or
slashes; the joint after the last letter, before a colon or comma (`a.s.s.i.s.t.a.n.t.:`,
`t o o l s :`), goes with the run, so the label reads `assistant:`."""
_JOINT = re.compile(r"[^a-z]+")
_MANY_ZERO_WIDTH = 8


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
    if TAG_RUN.search(raw):
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
