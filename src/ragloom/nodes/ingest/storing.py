"""The upsert node: announce, delete and store the batch's chunks."""

from __future__ import annotations

from typing import Any

import numpy as np

from ragloom.nodes.ingest.deps import IngestDeps, write_target
from ragloom.nodes.ingest.schema import IngestState, WorkItem
from ragloom.nodes.trace import StageClock
from ragloom.stores.crashpoints import crashpoint


def stale_ids(item: WorkItem) -> list[str]:
    """The recorded chunk ids of the item's source that its new version no longer keeps."""
    if item.old is None:
        return []
    keep = {cid for doc in item.kept.values() for cid in doc.chunk_ids}
    return [cid for cid in item.old.chunk_ids() if cid not in keep]


def upsert(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Announce the batch's chunk ids, delete the stale chunks and store the new ones."""
    deps = write_target(state, deps)
    with StageClock("upsert") as step:
        batch = state.get("batch", [])
        stale = [cid for item in batch for cid in stale_ids(item)]
        chunks = [c for item in batch for c in item.chunks]
        intent = None
        if stale or chunks:
            touched = [item.ref.source_id for item in batch if item.chunks or stale_ids(item)]
            with deps.manifest() as store:
                intent = store.write_intent(touched, [*stale, *(c.id for c in chunks)])
        crashpoint("ingest.upsert")
        if stale:
            deps.index.delete_ids(stale)
        if chunks:
            deps.index.upsert(chunks, np.asarray(state.get("embeddings")))
        step.detail.update(deleted=len(stale), upserted=len(chunks))
    return {"intent": intent, "embeddings": None, "stage_ms": {"upsert": step.elapsed_ms()},
            "trace": step.trace()}
