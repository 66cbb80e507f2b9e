"""The record node: record the batch's stored sources in the manifest."""

from __future__ import annotations

from typing import Any

from ragloom.nodes.ingest.deps import IngestDeps, write_target
from ragloom.nodes.ingest.identity import now, source_identity, trusted_stat
from ragloom.nodes.ingest.schema import IngestState, WorkItem
from ragloom.nodes.ingest.storing import stale_ids
from ragloom.nodes.trace import StageClock
from ragloom.state import SourceResult
from ragloom.stores.manifest import DocEntry, SourceEntry


def _entry(item: WorkItem, identity: str) -> SourceEntry:
    """The manifest entry of a stored source: its documents' chunk ids, hashes and stat."""
    docs = {doc_id: entry.model_copy() for doc_id, entry in item.kept.items()}
    for c in item.chunks:
        docs.setdefault(c.doc_id, DocEntry(content_hash="", chunk_ids=[])).chunk_ids.append(c.id)
    hashes = {doc.doc_id: doc.content_hash for doc in item.documents}
    for doc_id, entry in docs.items():
        entry.content_hash = hashes.get(doc_id, entry.content_hash)
    size, mtime_ns = trusted_stat(item.ref)
    return SourceEntry(identity=identity, content_hash=item.raw_hash, size=size, mtime_ns=mtime_ns,
                       docs=docs, recorded_at=now())


def record(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Record the batch's stored sources in one manifest transaction, after they are stored."""
    deps = write_target(state, deps)
    with StageClock("record") as step:
        entries: dict[str, SourceEntry] = {}
        dropped: list[str] = []
        results: list[SourceResult] = []
        batch = state.get("batch", [])
        for item in batch:
            result = item.result.model_copy()
            if item.dropped:
                dropped.append(item.ref.source_id)
            else:
                entry = _entry(item, source_identity(item.ref, deps.settings))
                entries[item.ref.source_id] = entry
                result.chunks = len(entry.chunk_ids())
                result.embeddings_computed = len(item.chunks)
            results.append(result)
        with deps.manifest() as store:
            store.record(entries, dropped=dropped,
                         deleted_ids=[cid for item in batch for cid in stale_ids(item)],
                         added_ids=[c.id for item in batch for c in item.chunks],
                         intent=state.get("intent"))
        step.detail.update(recorded=len(entries), dropped=len(dropped))
    return {"batch": [], "intent": None, "results": results,
            "stage_ms": {"record": step.elapsed_ms()}, "trace": step.trace()}
