"""Integrity checks on raw bytes: empty, oversized, binary, undecodable."""

from __future__ import annotations

import pytest

from ragloom.ingestion.validation import check_integrity


# --- integrity --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "signal"),
    [
        (b"", "empty"),
        (b"  \n\t\r\n ", "empty"),
        (b"\xef\xbb\xbf\n", "empty"),
        ("\ufeff  \n".encode("utf-16-le"), "empty"),
        (b"abc\x00def", "binary"),
        (bytes(range(1, 32)) * 3, "binary"),
        (b"caf\xe9 au lait", "undecodable"),
        (b"\xff\xfea", "undecodable"),
        (b"x" * 101, "oversized"),
    ],
)
def test_integrity_rejects(data: bytes, signal: str) -> None:
    result = check_integrity(data, max_bytes=100)
    assert result.status == "rejected"
    assert result.signals == [signal]
    assert result.reason


@pytest.mark.parametrize(
    "data",
    [
        b"plain text\n",
        "caf\u00e9 \u2014 \u00b0C".encode(),
        b"\xef\xbb\xbfwith a BOM",
        b"tab\tand\x0cform feed",
        "Gr\u00fc\u00dfe".encode("utf-16"),
        "Gr\u00fc\u00dfe".encode("utf-32"),
        "\ufeffbig endian".encode("utf-16-be"),
    ],
)
def test_integrity_accepts_text(data: bytes) -> None:
    assert check_integrity(data, max_bytes=100).status == "clean"


def test_integrity_binary_ok_skips_text_checks_but_not_empty() -> None:
    pdf_like = b"%PDF-1.7\n\x00\x01\xff\xfe binary streams"
    assert check_integrity(pdf_like, max_bytes=1000, binary_ok=True).status == "clean"
    assert check_integrity(b"", max_bytes=1000, binary_ok=True).signals == ["empty"]
