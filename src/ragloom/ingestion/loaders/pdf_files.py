"""PDF: the pages' text (pypdf), joined by blank lines, with where each page starts."""

from __future__ import annotations

import io

from ragloom.errors import LoadError
from ragloom.ingestion.loaders.metadata import document_metadata
from ragloom.ingestion.loaders.sources import RawSource
from ragloom.settings import IngestSettings
from ragloom.state import SourceDocument


def _pdf_pages(raw: RawSource) -> tuple[list[str], str | None]:
    """Page texts and the title of a PDF; corrupt or encrypted files raise LoadError."""
    from pypdf import PdfReader

    sid = raw.ref.source_id
    try:
        reader = PdfReader(io.BytesIO(raw.data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoadError("encrypted PDF", where=sid, hint="remove the password and ingest again")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
        title = reader.metadata.title if reader.metadata else None
    except LoadError:
        raise
    except Exception as exc:  # pypdf raises many types on damaged input
        raise LoadError(f"cannot read PDF ({type(exc).__name__}: {exc})", where=sid) from exc
    return pages, (str(title).strip() or None) if title else None


def parse_pdf(raw: RawSource, settings: IngestSettings) -> list[SourceDocument]:
    """One document of all pages; a PDF without extractable text is an error."""
    pages, title = _pdf_pages(raw)
    if not any(pages):
        raise LoadError(
            "the PDF has no extractable text",
            where=raw.ref.source_id,
            hint="scanned PDFs need OCR first",
        )
    starts, offset = [], 0
    for page in pages:
        starts.append(offset)
        offset += len(page) + 2
    meta = document_metadata(raw, "pdf", title, pages=len(pages), page_starts=starts, headings=[])
    sid = raw.ref.source_id
    return [SourceDocument(doc_id=sid, source_id=sid, text="\n\n".join(pages), metadata=meta)]
