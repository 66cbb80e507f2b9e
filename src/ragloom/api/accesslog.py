"""One JSON line per request on the `ragloom.access` logger, PII redacted from every value.

Redaction errs on the side of hiding: e-mail addresses; card numbers (13-19 digits passing
Luhn); IBANs (mod-97 checksum); phone numbers (a leading + or separated digit groups). Users and
client addresses are logged as salted hashes, keys by name only, never the key or the question.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import sys
from typing import Any

logger = logging.getLogger("ragloom.access")

_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_IBAN = re.compile(r"\b[A-Z]{2}\d{2}(?:[ ]?[A-Z0-9]){11,30}\b")
_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){12,18}\d(?!\d)")
_PHONE = re.compile(r"\+\d[\d ().-]{6,}\d|(?<![\w.])\(?\d{2,4}\)?(?:[ .-]\d{2,4}){2,4}(?![\w.])")
HASHED_FIELDS = frozenset({"trace_id", "user", "client", "ts"})
"""Fields whose values are ours (hashes, ids, timestamps): not scanned."""


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def _iban_valid(text: str) -> bool:
    compact = text.replace(" ", "")
    moved = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in moved)) % 97 == 1


def redact(text: str) -> str:
    """The text with e-mails, IBANs, card and phone numbers replaced by placeholders."""
    text = _EMAIL.sub("[email]", text)
    text = _IBAN.sub(lambda m: "[iban]" if _iban_valid(m.group()) else m.group(), text)

    def card(match: re.Match[str]) -> str:
        digits = re.sub(r"\D", "", match.group())
        return "[card]" if 13 <= len(digits) <= 19 and _luhn(digits) else match.group()

    text = _CARD.sub(card, text)
    return _PHONE.sub("[phone]", text)


def scrub(value: Any, field: str = "") -> Any:
    """A log value with every string in it redacted (our own hashes and ids left as they are)."""
    if field in HASHED_FIELDS:
        return value
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: scrub(v, k) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub(v) for v in value]
    return value


def pseudonym(value: str | None, salt: str) -> str | None:
    """A stable, salted hash of a user id or client address (16 hex digits)."""
    if value is None:
        return None
    return hashlib.sha256(f"{salt}:{value}".encode()).hexdigest()[:16]


def log_request(record: dict[str, Any]) -> None:
    """Write one request's record as one JSON line."""
    if logger.isEnabledFor(logging.INFO):
        logger.info(json.dumps(scrub(record), default=str, separators=(",", ":")))


def configure_access_log() -> None:
    """Send access lines to stderr, one JSON object a line, unless logging is set up already."""
    if logger.handlers:
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
