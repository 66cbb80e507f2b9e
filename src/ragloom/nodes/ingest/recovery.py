"""Recovery at the start of a run: what crashed runs left, and the manifest opened and checked.

Chroma is the source of truth: a batch's intent names the chunk ids it was about to touch, so an
interrupted batch is undone from it; counts that disagree trigger a full repair from Chroma.
"""

from __future__ import annotations

import shutil

from ragloom.errors import EmbeddingProfileMismatchError
from ragloom.nodes.ingest.deps import IngestDeps
from ragloom.nodes.ingest.identity import legacy_identity
from ragloom.stores import bm25, catalog
from ragloom.stores.base import DocumentIndex
from ragloom.stores.manifest import CLEAN_KEY, ManifestStore, remove_database, remove_temp_files
from ragloom.stores.paths import shadow_collection


def recover_reindex(deps: IngestDeps) -> list[str]:
    """Settle what an interrupted reindex left: its shadow collection and manifest go, and a live
    collection it had renamed aside comes back."""
    notes: list[str] = []
    recover = getattr(deps.index, "recover_swap", None)
    if recover is not None:
        notes = recover(shadow_collection(deps.collection))
    remove_database(deps.paths.reindex_manifest_file(deps.collection))
    return notes


def finish_deletion(deps: IngestDeps) -> list[str]:
    """Finish a deletion of this collection that a crash interrupted.

    The run then starts from an empty collection instead of reviving parts of the deleted one.
    """
    if not deps.paths.deletion_marker(deps.collection).exists():
        return []
    sibling = getattr(deps.index, "sibling", None)

    def drop(name: str) -> None:
        if name == deps.collection:
            deps.index.drop()
        elif sibling is not None:
            sibling(name).drop()

    catalog.purge(deps.paths, deps.collection, drop)
    return [f"finished deleting collection {deps.collection!r} (an earlier deletion was "
            "interrupted); it is ingested afresh"]


def clean_leftovers(deps: IngestDeps) -> list[str]:
    """Remove what interrupted runs left: temp files, BM25 staging and unreferenced segments."""
    removed = remove_temp_files(deps.paths.manifest_file(deps.collection).parent)
    removed += remove_temp_files(deps.paths.quarantine_dir(deps.collection))
    bm25_dir = deps.paths.bm25_dir(deps.collection)
    removed += bm25.remove_unreferenced(bm25_dir)
    if bm25_dir.parent.is_dir():  # format-1 staging and swap directories beside the index
        for path in bm25_dir.parent.glob(f".{bm25_dir.name}.*"):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path.name)
    return removed


def repair_intents(store: ManifestStore, index: DocumentIndex) -> list[str]:
    """Undo the batches a crash interrupted: their sources are forgotten (re-ingested this run)
    and every chunk id they announced is deleted from the store."""
    notes = []
    for intent in store.intents():
        entries = store.entries(intent.sources)
        ids = sorted({*intent.chunk_ids, *(c for e in entries.values() for c in e.chunk_ids())})
        if ids:
            index.delete_ids(ids)
        store.clear_intent(intent.id, dropped=intent.sources, deleted_ids=ids)
        notes.append(f"repaired: an interrupted batch of {len(intent.sources)} source(s) "
                     "is re-ingested")
    return notes


def _full_repair(store: ManifestStore, index: DocumentIndex) -> list[str]:
    """Make the manifest and Chroma agree by reading both whole: drop entries with missing
    chunks, delete unrecorded chunks; the BM25 index is rebuilt at finalize."""
    notes: list[str] = []
    stored = set(index.all_ids())
    entries = store.all_entries()
    kept = {}
    for source_id, entry in entries.items():
        if set(entry.chunk_ids()) <= stored:
            kept[source_id] = entry
        else:
            notes.append(f"repaired: {source_id} had chunks missing from the store; it is re-ingested")
    recorded = {cid for entry in kept.values() for cid in entry.chunk_ids()}
    orphans = sorted(stored - recorded)
    if orphans:
        index.delete_ids(orphans)
        notes.append(f"repaired: removed {len(orphans)} unrecorded chunk(s) left by an interrupted run")
    if len(kept) != len(entries):
        store.reset_sources(kept)
    store.set_meta("bm25_stale", "1")
    return notes


def check_store(store: ManifestStore, index: DocumentIndex) -> list[str]:
    """Agreement check, a full repair when it fails: the collection id always; the chunk counts
    (a scan of each store) only when the previous run did not finish cleanly."""
    collection_id = getattr(index, "collection_id", None)
    known = store.get_meta("collection_id")
    same_collection = known is None or collection_id is None or known == collection_id
    clean = store.get_meta(CLEAN_KEY) == "1"
    store.set_meta(CLEAN_KEY, "0")  # until this run's finalize: a crash leaves it for the next
    notes = []
    if not same_collection or (not clean and index.count() != store.total_chunks(exact=True)):
        notes = _full_repair(store, index)
    if collection_id is not None and known != collection_id:
        store.set_meta("collection_id", collection_id)
    return notes


def open_manifest(deps: IngestDeps) -> tuple[ManifestStore, list[str]]:
    """Open this run's manifest (migrating a JSON one) and check its embedding profile."""
    path = deps.manifest_file or deps.paths.manifest_file(deps.collection)
    store, warnings = ManifestStore.open(path, legacy=deps.paths.legacy_manifest_file(deps.collection),
                                         identity_of=legacy_identity(deps.settings))
    profile_key = deps.embedder.profile.key()
    stored = store.get_meta("profile")
    if stored is not None and stored != profile_key:
        store.close()
        raise EmbeddingProfileMismatchError(
            f"collection {deps.collection!r} was built with embedding profile {stored}, "
            f"the active one is {profile_key}",
            where=str(path),
            hint="run the ingest again with --reindex (reindex=True) to rebuild it",
        )
    if stored is None:
        store.set_meta("profile", profile_key)
    return store, warnings
