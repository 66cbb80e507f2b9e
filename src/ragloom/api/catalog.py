"""The collections of the data directory as the service sees them: names (listed from Chroma),
a revision that changes whenever one is re-ingested, chunk lookups and source texts."""

from __future__ import annotations

import threading
import time
from typing import Any

from ragloom import resources
from ragloom.api.errors import ServiceError
from ragloom.api.keys import Principal
from ragloom.api.models import SourceText
from ragloom.collections import collection_names
from ragloom.settings import RagSettings
from ragloom.state import Chunk

NAMES_TTL_S = 2.0
"""How long the list of collection names is reused before Chroma is asked again."""


class Catalog:
    """Collection names, revisions and chunks of one data directory."""

    def __init__(self, settings: RagSettings) -> None:
        self.settings = settings
        self.paths = resources.data_paths(settings)
        self._names: tuple[float, list[str]] = (0.0, [])
        self._lock = threading.Lock()

    def names(self, *, refresh: bool = False) -> list[str]:
        """The visible collections of the data directory (or the Chroma server), sorted."""
        with self._lock:
            stamp, names = self._names
            if not refresh and time.monotonic() - stamp < NAMES_TTL_S:
                return names
        names = collection_names(self.settings)
        with self._lock:
            self._names = (time.monotonic(), names)
        return names

    def require(self, name: str, principal: Principal) -> str:
        """The collection name if it exists and the principal may read it, else a 404 naming
        the collections it may read (one it may not read is reported as unknown)."""
        names = self.names()
        if name not in names:
            names = self.names(refresh=True)
        if name not in names or not principal.can_read(name):
            readable = principal.readable(names)
            raise ServiceError(404, f"unknown collection {name!r}", where="collection",
                               known=readable,
                               hint=f"known collections: {', '.join(readable) or '(none)'}")
        return name

    def settings_for(self, name: str) -> RagSettings:
        """The service settings with another collection."""
        return self.settings.model_copy(update={"collection": name})

    def revision(self, name: str) -> str:
        """A token that changes whenever the collection is written (BM25 index and manifest)."""
        parts = []
        for path in (self.paths.bm25_dir(name) / "meta.json", self.paths.manifest_file(name)):
            try:
                stat = path.stat()
                parts.append(f"{stat.st_mtime_ns:x}.{stat.st_size:x}")
            except FileNotFoundError:
                parts.append("-")
        return "/".join(parts)

    def count(self, name: str) -> int:
        """Chunks stored in the collection."""
        return resources.document_index(self.settings_for(name)).count()

    def chunks(self, name: str, ids: list[str]) -> dict[str, Chunk]:
        """The stored chunks of these ids (from the in-memory BM25 copy when there is one)."""
        settings = self.settings_for(name)
        bm25 = resources.bm25_index(settings)
        found: dict[str, Chunk] = dict(bm25.lookup(ids)) if bm25 is not None else {}
        missing = [i for i in ids if i not in found]
        if missing:
            found.update({c.id: c for c in resources.document_index(settings).get_chunks(missing)})
        return found

    def source_text(self, name: str, chunk_id: str, scope: dict[str, Any] | None) -> SourceText:
        """A chunk in its document, the text rebuilt from the document's chunks that match the
        caller's scope filter (404 for a chunk outside it)."""
        index = resources.document_index(self.settings_for(name))
        chunk = next(iter(index.get_chunks([chunk_id])), None)
        if chunk is not None and scope:
            allowed = index.all_ids({"$and": [{"doc_id": chunk.doc_id}, scope]})
            chunk = chunk if chunk.id in allowed else None
        if chunk is None:
            raise ServiceError(404, f"unknown chunk {chunk_id!r} in collection {name!r}",
                               where="chunk_id", hint="use a citation id from an answer")
        where = {"$and": [{"doc_id": chunk.doc_id}, scope]} if scope else {"doc_id": chunk.doc_id}
        siblings = sorted(index.get_chunks(index.all_ids(where)), key=lambda c: c.start)
        return SourceText(chunk_id=chunk.id, doc_id=chunk.doc_id, source_id=chunk.source_id,
                          title=str(chunk.metadata.get("title", "")),
                          text=document_text(siblings), start=chunk.start, end=chunk.end)


def document_text(chunks: list[Chunk]) -> str:
    """A document's text from its chunks (sorted by start; overlaps agree, gaps become spaces):
    every chunk's offsets index into the result."""
    text = ""
    for chunk in chunks:
        if chunk.start > len(text):
            text += " " * (chunk.start - len(text))
        text += chunk.text[len(text) - chunk.start:] if chunk.end > len(text) else ""
    return text
