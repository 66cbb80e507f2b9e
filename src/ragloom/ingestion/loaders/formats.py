"""The file formats a loader reads: suffixes, media types, and whether a path is one of them."""

from __future__ import annotations

from pathlib import Path

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".rst")
SUPPORTED_SUFFIXES: tuple[str, ...] = (*TEXT_SUFFIXES, ".csv", ".html", ".htm", ".pdf", ".jsonl")
_SUFFIX_SET = frozenset(SUPPORTED_SUFFIXES)
MEDIA_TYPES = {
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".rst": "text/x-rst",
    ".csv": "text/csv",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
    ".jsonl": "application/jsonl",
}
SUFFIX_OF_MEDIA = {
    "text/html": ".html",
    "application/xhtml+xml": ".html",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "text/x-markdown": ".md",
    "application/pdf": ".pdf",
    "text/csv": ".csv",
    "application/jsonl": ".jsonl",
    "application/x-ndjson": ".jsonl",
}


def supported_hint() -> str:
    """The hint of an error about an unsupported file: the extensions that are."""
    return f"supported extensions: {', '.join(SUPPORTED_SUFFIXES)}"


def is_supported(path: str) -> bool:
    """Whether the file name's extension (as `os.path.splitext` reads it) has a loader."""
    name = path[path.rfind("/") + 1:].lstrip(".")
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in _SUFFIX_SET


def unsupported(path: str) -> str:
    """The skip reason of a file no loader reads."""
    return f"unsupported file type {Path(path).suffix or '(none)'!r}"
