"""HTML: the visible text with Markdown headings, its title, language and meta tags."""

from __future__ import annotations

from ragloom.ingestion.html_text import html_to_text
from ragloom.ingestion.loaders.metadata import declared_metadata, document_metadata
from ragloom.ingestion.loaders.sources import RawSource, decode
from ragloom.settings import IngestSettings
from ragloom.state import SourceDocument


def parse_html(raw: RawSource, settings: IngestSettings) -> list[SourceDocument]:
    """One document: the page's text, title, language, meta fields and any hidden text."""
    sid = raw.ref.source_id
    text, found = html_to_text(decode(raw), max_depth=settings.html_max_depth, where=sid)
    declared = declared_metadata(found["meta"], known_only=True)
    meta = document_metadata(raw, "html", found["title"],
                             **{**declared, "lang": found["lang"] or declared.get("lang")})
    if found["hidden_text"]:
        meta["hidden_text"] = found["hidden_text"]
    return [SourceDocument(doc_id=sid, source_id=sid, text=text, metadata=meta)]
