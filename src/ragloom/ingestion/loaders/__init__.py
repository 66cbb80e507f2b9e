"""Loaders: expand user specs into sources, read their bytes, parse them into SourceDocuments.

Three steps the ingest graph calls in turn, so each can fail on its own source without stopping
the run: `expand_sources` (paths, directories, globs, URLs → SourceRefs), `read_source` (bytes,
with the size cap enforced before reading) and `parse_source` (integrity check, then the format).
Files are read with the libraries themselves: csv, json, BeautifulSoup, pypdf, httpx.

Documents carry the filterable metadata `lang`, `bu`, `type` and `last_modified` (epoch seconds)
from Markdown front matter (which is taken off the text), CSV columns, HTML `<meta>` tags or the
ingest options (`ingest.metadata`); `last_modified` falls back to the source's modification time and
`lang` to the language detected in the text (`ragloom.language`).

Modules: specs and their expansion (`specs`, `globs`, `expansion`, `walk`, `changes`), reading
(`sources`, `reading`, `web_fetch`), parsing (`parsing`, `metadata`, and one module per format:
`text_files`, `csv_files`, `html_pages`, `pdf_files`, `beir_jsonl`; `formats` lists them).
"""

from ragloom.ingestion.loaders.changes import expand_changed
from ragloom.ingestion.loaders.expansion import Expansion
from ragloom.ingestion.loaders.formats import SUPPORTED_SUFFIXES
from ragloom.ingestion.loaders.parsing import parse_source
from ragloom.ingestion.loaders.reading import read_source
from ragloom.ingestion.loaders.sources import FoundSource, RawSource, SourceRef, to_ref
from ragloom.ingestion.loaders.specs import Spec, describe_spec, spec_origin, spec_root
from ragloom.ingestion.loaders.walk import expand_sources, expand_specs

__all__ = [
    "SUPPORTED_SUFFIXES",
    "Expansion",
    "FoundSource",
    "RawSource",
    "SourceRef",
    "Spec",
    "describe_spec",
    "expand_changed",
    "expand_sources",
    "expand_specs",
    "parse_source",
    "read_source",
    "spec_origin",
    "spec_root",
    "to_ref",
]
