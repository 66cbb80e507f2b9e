"""Parse a source's bytes into documents: the integrity check, then the parser of its format."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from ragloom.errors import LoadError, RejectedSourceError
from ragloom.ingestion.loaders.beir_jsonl import parse_jsonl
from ragloom.ingestion.loaders.csv_files import parse_csv
from ragloom.ingestion.loaders.formats import TEXT_SUFFIXES, supported_hint
from ragloom.ingestion.loaders.html_pages import parse_html
from ragloom.ingestion.loaders.metadata import with_metadata
from ragloom.ingestion.loaders.pdf_files import parse_pdf
from ragloom.ingestion.loaders.sources import RawSource
from ragloom.ingestion.loaders.text_files import parse_text
from ragloom.ingestion.validation import check_integrity
from ragloom.settings import IngestSettings
from ragloom.state import SourceDocument

Parser = Callable[[RawSource, IngestSettings], list[SourceDocument]]
PARSERS: dict[str, Parser] = {
    **{suffix: parse_text for suffix in TEXT_SUFFIXES},
    ".csv": parse_csv,
    ".html": parse_html,
    ".htm": parse_html,
    ".pdf": parse_pdf,
    ".jsonl": parse_jsonl,
}


def parse_source(raw: RawSource, settings: IngestSettings,
                 cache_dir: Path | None = None) -> list[SourceDocument]:
    """Check a source's bytes, then parse them into documents by format (`cache_dir`: where the
    language detector's inflated model is cached, as on the query path; None reads the bundled
    copy, 0.4 s per process)."""
    check = check_integrity(raw.data, max_bytes=settings.max_bytes, binary_ok=raw.suffix == ".pdf")
    if check.status == "rejected":
        raise RejectedSourceError(
            check.reason,
            where=raw.ref.source_id,
            signals=check.signals,
            content_hash=raw.content_hash,
        )
    parser = PARSERS.get(raw.suffix)
    if parser is None:
        raise LoadError(
            f"unsupported file type {raw.suffix!r}", where=raw.ref.source_id, hint=supported_hint()
        )
    return [with_metadata(doc, raw, settings, cache_dir) for doc in parser(raw, settings)]
