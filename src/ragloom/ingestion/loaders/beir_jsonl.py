"""JSON Lines in the BEIR corpus format: one document per `{"_id", "title", "text"}` record."""

from __future__ import annotations

import json

from ragloom.errors import LoadError
from ragloom.ingestion.loaders.metadata import document_metadata
from ragloom.ingestion.loaders.sources import RawSource, decode
from ragloom.settings import IngestSettings
from ragloom.state import SourceDocument


def _jsonl_doc(raw: RawSource, line_no: int, line: str) -> SourceDocument:
    """The document of one corpus record; its title, when given, heads the text."""
    sid = raw.ref.source_id
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise LoadError(f"invalid JSON at line {line_no}: {exc.msg}", where=sid) from exc
    if not isinstance(obj, dict) or "_id" not in obj or not isinstance(obj.get("text", ""), str):
        raise LoadError(
            f"line {line_no} is not a BEIR corpus record",
            where=sid,
            hint='expected {"_id", "title", "text"}',
        )
    title = str(obj.get("title") or "").strip()
    body = obj.get("text") or ""
    text = f"{title}\n\n{body}" if title else body
    meta = document_metadata(raw, "jsonl", title or str(obj["_id"]), line=line_no, headings=[])
    return SourceDocument(doc_id=f"{sid}#{obj['_id']}", source_id=sid, text=text, metadata=meta)


def parse_jsonl(raw: RawSource, settings: IngestSettings) -> list[SourceDocument]:
    """One document per non-empty line."""
    lines = decode(raw).split("\n")
    return [_jsonl_doc(raw, n, line) for n, line in enumerate(lines, start=1) if line.strip()]
