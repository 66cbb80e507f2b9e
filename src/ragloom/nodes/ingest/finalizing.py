"""The finalize node: remove vanished sources, bring BM25 up to date, write the report."""

from __future__ import annotations

import time
from typing import Any

from ragloom.nodes.ingest.bm25_sync import swap_in, sync_bm25
from ragloom.nodes.ingest.deps import IngestDeps, write_target
from ragloom.nodes.ingest.identity import now
from ragloom.nodes.ingest.schema import IngestState, sum_ms
from ragloom.nodes.trace import StageClock
from ragloom.state import IngestionReport, SourceResult
from ragloom.stores.manifest import CLEAN_KEY, LAST_INGEST_KEY, ManifestStore


def _remove_vanished(state: IngestState, deps: IngestDeps,
                     store: ManifestStore) -> list[SourceResult]:
    """Delete the chunks of sources gone from the specs and forget them, with their quarantine."""
    gone = list(state.get("removals", []))
    if not gone:
        return []
    entries = store.entries(gone)
    ids = [cid for entry in entries.values() for cid in entry.chunk_ids()]
    intent = store.write_intent(gone, ids)
    if ids:
        deps.index.delete_ids(ids)
    store.record({}, dropped=gone, deleted_ids=ids, intent=intent)
    quarantine = deps.quarantine()
    for source_id in gone:
        quarantine.remove(source_id)
    return [SourceResult(source_id=sid, status="removed", chunks=len(entries[sid].chunk_ids()))
            for sid in gone if sid in entries]


def finalize(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Remove sources gone from the specs, apply the journal to BM25, write the report."""
    run = write_target(state, deps)
    with StageClock("finalize") as step:
        with run.manifest() as store:
            store.set_meta(LAST_INGEST_KEY, now())
            removed = _remove_vanished(state, run, store)
            quarantine = deps.quarantine()
            for source_id in state.get("quarantine_gone", []):
                quarantine.remove(source_id)
            start = time.perf_counter()
            if run is deps:
                bm25_status = sync_bm25(deps, store)
                store.set_meta(CLEAN_KEY, "1")
            else:  # a reindex: its manifest is swapped in; the next run checks the counts
                bm25_status = swap_in(deps, run, store)
            bm25_ms = (time.perf_counter() - start) * 1000
        step.detail.update(removed=len(removed), bm25=bm25_status, bm25_ms=round(bm25_ms, 1))
    own_ms = {"finalize": step.elapsed_ms() - bm25_ms, "bm25": bm25_ms}
    stage_ms = sum_ms(state.get("stage_ms", {}), own_ms)
    report = IngestionReport(
        collection=deps.collection,
        sources=sorted([*state.get("results", []), *removed], key=lambda r: r.source_id),
        unchanged=sorted(state.get("settled", [])),
        skipped=dict(sorted(state.get("skipped", {}).items())),
        stage_ms={k: round(v, 1) for k, v in stage_ms.items()},
        total_ms=round(sum(stage_ms.values()), 1),
        reindexed=bool(state.get("reindex")),
        warnings=list(state.get("warnings", [])),
    )
    return {"report": report, "trace": step.trace()}
