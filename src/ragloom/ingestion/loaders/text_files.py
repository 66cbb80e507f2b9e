"""Plain text, Markdown (its YAML front matter taken off the text) and reStructuredText."""

from __future__ import annotations

import re
from typing import Any

import yaml

from ragloom.errors import LoadError
from ragloom.ingestion.chunkers import markdown_headings
from ragloom.ingestion.loaders.metadata import declared_metadata, document_metadata
from ragloom.ingestion.loaders.sources import RawSource, decode
from ragloom.settings import IngestSettings
from ragloom.state import SourceDocument

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)


def front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    """The YAML front matter of a Markdown text as a mapping, and the text after it."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1) or "") or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 2}" if mark is not None else ""
        raise LoadError(f"invalid YAML front matter{line}: {getattr(exc, 'problem', exc)}",
                        where=where, hint="fix the block between the --- lines") from exc
    if not isinstance(data, dict):
        return {}, text
    return data, text[match.end():]


_RST_TITLE = re.compile(r"^(?:[=\-~^*#]{3,}\n)?([^\n]+)\n[=\-~^*#]{3,}$", re.MULTILINE)


def _text_title(text: str, suffix: str) -> str | None:
    """The first heading of a Markdown or reStructuredText text."""
    if suffix == ".rst":
        match = _RST_TITLE.search(text)
        return match.group(1).strip() if match else None
    headings = markdown_headings(text)
    return headings[0].title if headings else None


def parse_text(raw: RawSource, settings: IngestSettings) -> list[SourceDocument]:
    """One document: the text, titled by front matter, the first heading or the file name."""
    text = decode(raw)
    source_type = {".md": "markdown", ".markdown": "markdown", ".rst": "rst"}.get(
        raw.suffix, "text"
    )
    declared: dict[str, Any] = {}
    if source_type == "markdown":
        declared, text = front_matter(text, raw.ref.source_id)
    title = declared.pop("title", None)
    meta = document_metadata(raw, source_type, str(title) if title else _text_title(text, raw.suffix),
                     **declared_metadata(declared, known_only=False))
    if raw.suffix == ".rst":
        meta["headings"] = []
    sid = raw.ref.source_id
    return [SourceDocument(doc_id=sid, source_id=sid, text=text, metadata=meta)]
