"""Bring the BM25 index up to the manifest: apply its journal, rebuild, or swap a reindex in."""

from __future__ import annotations

import os

from ragloom.nodes.ingest.deps import IngestDeps
from ragloom.stores import bm25
from ragloom.stores.crashpoints import crashpoint
from ragloom.stores.manifest import ManifestStore, fsync_path, remove_database


def _rebuild_bm25(deps: IngestDeps, store: ManifestStore, reason: str) -> str:
    """Rebuild the BM25 index from Chroma; return the status line naming the reason."""
    last = store.last_seq()
    bm25.Bm25Index.build(deps.index.all_chunks(), deps.paths.bm25_dir(deps.collection),
                         applied_seq=last, epoch=store.get_meta("epoch") or "")
    store.trim_journal(last)
    store.set_meta("bm25_stale", "0")
    return f"rebuilt ({reason})"


def sync_bm25(deps: IngestDeps, store: ManifestStore) -> str:
    """Bring the BM25 index up to the manifest: apply the journal, or rebuild from Chroma when
    the index is missing, unreadable, from another manifest, or a full repair ran."""
    directory = deps.paths.bm25_dir(deps.collection)
    try:
        current = bm25.read_state(directory)
    except bm25.CorruptIndexError as exc:
        return _rebuild_bm25(deps, store, f"unreadable: {exc}")
    if current is None:
        return _rebuild_bm25(deps, store, "missing")
    if store.get_meta("bm25_stale") == "1":
        return _rebuild_bm25(deps, store, "after a repair")
    if current.get("epoch") != store.get_meta("epoch") or current["applied_seq"] > store.last_seq():
        return _rebuild_bm25(deps, store, "built for another manifest")
    rows = store.journal(after=current["applied_seq"])
    total = store.total_chunks()
    if not rows:
        if current["count"] != total:
            return _rebuild_bm25(deps, store, "count differs from the manifest")
        store.trim_journal(current["applied_seq"])  # rows a crash left after the BM25 commit
        return "in sync"
    last_op: dict[str, str] = {}
    for _seq, chunk_id, op in rows:
        last_op[chunk_id] = op
    wanted = [cid for cid, op in last_op.items() if op == "add"]
    added = deps.index.get_chunks(wanted)
    if len(added) != len(wanted):
        return _rebuild_bm25(deps, store, "journalled chunks missing from the store")
    result = bm25.update(directory, added, list(last_op), applied_seq=rows[-1][0], count=total,
                         epoch=current["epoch"])
    crashpoint("ingest.bm25-applied")
    store.trim_journal(rows[-1][0])
    return f"updated (+{result.added} -{result.deleted}, merge {result.merged})"


def swap_in(live: IngestDeps, shadow: IngestDeps, store: ManifestStore) -> str:
    """End a reindex: index the shadow's chunks into a BM25 segment, swap the shadow collection in,
    commit that segment, then move the shadow manifest into place. A crash between two steps
    leaves a live manifest that disagrees with Chroma: the next run repairs it in full."""
    last = store.last_seq()
    epoch = store.get_meta("epoch") or ""
    chunks = shadow.index.all_chunks()
    bm25.Bm25Index.build(chunks, live.paths.bm25_dir(live.collection), applied_seq=last,
                         epoch=epoch, before_commit=lambda: live.index.replace_with(shadow.index))
    store.trim_journal(last)
    store.close()
    target = live.paths.manifest_file(live.collection)
    crashpoint("reindex.manifest")
    remove_database(target)
    os.replace(str(shadow.manifest_file), target)
    fsync_path(target.parent)
    return f"rebuilt (reindex, {len(chunks)} chunks)"
