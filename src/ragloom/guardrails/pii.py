"""Personal data in text: e-mail addresses, phone numbers, IBANs and payment card numbers.

Candidates are found by pattern and kept only when they validate: phone numbers with Google's
libphonenumber rules (`phonenumbers`, strict grouping, dates left out: international numbers
anywhere, national ones for the given regions), IBANs with their country length and ISO 7064 mod-97 check (`python-stdnum`), card numbers
with the Luhn check (`python-stdnum`) and a known issuer prefix and length. A match carries a
normalised key (E.164 phone, compact IBAN or card digits, lower-case e-mail) so the same value can be
recognised in another text whatever its formatting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from ragloom.settings import DEFAULT_REGIONS, PII_KINDS, PiiKind

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?@"
    r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![\w-])"
)
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?:[ -]?[A-Za-z0-9]{4}){2,7}(?:[ -]?[A-Za-z0-9]{1,4})?"
                   r"(?![A-Za-z0-9])")
_CARD = re.compile(r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d-])")
_DIGIT_RUN = re.compile(r"\d[\d\s().+/-]{5,}\d")
_MARKER = re.compile(r"\[\d+(?:\s*[,;]\s*\d+)*\]")
_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}")
_CARD_PREFIXES: tuple[tuple[tuple[int, int], frozenset[int]], ...] = (
    ((4, 4), frozenset({13, 16, 19})),  # Visa
    ((51, 55), frozenset({16})), ((2221, 2720), frozenset({16})),  # Mastercard
    ((34, 34), frozenset({15})), ((37, 37), frozenset({15})),  # American Express
    ((6011, 6011), frozenset({16, 19})), ((644, 649), frozenset({16, 19})),
    ((65, 65), frozenset({16, 19})),  # Discover
    ((3528, 3589), frozenset({16, 19})),  # JCB
    ((300, 305), frozenset({14})), ((36, 36), frozenset({14})), ((38, 39), frozenset({14})),
    ((62, 62), frozenset({16, 17, 18, 19})),  # UnionPay
    ((50, 50), frozenset({16, 19})), ((56, 69), frozenset({16, 19})),  # Maestro
)
_LABELS = {"email": "[email redacted]", "phone": "[phone redacted]", "iban": "[IBAN redacted]",
           "card": "[card number redacted]"}


@dataclass(frozen=True)
class PiiMatch:
    """One validated piece of personal data: its kind, span, text and normalised key."""

    kind: PiiKind
    start: int
    end: int
    text: str
    key: str


def _card_issuer_ok(digits: str) -> bool:
    """True when the number's prefix and length belong to a known card issuer."""
    for (low, high), lengths in _CARD_PREFIXES:
        width = len(str(low))
        if len(digits) in lengths and low <= int(digits[:width]) <= high:
            return True
    return False


def _emails(text: str) -> Iterable[PiiMatch]:
    for m in _EMAIL.finditer(text):
        local = m.group().split("@", 1)[0]
        if ".." not in m.group() and not local.startswith("."):
            yield PiiMatch("email", m.start(), m.end(), m.group(), m.group().lower())


def _ibans(text: str) -> Iterable[PiiMatch]:
    from stdnum import iban

    for m in _IBAN.finditer(text):
        candidate = m.group()
        while len(re.sub(r"[ -]", "", candidate)) >= 12:  # the pattern may take a following word
            compact = re.sub(r"[ -]", "", candidate).upper()
            if iban.is_valid(compact):
                yield PiiMatch("iban", m.start(), m.start() + len(candidate), candidate, compact)
                break
            candidate = re.sub(r"[ -]?[A-Za-z0-9]{1,4}$", "", candidate)


def _cards(text: str) -> Iterable[PiiMatch]:
    from stdnum import luhn

    for m in _CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group())
        if luhn.is_valid(digits) and _card_issuer_ok(digits):
            yield PiiMatch("card", m.start(), m.end(), m.group(), digits)


def _phones(text: str, regions: Sequence[str]) -> Iterable[PiiMatch]:
    if not _DIGIT_RUN.search(text):
        return
    import phonenumbers

    # citation markers glued to a number ("… 56 78 [2]") make the matcher reject it: blank them
    # out, offsets unchanged
    text = _MARKER.sub(lambda m: " " * len(m.group()), text)
    for region in regions:
        for m in phonenumbers.PhoneNumberMatcher(text, region.upper(),
                                                 leniency=phonenumbers.Leniency.STRICT_GROUPING):
            if _DATE.search(m.raw_string):
                continue
            key = phonenumbers.format_number(m.number, phonenumbers.PhoneNumberFormat.E164)
            yield PiiMatch("phone", m.start, m.end, m.raw_string, key)


def find_pii(text: str, kinds: Iterable[str] = PII_KINDS,
             regions: Sequence[str] = DEFAULT_REGIONS) -> list[PiiMatch]:
    """Validated personal data in text, in order, without overlaps (IBANs, cards and e-mails
    win over phone numbers read inside them)."""
    wanted = set(kinds)
    found: list[PiiMatch] = []
    finders = [("iban", lambda: _ibans(text)), ("card", lambda: _cards(text)),
               ("email", lambda: _emails(text)), ("phone", lambda: _phones(text, regions))]
    for kind, finder in finders:
        if kind not in wanted:
            continue
        for match in finder():
            if not any(match.start < kept.end and kept.start < match.end for kept in found):
                found.append(match)
    return sorted(found, key=lambda m: m.start)


def redact(text: str, matches: Sequence[PiiMatch]) -> str:
    """Text with each match replaced by a label naming its kind (`[email redacted]`)."""
    parts: list[str] = []
    at = 0
    for match in sorted(matches, key=lambda m: m.start):
        parts.append(text[at:match.start])
        parts.append(_LABELS[match.kind])
        at = match.end
    parts.append(text[at:])
    return "".join(parts)


def redact_pii(text: str, kinds: Iterable[str] = PII_KINDS,
               regions: Sequence[str] = DEFAULT_REGIONS) -> tuple[str, list[PiiMatch]]:
    """Text with every validated piece of personal data redacted, and what was found."""
    matches = find_pii(text, kinds, regions)
    return (redact(text, matches) if matches else text), matches


_SENTENCE_END = re.compile(r"[.!?…]['\")\]]*\s+|\n")


def redacting_stream(pieces: Iterable[str], kinds: Iterable[str] = PII_KINDS,
                     regions: Sequence[str] = DEFAULT_REGIONS) -> Iterator[str]:
    """Re-chunk streamed answer text into whole sentences with personal data redacted.

    Tokens can split a phone number or an address over several pieces, so text is held back until
    a sentence ends (the rest is flushed at the end). For streaming surfaces (SSE): the output
    guard checks the final answer, but the tokens a client already saw were the generator's.
    """
    wanted = list(kinds)
    held = ""
    for piece in pieces:
        held += piece
        ends = [m.end() for m in _SENTENCE_END.finditer(held)]
        if ends:
            ready, held = held[:ends[-1]], held[ends[-1]:]
            yield redact_pii(ready, wanted, regions)[0]
    if held:
        yield redact_pii(held, wanted, regions)[0]
