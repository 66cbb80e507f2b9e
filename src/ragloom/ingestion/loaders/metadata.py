"""Document metadata: the loaders' own, declared fields (front matter, CSV, HTML meta), options.

Documents carry the filterable metadata `lang`, `bu`, `type` and `last_modified` (epoch seconds);
`last_modified` falls back to the source's modification time and `lang` to the language detected
in the text (`ragloom.language`).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path, PurePosixPath
from typing import Any

import httpx

from ragloom.ingestion.loaders.sources import RawSource, SourceRef
from ragloom.settings import IngestSettings
from ragloom.state import SourceDocument


def stem(ref: SourceRef) -> str:
    """A source's name without extension (a URL's last path segment, else its host)."""
    if ref.kind == "url":
        url = httpx.URL(ref.source_id)
        return PurePosixPath(url.path).stem or url.host
    return PurePosixPath(ref.source_id).stem


def document_metadata(raw: RawSource, source_type: str, title: str | None,
                      **extra: Any) -> dict[str, Any]:
    """A document's own metadata: title (else the source's stem), type, time, given extras."""
    meta: dict[str, Any] = {"title": title or stem(raw.ref), "source_type": source_type}
    if raw.modified:
        meta["modified"] = raw.modified
    meta.update({k: v for k, v in extra.items() if v is not None})
    return meta


METADATA_ALIASES = {
    "lang": "lang", "language": "lang", "locale": "lang", "content-language": "lang",
    "dc.language": "lang", "og:locale": "lang",
    "bu": "bu", "business_unit": "bu", "business-unit": "bu", "businessunit": "bu",
    "type": "type", "doc_type": "type", "doc-type": "type", "document_type": "type",
    "dc.type": "type",
    "last_modified": "last_modified", "last-modified": "last_modified", "modified": "last_modified",
    "updated": "last_modified", "last_updated": "last_modified", "lastmod": "last_modified",
    "date_modified": "last_modified", "dcterms.modified": "last_modified",
    "dc.date.modified": "last_modified", "article:modified_time": "last_modified",
    "og:updated_time": "last_modified", "date": "last_modified",
}
"""Front matter keys, CSV columns and HTML meta names read as the filterable fields `lang`, `bu`,
`type` and `last_modified` (an explicit `last_modified` wins over `date`)."""
RESERVED_KEYS = frozenset({"source_type", "headings", "page_starts", "pages", "row", "rows",
                           "line", "hidden_text", "chunk_index", "section", "page", "suspicious"})
"""Document metadata that front matter may not set (the loaders' and chunkers' own)."""


def _field_value(field: str, value: Any) -> Any:
    """A metadata value in its stored form: lang as an ISO 639-1 code, last_modified as epoch
    seconds, lists joined with commas; None when it cannot be stored."""
    from ragloom.language import primary_code
    from ragloom.stores.filters import to_timestamp

    if field == "lang":
        return primary_code(str(value)) if value is not None else None
    if field == "last_modified":
        stamp = to_timestamp(value)
        return int(stamp) if stamp is not None else None
    if isinstance(value, list | tuple):
        items = [str(v) for v in value if isinstance(v, str | int | float | bool)]
        return ", ".join(items) if items else None
    if isinstance(value, date):
        return value.isoformat()
    return value if isinstance(value, str | int | float | bool) else None


def declared_metadata(pairs: dict[str, Any], *, known_only: bool) -> dict[str, Any]:
    """Filterable metadata from a document's own declarations (front matter, CSV columns, HTML
    meta): aliases mapped to `lang`, `bu`, `type`, `last_modified`; other scalar keys kept too
    unless `known_only`."""
    found: dict[str, Any] = {}
    explicit: set[str] = set()
    for key, value in pairs.items():
        name = str(key).strip().lower()
        field = METADATA_ALIASES.get(name)
        if field is None and (known_only or name in RESERVED_KEYS or name.startswith("_")):
            continue
        field = field or name
        stored = _field_value(field, value)
        if stored is None or stored == "" or (field in explicit and name == "date"):
            continue
        found[field] = stored
        if name != "date":
            explicit.add(field)
    return found


def with_metadata(doc: SourceDocument, raw: RawSource, settings: IngestSettings,
                   cache_dir: Path | None) -> SourceDocument:
    """The document with the ingest options' metadata under its own, `last_modified` (else the
    source's modification time) in epoch seconds and its language detected when not declared."""
    meta = {**declared_metadata(dict(settings.metadata), known_only=False), **doc.metadata}
    if "last_modified" not in meta and raw.modified:
        meta["last_modified"] = _field_value("last_modified", raw.modified)
    if "lang" in meta:
        meta["lang"] = _field_value("lang", meta["lang"])
    if not meta.get("lang") and settings.detect_language:
        from ragloom.language import detect_language

        meta["lang"] = detect_language(doc.text, settings.languages, cache_dir)
    return doc.model_copy(update={"metadata": {k: v for k, v in meta.items() if v is not None}})
