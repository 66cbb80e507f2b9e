"""CSV: one document per row (`ingest.csv_mode = "rows"`) or the whole file as one."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from ragloom.errors import LoadError
from ragloom.ingestion.loaders.metadata import declared_metadata, document_metadata, stem
from ragloom.ingestion.loaders.sources import RawSource, decode
from ragloom.settings import IngestSettings
from ragloom.state import SourceDocument


def _csv_rows(text: str, where: str) -> Iterator[tuple[int, list[str], list[str]]]:
    """Yield (row number, header, row) for each non-empty data row; malformed CSV names its line."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip() for h in next(reader, [])]
        number = 0
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(header):
                raise LoadError(
                    f"malformed CSV at line {reader.line_num}: {len(row)} fields, "
                    f"the header has {len(header)}",
                    where=where,
                )
            number += 1
            yield number, header, row
    except csv.Error as exc:
        raise LoadError(f"malformed CSV at line {reader.line_num}: {exc}", where=where) from exc


def _row_text(header: list[str], row: list[str]) -> str:
    """A row as `column: value` lines, empty cells left out."""
    lines = []
    for i, value in enumerate(row):
        name = header[i] if i < len(header) and header[i] else f"column {i + 1}"
        if value.strip():
            lines.append(f"{name}: {value.strip()}")
    return "\n".join(lines)


def parse_csv(raw: RawSource, settings: IngestSettings) -> list[SourceDocument]:
    """Documents of a CSV file: one per data row, or the whole file (`ingest.csv_mode`)."""
    text = decode(raw)
    sid = raw.ref.source_id
    rows = list(_csv_rows(text, sid))
    if settings.csv_mode == "file":
        meta = document_metadata(raw, "csv", None, rows=len(rows), headings=[])
        return [SourceDocument(doc_id=sid, source_id=sid, text=text, metadata=meta)]
    name = stem(raw.ref)
    return [
        SourceDocument(
            doc_id=f"{sid}#row={n}",
            source_id=sid,
            text=_row_text(header, row),
            metadata=document_metadata(raw, "csv", f"{name}: {row[0].strip()}", row=n, headings=[],
                               **declared_metadata(dict(zip(header, row, strict=False)), known_only=True)),
        )
        for n, header, row in rows
    ]
