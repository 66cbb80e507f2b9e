"""Decoding: text hidden by an encoding (base64, hex, percent-encoding, HTML entities, Unicode
tags) and what it decodes to when that is readable text."""

from __future__ import annotations

import base64
import binascii
import html
import re
import urllib.parse

from ragloom.ingestion.injection.normalize import TAG_RUN

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
_MAX_PAYLOADS = 64


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
    for match in TAG_RUN.finditer(raw):
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
