"""Validators run before a document reaches the index: byte integrity and prompt-injection signals.

`check_integrity` looks at the raw bytes (empty, oversized, binary, undecodable) and rejects.
`scan_injection` weighs heuristic signals over a parsed document's visible and hidden text: a strong
signal, or two weak ones, rejects; a single weak one marks the document suspicious. The patterns are
deliberately narrow (aimed at the model, not at a reader), and each one lives in `PATTERNS`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from ragloom.state import SourceDocument

Status = Literal["clean", "suspicious", "rejected"]

STRONG = 2
WEAK = 1
REJECT_SCORE = 2
_SAMPLE_BYTES = 65536
_CONTROL_RATIO = 0.1
_ALLOWED_CONTROLS = frozenset(b"\t\n\r\f\b\x1b")
_BOMS = (  # UTF-32 before UTF-16: the UTF-32-LE mark starts with the UTF-16-LE one
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
)


class ValidationResult(BaseModel):
    """A validator's outcome: a status, machine-readable signals and a human sentence."""

    status: Status
    signals: list[str] = Field(default_factory=list)
    reason: str = ""


@dataclass(frozen=True)
class Pattern:
    """One injection heuristic: the signal it raises, its weight and its regex."""

    signal: str
    weight: int
    regex: re.Pattern[str]


def _p(signal: str, weight: int, pattern: str) -> Pattern:
    return Pattern(signal, weight, re.compile(pattern, re.IGNORECASE | re.MULTILINE))


_MD_IMAGE = r"!\[[^\]\n]{0,200}\]\(\s*<?https?://[^)\s>]*"
_MD_LINK = r"\[[^\]\n]{0,200}\]\(\s*<?https?://[^)\s>]*"
_PLACEHOLDER = r"(?:\{[^}\s]{0,40}\}|\{\{|\$\{|%7B|<[a-z_]{2,30}>|\[[A-Z_]{3,30}\])"
_OVERRIDE_VERB = (
    r"\b(?:ignore|disregard|forget|override|skip)\s+(?:(?:all|any|the|your|these|those|of)\s+)*"
)
_SECRET_WORDS = (
    r"(?:conversation|chat|history|messages?|prompt|system_prompt|secret|password|passwd"
    r"|api[_-]?key|credentials?|session|cookie|memory|context|userdata|user_data|pii)"
)

PATTERNS: tuple[Pattern, ...] = (
    _p(
        "instruction_override",
        STRONG,
        _OVERRIDE_VERB + r"(?:(?:previous|prior|above|earlier|preceding|former)\s+"
        r"(?:instructions?|prompts?|directions|directives|rules|guidelines)|system\s+prompt)\b",
    ),
    _p(
        "instruction_override",
        WEAK,
        _OVERRIDE_VERB + r"(?:previous|prior|above|earlier|preceding)\s+(?:context|conversation)\b",
    ),
    _p(
        "instruction_override",
        STRONG,
        r"^\s*(?:new|updated|revised)\s+(?:system\s+)?instructions?\s*:",
    ),
    _p(
        "instruction_override",
        WEAK,
        r"\byou\s+must\s+now\s+(?:ignore|forget|obey|follow|respond|answer|act|say|reply|output"
        r"|tell|only|always|never|comply)\b",
    ),
    _p("instruction_override", WEAK, r"\b(?:new|updated)\s+instructions?\s*:"),
    _p(
        "instruction_override",
        WEAK,
        r"\b(?:AI|assistant|chatbot|language model|LLM)s?\s+(?:reading|processing|summari[sz]ing)"
        r"\s+this\b",
    ),
    _p(
        "role_play",
        STRONG,
        r"\byou\s+are\s+now\s+(?:DAN\b|an?\s+(?:unrestricted|unfiltered|jailbroken|evil|uncensored)"
        r"|in\s+(?:developer|god|DAN|jailbreak)\s+mode|no\s+longer\s+(?:bound|restricted|an?\s+AI))",
    ),
    _p("role_play", STRONG, r"\bact\s+as\s+(?:DAN\b|an?\s+(?:unrestricted|unfiltered|jailbroken))"),
    _p("role_play", STRONG, r"\bdo\s+anything\s+now\b"),
    _p(
        "role_play",
        STRONG,
        r"\b(?:enable|enter|activate|switch\s+to)\s+(?:developer|DAN|jailbreak|god)\s+mode\b",
    ),
    _p("role_play", WEAK, r"\bpretend\s+(?:to\s+be|you\s+are)\b"),
    _p("role_play", WEAK, r"\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|should)\b"),
    _p(
        "system_prompt_marker",
        STRONG,
        r"<\|im_start\|>|<\|im_end\|>|<\|system\|>|<\|(?:begin|end)_of_text\|>",
    ),
    _p("system_prompt_marker", STRONG, r"\[/?INST\]|<<\s*/?SYS\s*>>"),
    _p("system_prompt_marker", STRONG, r"^\s*#{2,}\s*(?:system|instruction|instructions)\s*:"),
    _p("system_prompt_marker", WEAK, r"^\s*system\s*:\s*you\s+(?:are|must|will)\b"),
    _p(
        "prompt_leak",
        STRONG,
        r"\b(?:reveal|print|show|output|repeat|display|leak|dump|tell\s+me)\s+(?:me\s+)?(?:your|the)\s+"
        r"(?:(?:full|entire|original|hidden|initial|secret)\s+)*"
        r"(?:system\s+prompt|system\s+message|initial\s+instructions|hidden\s+instructions)\b",
    ),
    _p("exfiltration_link", STRONG, _MD_IMAGE + r"\?[^)\s]*" + _PLACEHOLDER),
    _p("exfiltration_link", STRONG, _MD_LINK + r"\?[^)\s]*(?:\{|\$\{|%7B)\s*" + _SECRET_WORDS),
    _p("exfiltration_link", STRONG, _MD_IMAGE + r"[?&]" + _SECRET_WORDS + r"\w*="),
    _p(
        "exfiltration_link",
        WEAK,
        r"\b(?:send|post|forward|upload|transmit|exfiltrate|leak|append)\b[^.\n]{0,60}\b"
        r"(?:conversation|chat\s+history|chat\s+log|previous\s+messages|system\s+prompt|api\s+keys?"
        r"|passwords?|credentials|secrets)\b[^.\n]{0,60}\b(?:to|at|into)\s+<?https?://",
    ),
)

_TAG_CHARS = re.compile("[\U000e0000-\U000e007f]")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ZERO_WIDTH = re.compile("[\u200b-\u200d\u2060\ufeff]")
_INVISIBLE = re.compile(
    "[\u200b-\u200d\u2060\ufeff\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]"
)
_MANY_INVISIBLE = 8


def _rejected(signal: str, reason: str) -> ValidationResult:
    return ValidationResult(status="rejected", signals=[signal], reason=reason)


def _encoding(data: bytes) -> tuple[str, int]:
    """The encoding a byte order mark announces (UTF-8 without one) and the mark's length."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return encoding, len(bom)
    return "utf-8", 0


def decode_text(data: bytes) -> str:
    """Decode text bytes: UTF-8, or UTF-16/32 when a byte order mark says so; the mark dropped."""
    encoding, skip = _encoding(data)
    return data[skip:].decode(encoding)


def _looks_binary(sample: bytes | str) -> bool:
    codes = sample if isinstance(sample, bytes) else [ord(c) for c in sample]
    if 0 in codes:
        return True
    controls = sum(1 for b in codes if (b < 0x20 or b == 0x7F) and b not in _ALLOWED_CONTROLS)
    return controls > _CONTROL_RATIO * len(sample)


def check_integrity(data: bytes, *, max_bytes: int, binary_ok: bool = False) -> ValidationResult:
    """Reject empty, oversized, binary or undecodable bytes; `binary_ok` skips text checks (PDF).

    Text is UTF-8, or UTF-16/32 announced by a byte order mark.
    """
    if len(data) > max_bytes:
        return _rejected("oversized", f"{len(data)} bytes exceeds the limit of {max_bytes} bytes")
    encoding, skip = _encoding(data)
    body = data[skip:]
    if binary_ok:
        if not body.strip():
            return _rejected("empty", "the source is empty or whitespace only")
        return ValidationResult(status="clean", reason="integrity checks passed")
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        if _looks_binary(body[:_SAMPLE_BYTES]):
            return _rejected("binary", "the source looks binary (NUL or control bytes), not text")
        return _rejected(
            "undecodable",
            f"invalid {encoding.upper()} at byte {exc.start + skip}; save the file as UTF-8",
        )
    if not text.strip():
        return _rejected("empty", "the source is empty or whitespace only")
    if _looks_binary(text[:_SAMPLE_BYTES]):
        return _rejected("binary", "the source looks binary (NUL or control bytes), not text")
    return ValidationResult(status="clean", reason="integrity checks passed")


def _zero_width_mid_word(text: str) -> int:
    """Count zero-width characters wedged between two ASCII characters (emoji ZWJ is ignored)."""
    count = 0
    for match in _ZERO_WIDTH.finditer(text):
        i = match.start()
        if not 0 < i < len(text) - 1:
            continue
        between_ascii = text[i - 1].isascii() and text[i + 1].isascii()
        if between_ascii or _ZERO_WIDTH.match(text[i + 1]):
            count += 1
    return count


def _unicode_weight(text: str) -> int:
    """Weight of invisible-Unicode tricks: tag characters or many invisibles are strong."""
    tags = len(_TAG_CHARS.findall(text))
    suspicious = _zero_width_mid_word(text) + len(_BIDI.findall(text))
    if tags or suspicious >= _MANY_INVISIBLE:
        return STRONG
    return WEAK if suspicious else 0


def _pattern_signals(text: str) -> dict[str, int]:
    """Signal name → highest weight among the patterns that match text."""
    found: dict[str, int] = {}
    for pattern in PATTERNS:
        if pattern.regex.search(text):
            found[pattern.signal] = max(found.get(pattern.signal, 0), pattern.weight)
    return found


def _hidden_text(doc: SourceDocument) -> str:
    hidden = doc.metadata.get("hidden_text") or ""
    return "\n".join(hidden) if isinstance(hidden, list) else str(hidden)


def _verdict(found: dict[str, int]) -> ValidationResult:
    signals = sorted(found)
    score = sum(found.values())
    if score >= REJECT_SCORE:
        return ValidationResult(
            status="rejected",
            signals=signals,
            reason=f"likely prompt injection ({', '.join(signals)})",
        )
    if score:
        return ValidationResult(
            status="suspicious",
            signals=signals,
            reason=f"possible prompt injection ({', '.join(signals)})",
        )
    return ValidationResult(status="clean", reason="no injection signals")


def scan_injection(doc: SourceDocument) -> ValidationResult:
    """Score prompt-injection signals in a document's text and hidden text."""
    text = doc.text
    hidden = _hidden_text(doc)
    found = _pattern_signals(_INVISIBLE.sub("", text))
    unicode_weight = max(_unicode_weight(text), _unicode_weight(hidden))
    if unicode_weight:
        found["invisible_unicode"] = unicode_weight
    hidden_found = _pattern_signals(_INVISIBLE.sub("", hidden)) if hidden else {}
    if hidden_found:
        found.update({k: max(v, found.get(k, 0)) for k, v in hidden_found.items()})
        found["hidden_text"] = STRONG
    return _verdict(found)
