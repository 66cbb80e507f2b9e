"""Byte integrity, checked before a document is parsed.

`check_integrity` looks at the raw bytes (empty, oversized, binary, undecodable) and rejects;
`decode_text` decodes text bytes as `check_integrity` reads them. The prompt-injection screen is
the package `ragloom.ingestion.injection` (`screen.scan_injection`).
"""

from __future__ import annotations

from ragloom.ingestion.verdict import ValidationResult, rejected

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
        return rejected("oversized", f"{len(data)} bytes exceeds the limit of {max_bytes} bytes")
    encoding, skip = _encoding(data)
    body = data[skip:]
    if binary_ok:
        if not body.strip():
            return rejected("empty", "the source is empty or whitespace only")
        return ValidationResult(status="clean", reason="integrity checks passed")
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        if _looks_binary(body[:_SAMPLE_BYTES]):
            return rejected("binary", "the source looks binary (NUL or control bytes), not text")
        return rejected(
            "undecodable",
            f"invalid {encoding.upper()} at byte {exc.start + skip}; save the file as UTF-8",
        )
    if not text.strip():
        return rejected("empty", "the source is empty or whitespace only")
    if _looks_binary(text[:_SAMPLE_BYTES]):
        return rejected("binary", "the source looks binary (NUL or control bytes), not text")
    return ValidationResult(status="clean", reason="integrity checks passed")
