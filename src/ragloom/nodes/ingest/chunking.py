"""The chunk node: split new and changed documents into chunks."""

from __future__ import annotations

import logging
from typing import Any

from ragloom.nodes.ingest.deps import IngestDeps
from ragloom.nodes.ingest.identity import source_identity
from ragloom.nodes.ingest.schema import IngestState, WorkItem
from ragloom.nodes.trace import StageClock
from ragloom.state import Chunk
from ragloom.stores.manifest import DocEntry

log = logging.getLogger(__name__)


def _chunk_item(item: WorkItem, deps: IngestDeps, identity: str) -> WorkItem:
    """The item with its documents chunked; unchanged documents keep their recorded chunks."""
    old_docs = item.old.docs if item.old is not None and item.old.identity == identity else {}
    kept: dict[str, DocEntry] = {}
    chunks: list[Chunk] = []
    for doc in item.documents:
        previous = old_docs.get(doc.doc_id)
        if previous is not None and previous.content_hash == doc.content_hash:
            kept[doc.doc_id] = previous
        else:
            chunks.extend(deps.chunker.split(doc))
    return item.model_copy(update={"kept": kept, "chunks": chunks})


def chunk(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Split new and changed documents; unchanged documents of a changed source keep their chunks."""
    with StageClock("chunk") as step:
        batch: list[WorkItem] = []
        for item in state.get("batch", []):
            identity = source_identity(item.ref, deps.settings)
            try:
                batch.append(_chunk_item(item, deps, identity))
            except Exception as exc:  # one document the chunker chokes on fails its source only
                log.exception("unexpected error chunking %s", item.ref.source_id)
                result = item.result.model_copy(update={
                    "status": "failed", "old_version": "removed" if item.old else None,
                    "errors": [*item.result.errors,
                               f"unexpected error while chunking: {type(exc).__name__}: {exc}"]})
                batch.append(item.model_copy(update={"documents": [], "chunks": [], "kept": {},
                                                     "result": result}))
        step.detail.update(chunks=sum(len(i.chunks) for i in batch),
                           unchanged_documents=sum(len(i.kept) for i in batch),
                           chunker=deps.settings.chunker.name)
    return {"batch": batch, "stage_ms": {"chunk": step.elapsed_ms()}, "trace": step.trace()}
