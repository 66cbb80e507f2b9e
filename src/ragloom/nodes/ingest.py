"""Nodes of the incremental ingestion graph: plan → load → validate → chunk → embed → upsert → record.

Chroma is the source of truth. Plan settles unchanged sources from their stat (size, mtime) and
identity without reading them, so only changed work enters the batch loop. Each batch announces
the chunk ids it will touch (a manifest intent) before writing to Chroma and records its sources
in one manifest transaction only after their chunks are stored; finalize applies the manifest's
journal to the BM25 index. A crash at any point leaves an intent or a journal that the next run
replays, and counts that disagree trigger a full repair from Chroma, so the next run ends in the
state of one clean ingest while costing what changed.
"""

from __future__ import annotations

import logging
import math
import operator
import os
import shutil
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from collections.abc import Callable, Collection
from typing import Annotated, Any, Literal

import numpy as np
from langgraph.config import get_stream_writer
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from ragloom.errors import EmbeddingProfileMismatchError, LoadError, RejectedSourceError
from ragloom.ingestion.chunkers import Chunker, chunker_fingerprint
from ragloom.ingestion.loaders import (
    Expansion,
    FoundSource,
    SourceRef,
    Spec,
    expand_changed,
    expand_specs,
    parse_source,
    read_source,
    spec_origin,
    to_ref,
)
from ragloom.ingestion import injection_semantic
from ragloom.ingestion.validation import ValidationResult, scan_injection
from ragloom.nodes.trace import StageClock
from ragloom.providers.embeddings import Embedder
from ragloom.settings import IngestSettings, RagSettings
from ragloom.state import Chunk, IngestionReport, SourceDocument, SourceResult, TraceStep
from ragloom.stores import bm25, catalog
from ragloom.stores.base import DocumentIndex
from ragloom.stores.crashpoints import crashpoint
from ragloom.stores.manifest import (
    CLEAN_KEY,
    LAST_INGEST_KEY,
    DocEntry,
    ManifestStore,
    SourceEntry,
    SourceStat,
    fsync_path,
    remove_database,
    remove_temp_files,
)
from ragloom.stores.paths import DataPaths, shadow_collection
from ragloom.stores.quarantine import Quarantine, QuarantineRecord

log = logging.getLogger(__name__)

MAX_BATCHES = 1000
"""Upper bound on load→record loops per run; batches grow to fit, keeping the recursion limit fixed."""

NODES_PER_BATCH = 6
EVIDENCE_CHARS = 500
"""Longest evidence string kept in chunk metadata and quarantine reasons."""
TRACED_VERDICTS = 20
"""Suspicious or rejected documents named in the validate trace per batch."""
EMBED_GROUP_TEXTS = 64
"""Embed calls take the chunks of whole sources until they hold at least this many texts, so
progress is reported source by source without giving up batched encoding."""
SOURCE_DONE = "source_done"
"""Custom stream event (`stream_mode="custom"`): `{"event": SOURCE_DONE, "source_id": ...}`,
once for every changed source when its work up to the embeddings is done."""
RACY_NS = 2_000_000_000
"""A file modified this recently when it was read may change again within the same mtime tick:
its stat is not trusted next time (the bytes are hashed instead)."""


def ingest_recursion_limit() -> int:
    """Recursion limit of the ingest graph: every batch loop plus plan and finalize."""
    return NODES_PER_BATCH * MAX_BATCHES + 10


@dataclass
class IngestDeps:
    """Live components one ingestion run uses, bound into the nodes by the graph builder."""

    settings: RagSettings
    index: DocumentIndex
    embedder: Embedder
    chunker: Chunker
    paths: DataPaths
    manifest_file: Path | None = None
    """Where this run's manifest is, when not the collection's own (a reindex builds a shadow)."""

    @property
    def collection(self) -> str:
        """The collection being ingested into (its name, also while a reindex builds a shadow)."""
        return self.settings.collection

    def manifest(self) -> ManifestStore:
        """Open this run's manifest (close it after use: `with deps.manifest() as m:`)."""
        return ManifestStore(self.manifest_file or self.paths.manifest_file(self.collection))

    def quarantine(self) -> Quarantine:
        """The collection's quarantine."""
        return Quarantine(self.paths.quarantine_dir(self.collection))


class WorkItem(BaseModel):
    """One changed source travelling through a batch."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    ref: SourceRef
    raw_hash: str
    old: SourceEntry | None = None
    documents: list[SourceDocument] = Field(default_factory=list)
    kept: dict[str, DocEntry] = Field(default_factory=dict)
    chunks: list[Chunk] = Field(default_factory=list)
    quarantined: bool = False
    result: SourceResult

    @property
    def dropped(self) -> bool:
        """The source ends with nothing stored (quarantined or failed): its old chunks go."""
        return self.quarantined or self.result.status == "failed"


def _sum_ms(left: dict[str, float], right: dict[str, float]) -> dict[str, float]:
    merged = dict(left)
    for key, value in right.items():
        merged[key] = merged.get(key, 0.0) + value
    return merged


class IngestInput(TypedDict, total=False):
    """Input schema of the ingestion graph."""

    sources: list[str]
    reindex: bool
    changed: list[str] | None
    """A change feed: the paths edited, created or deleted since the last run (None: list the
    sources whole). Only these are looked at."""


class IngestOutput(TypedDict, total=False):
    """Output schema of the ingestion graph."""

    report: IngestionReport


class IngestState(TypedDict, total=False):
    """Working state of the ingestion graph: changed work only (the manifest stays on disk)."""

    sources: list[str]
    reindex: bool
    changed: list[str] | None
    pending: list[SourceRef]
    batch_size: int
    removals: list[str]
    quarantine_gone: list[str]
    skipped: dict[str, str]
    batch: list[WorkItem]
    embeddings: Any
    intent: int | None
    settled: list[str]
    results: Annotated[list[SourceResult], operator.add]
    warnings: Annotated[list[str], operator.add]
    stage_ms: Annotated[dict[str, float], _sum_ms]
    trace: Annotated[list[TraceStep], operator.add]
    report: IngestionReport


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _loader_identity(source_id: str, kind: str, settings: IngestSettings) -> str:
    """The loader options that decide a source's documents (CSV rows or whole files)."""
    if kind == "url" or source_id.lower().endswith(".csv"):
        return f"|csv_mode={settings.csv_mode}"
    return ""


def source_identity(ref: SourceRef, settings: RagSettings) -> str:
    """Everything besides its bytes that decides a source's chunks: the chunker settings and the
    loader options of its format. A change re-chunks the source on the next ingest."""
    return chunker_fingerprint(settings.chunker) + _loader_identity(ref.source_id, ref.kind,
                                                                    settings.ingest)


def _legacy_identity(settings: RagSettings) -> Callable[[str, str], str]:
    """Identity of a source migrated from a JSON manifest: its chunker, today's loader options."""
    def identity_of(source_id: str, chunker: str) -> str:
        kind = "url" if "://" in source_id else "file"
        return chunker + _loader_identity(source_id, kind, settings.ingest)
    return identity_of


def _report_done(source_ids: list[str]) -> None:
    """Tell a streaming caller (progress bars) that these sources are done.

    A no-op outside a graph run.
    """
    try:
        writer = get_stream_writer()
    except RuntimeError:  # the node was called directly, not by a graph
        return
    for source_id in source_ids:
        writer({"event": SOURCE_DONE, "source_id": source_id})


def _trusted_stat(ref: SourceRef) -> tuple[int, int]:
    """(size, mtime_ns) to record for a file; (-1, -1) when unknown or too recent to trust."""
    if ref.size is None or ref.mtime_ns is None or time.time_ns() - ref.mtime_ns < RACY_NS:
        return -1, -1
    return ref.size, ref.mtime_ns


# ------------------------------------------------------------------------------------------ plan


def _target(state: IngestState, deps: IngestDeps) -> IngestDeps:
    """The deps this run writes through: a reindex builds a shadow collection and manifest beside
    the live ones and swaps them in at finalize, so readers see the old state until then."""
    if not state.get("reindex"):
        return deps
    return replace(deps, index=deps.index.sibling(shadow_collection(deps.collection)),
                   manifest_file=deps.paths.reindex_manifest_file(deps.collection))


def _recover_reindex(deps: IngestDeps) -> list[str]:
    """Settle what an interrupted reindex left: its shadow collection and manifest go, and a live
    collection it had renamed aside comes back."""
    notes: list[str] = []
    recover = getattr(deps.index, "recover_swap", None)
    if recover is not None:
        notes = recover(shadow_collection(deps.collection))
    remove_database(deps.paths.reindex_manifest_file(deps.collection))
    return notes


def _finish_deletion(deps: IngestDeps) -> list[str]:
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


def _clean_leftovers(deps: IngestDeps) -> list[str]:
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


def _repair_intents(store: ManifestStore, index: DocumentIndex) -> list[str]:
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


def _check_store(store: ManifestStore, index: DocumentIndex) -> list[str]:
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


def _open_manifest(deps: IngestDeps) -> tuple[ManifestStore, list[str]]:
    path = deps.manifest_file or deps.paths.manifest_file(deps.collection)
    store, warnings = ManifestStore.open(path, legacy=deps.paths.legacy_manifest_file(deps.collection),
                                         identity_of=_legacy_identity(deps.settings))
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


def _settle(found: list[FoundSource], stats: dict[str, SourceStat],
            settings: RagSettings) -> tuple[list[SourceRef], list[str]]:
    """Split found sources into changed refs and the ids of those unchanged by stat and
    identity (no file is opened, no per-source object is built for them)."""
    chunker = chunker_fingerprint(settings.chunker)
    csv_identity = chunker + _loader_identity("x.csv", "file", settings.ingest)
    pending: list[SourceRef] = []
    unchanged: list[str] = []
    for item in found:
        source_id, _origin, kind, size, mtime_ns = item
        recorded = stats.get(source_id)
        if (
            recorded is not None
            and kind == "file"
            and recorded.mtime_ns >= 0
            and recorded.size == size
            and recorded.mtime_ns == mtime_ns
            and recorded.identity == (csv_identity if source_id[-4:].lower() == ".csv" else chunker)
        ):
            unchanged.append(source_id)
        else:
            pending.append(to_ref(item))
    return pending, unchanged


def _vanished(specs: list[Spec], seen: Collection[str], candidates: list[str]) -> list[str]:
    """Candidates covered by a spec of this run that the expansion no longer lists."""
    return [sid for sid in candidates if sid not in seen and any(s.covers(sid) for s in specs)]


def _expand(state: IngestState, store: ManifestStore,
            settings: RagSettings) -> tuple[Expansion, dict[str, SourceStat], list[str]]:
    """The sources found, the recorded stats to settle them against, and the recorded sources
    that may have vanished: every one after a full listing; with a change feed (`changed`), only
    those at or under the changed paths."""
    specs = list(state.get("sources", []))
    follow = settings.ingest.follow_symlinks
    changed = state.get("changed")
    if changed is None:
        found = expand_specs(specs, follow_symlinks=follow)
        stats = store.stats()
        return found, stats, list(stats)
    found = expand_changed(specs, changed, follow_symlinks=follow)
    candidates = store.source_ids_within(found.scope or [])
    return found, store.stats_of([*found.found, *candidates]), candidates


def plan(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Repair what a crash left, expand the sources, settle unchanged ones, find vanished ones."""
    with StageClock("plan") as step:
        finished = _finish_deletion(deps)
        leftovers = _clean_leftovers(deps)
        recovered = [*finished, *_recover_reindex(deps)]
        deps = _target(state, deps)
        store, warnings = _open_manifest(deps)
        warnings = [*recovered, *warnings]
        with store:
            repairs = _repair_intents(store, deps.index) + _check_store(store, deps.index)
            warnings.extend(repairs)
            found, stats, candidates = _expand(state, store, deps.settings)
            removals = _vanished(found.specs, found.found.keys(), candidates)
            pending, unchanged = _settle(list(found.found.values()), stats, deps.settings)
        quarantined = [q for q in deps.quarantine().source_ids() if found.in_scope(q)]
        quarantine_gone = _vanished(found.specs, found.found.keys(), quarantined)
        covering = {spec.origin for spec in found.specs if any(spec.covers(s) for s in removals)}
        errors = [(spec, msg) for spec, msg in found.errors if spec_origin(spec) not in covering]
        failed = [SourceResult(source_id=spec, status="failed", errors=[msg]) for spec, msg in errors]
        if found.scope is not None:
            step.detail["change_feed"] = len(found.scope)
        step.detail.update(sources=len(found.found), unchanged=len(unchanged), changed=len(pending),
                           vanished=len(removals), skipped=len(found.skipped),
                           spec_errors=len(errors), repairs=len(repairs),
                           leftovers_removed=len(leftovers))
    batch_size = max(deps.settings.ingest.batch_sources, math.ceil(len(pending) / MAX_BATCHES))
    return {
        "pending": pending,
        "batch_size": batch_size,
        "removals": removals,
        "quarantine_gone": quarantine_gone,
        "skipped": found.skipped,
        "settled": unchanged,
        "results": failed,
        "warnings": warnings,
        "stage_ms": {"plan": step.elapsed_ms()},
        "trace": step.trace(),
    }


# ------------------------------------------------------------------------------------------ load


def _quarantine(deps: IngestDeps, ref: SourceRef, doc_id: str, err: RejectedSourceError,
                excerpt: str) -> None:
    deps.quarantine().add(
        QuarantineRecord(
            source_id=ref.source_id,
            doc_id=doc_id,
            reason=err.what,
            signals=err.signals,
            content_hash=err.content_hash,
            excerpt=excerpt[:500],
            quarantined_at=_now(),
            collection=deps.collection,
        )
    )


def _failed(ref: SourceRef, old: SourceEntry | None, message: str) -> WorkItem | SourceResult:
    """A source that could not be read or parsed; a stored old version is removed with it."""
    result = SourceResult(source_id=ref.source_id, status="failed", errors=[message])
    if old is None:
        return result
    result.old_version = "removed"
    return WorkItem(ref=ref, raw_hash="", old=old, result=result)


def _read_and_parse(ref: SourceRef, old: SourceEntry | None, identity: str,
                    settings: IngestSettings, touched: dict[str, tuple[int, int]],
                    deps: IngestDeps) -> WorkItem | SourceResult:
    raw = read_source(ref, settings)
    if old is not None and old.content_hash == raw.content_hash and old.identity == identity:
        touched[ref.source_id] = _trusted_stat(ref)
        return SourceResult(source_id=ref.source_id, status="unchanged", documents=len(old.docs),
                            chunks=len(old.chunk_ids()))
    deps.quarantine().remove(ref.source_id)  # validate records what is still rejected
    documents = parse_source(raw, settings, deps.settings.resolved_cache_dir())
    status = "ingested" if old is None else "updated"
    return WorkItem(ref=ref, raw_hash=raw.content_hash, old=old, documents=documents,
                    result=SourceResult(source_id=ref.source_id, status=status,
                                        documents=len(documents)))


def _load_one(ref: SourceRef, old: SourceEntry | None, deps: IngestDeps,
              touched: dict[str, tuple[int, int]]) -> WorkItem | SourceResult:
    """Read and parse one source; any failure fails this source only."""
    identity = source_identity(ref, deps.settings)
    try:
        return _read_and_parse(ref, old, identity, deps.settings.ingest, touched, deps)
    except RejectedSourceError as err:
        deps.quarantine().remove(ref.source_id)
        _quarantine(deps, ref, ref.source_id, err, excerpt="")
        return WorkItem(ref=ref, raw_hash=err.content_hash, old=old, quarantined=True,
                        result=SourceResult(source_id=ref.source_id, status="quarantined",
                                            errors=[str(err)], signals=err.signals,
                                            old_version="removed" if old else None))
    except LoadError as err:
        return _failed(ref, old, str(err))
    except Exception as exc:  # a loader bug or hostile input must not sink the batch
        log.exception("unexpected error loading %s", ref.source_id)
        return _failed(ref, old, f"unexpected error while loading: {type(exc).__name__}: {exc}")


def load(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Read the next batch of changed sources; those whose bytes did not change are settled here."""
    deps = _target(state, deps)
    with StageClock("load") as step:
        pending = list(state.get("pending", []))
        size = state.get("batch_size", deps.settings.ingest.batch_sources)
        current, rest = pending[:size], pending[size:]
        batch: list[WorkItem] = []
        settled: list[SourceResult] = []
        touched: dict[str, tuple[int, int]] = {}
        with deps.manifest() as store:
            old = store.entries(ref.source_id for ref in current)
            for ref in current:
                outcome = _load_one(ref, old.get(ref.source_id), deps, touched)
                if isinstance(outcome, WorkItem):
                    batch.append(outcome)
                else:
                    settled.append(outcome)
            store.touch(touched)
        _report_done([r.source_id for r in settled])
        step.detail.update(sources=len(current), to_process=len(batch), settled=len(settled))
    return {"pending": rest, "batch": batch, "results": settled,
            "stage_ms": {"load": step.elapsed_ms()}, "trace": step.trace()}


# -------------------------------------------------------------------------------------- validate


def _flagged(metadata: dict[str, Any], verdict: ValidationResult) -> dict[str, Any]:
    """Metadata with the suspicious flag, the signals and the why of a verdict."""
    return {
        **metadata,
        "suspicious": True,
        "injection_signals": ",".join(verdict.signals),
        "injection_score": verdict.score,
        "injection_evidence": " | ".join(verdict.evidence)[:EVIDENCE_CHARS],
    }


def _flag(doc: SourceDocument, verdict: ValidationResult) -> SourceDocument:
    """Mark a suspicious document: every chunk of it carries the flag, the signals and the why."""
    return doc.model_copy(update={"metadata": _flagged(doc.metadata, verdict)})


def _quarantine_reason(verdict: ValidationResult) -> str:
    reason = verdict.reason
    if verdict.status == "suspicious":
        reason += " (quarantined because ingest.quarantine_suspicious is on)"
    if verdict.evidence:
        reason += "; evidence: " + "; ".join(verdict.evidence)
    return reason[:EVIDENCE_CHARS]


def validate(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Scan every document for prompt injection; quarantine rejected ones, flag suspicious ones.

    With `ingest.quarantine_suspicious` on, suspicious documents are quarantined too.
    """
    with StageClock("validate") as step:
        settings = deps.settings.ingest
        counts = {"clean": 0, "suspicious": 0, "rejected": 0}
        held: list[str] = []
        batch: list[WorkItem] = []
        for item in state.get("batch", []):
            kept: list[SourceDocument] = []
            result = item.result.model_copy()
            for doc in item.documents:
                verdict = scan_injection(doc, budget_s=settings.scan_budget_s)
                counts[verdict.status] += 1
                if verdict.status != "clean":
                    result.signals = sorted(set(result.signals) | set(verdict.signals))
                    held.append(f"{doc.doc_id}: {verdict.status} {verdict.score:.2f}")
                if verdict.status == "rejected" or (
                    verdict.status == "suspicious" and settings.quarantine_suspicious
                ):
                    reason = _quarantine_reason(verdict)
                    err = RejectedSourceError(reason, where=doc.doc_id, signals=verdict.signals,
                                              content_hash=doc.content_hash)
                    _quarantine(deps, item.ref, doc.doc_id, err, excerpt=doc.text)
                    result.quarantined_documents += 1
                    result.errors.append(f"{doc.doc_id}: quarantined: {verdict.reason}")
                    continue
                if verdict.status == "suspicious":
                    doc = _flag(doc, verdict)
                    result.suspicious_documents += 1
                kept.append(doc)
            quarantined = item.quarantined or (bool(item.documents) and not kept)
            if quarantined and not item.quarantined:
                result.status = "quarantined"
            batch.append(item.model_copy(update={"documents": kept, "quarantined": quarantined,
                                                 "result": result}))
        step.detail.update(counts, quarantine_suspicious=settings.quarantine_suspicious,
                           held=held[:TRACED_VERDICTS])
    return {"batch": batch, "stage_ms": {"validate": step.elapsed_ms()}, "trace": step.trace()}


# ----------------------------------------------------------------------------------------- chunk


def _chunk_item(item: WorkItem, deps: IngestDeps, identity: str) -> WorkItem:
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


# ----------------------------------------------------------------------------------------- embed


def embed(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Embed every new chunk of the batch, whole sources at a time, reporting each source done."""
    with StageClock("embed") as step:
        parts: list[np.ndarray] = []
        group: list[WorkItem] = []
        items = state.get("batch", [])
        for n, item in enumerate(items):
            group.append(item)
            texts = [c.text for i in group for c in i.chunks]
            if len(texts) >= EMBED_GROUP_TEXTS or n == len(items) - 1:
                if texts:
                    parts.append(np.asarray(deps.embedder.embed_array(texts)))
                _report_done([i.ref.source_id for i in group])
                group = []
        dimension = deps.embedder.profile.dimension
        vectors = np.concatenate(parts) if parts else np.zeros((0, dimension), dtype=np.float32)
        step.detail.update(embeddings=len(vectors), calls=len(parts),
                           model=deps.embedder.profile.key())
        update: dict[str, Any] = {}
        stage_ms: dict[str, float] = {}
        if deps.settings.ingest.semantic_screen:
            reason = injection_semantic.unsuited(deps.embedder)
            if reason is None:
                start = time.perf_counter()
                update["batch"] = _semantic_screen(items, deps, step)
                stage_ms["semantic_screen"] = (time.perf_counter() - start) * 1000
            else:
                step.note(semantic_off=reason)
    # semantic_screen: the part of embed the semantic layer took
    return {**update, "embeddings": vectors,
            "stage_ms": {"embed": step.elapsed_ms(), **stage_ms}, "trace": step.trace()}


def _semantic_screen(items: list[WorkItem], deps: IngestDeps, step: StageClock) -> list[WorkItem]:
    """Flag the new documents the rules found clean that hold a sentence addressed to a model.

    The sentences with a cue of address (`injection_semantic.document_windows`) of every such
    document in the batch are embedded and scored together, `SCORE_WINDOWS` at a time.
    """
    detector = injection_semantic.injection_detector(deps.embedder,
                                                     deps.settings.resolved_cache_dir())
    clean = ValidationResult(status="clean")
    windows = {(i, d.doc_id): injection_semantic.document_windows(d)
               for i, item in enumerate(items) for d in item.documents
               if not any(c.metadata.get("suspicious") for c in item.chunks if c.doc_id == d.doc_id)}
    flat = [w for ws in windows.values() for w in ws]
    probabilities = detector.score(flat, deps.embedder.embed_array)
    verdicts: dict[tuple[int, str], ValidationResult] = {}
    offset = 0
    for key, ws in windows.items():
        verdict = detector.verdict(clean, ws, probabilities[offset:offset + len(ws)])
        offset += len(ws)
        if verdict.status == "suspicious":
            verdicts[key] = verdict
    batch = []
    for i, item in enumerate(items):
        flagged = {doc_id: v for (n, doc_id), v in verdicts.items() if n == i}
        if not flagged:
            batch.append(item)
            continue
        result = item.result.model_copy()
        result.suspicious_documents += len(flagged)
        result.signals = sorted({*result.signals, "semantic"})
        chunks = [c.model_copy(update={"metadata": _flagged(c.metadata, flagged[c.doc_id])})
                  if c.doc_id in flagged else c for c in item.chunks]
        batch.append(item.model_copy(update={"chunks": chunks, "result": result}))
    step.detail.update(semantic_windows=len(flat), semantic_flagged=[
        f"{doc_id}: {v.evidence[0]}" for (_, doc_id), v in verdicts.items()][:TRACED_VERDICTS])
    return batch


# ---------------------------------------------------------------------------------------- upsert


def _stale_ids(item: WorkItem) -> list[str]:
    if item.old is None:
        return []
    keep = {cid for doc in item.kept.values() for cid in doc.chunk_ids}
    return [cid for cid in item.old.chunk_ids() if cid not in keep]


def upsert(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Announce the batch's chunk ids, delete the stale chunks and store the new ones."""
    deps = _target(state, deps)
    with StageClock("upsert") as step:
        batch = state.get("batch", [])
        stale = [cid for item in batch for cid in _stale_ids(item)]
        chunks = [c for item in batch for c in item.chunks]
        intent = None
        if stale or chunks:
            touched = [item.ref.source_id for item in batch if item.chunks or _stale_ids(item)]
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


# ---------------------------------------------------------------------------------------- record


def _entry(item: WorkItem, identity: str) -> SourceEntry:
    docs = {doc_id: entry.model_copy() for doc_id, entry in item.kept.items()}
    for c in item.chunks:
        docs.setdefault(c.doc_id, DocEntry(content_hash="", chunk_ids=[])).chunk_ids.append(c.id)
    hashes = {doc.doc_id: doc.content_hash for doc in item.documents}
    for doc_id, entry in docs.items():
        entry.content_hash = hashes.get(doc_id, entry.content_hash)
    size, mtime_ns = _trusted_stat(item.ref)
    return SourceEntry(identity=identity, content_hash=item.raw_hash, size=size, mtime_ns=mtime_ns,
                       docs=docs, recorded_at=_now())


def record(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Record the batch's stored sources in one manifest transaction, after they are stored."""
    deps = _target(state, deps)
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
                         deleted_ids=[cid for item in batch for cid in _stale_ids(item)],
                         added_ids=[c.id for item in batch for c in item.chunks],
                         intent=state.get("intent"))
        step.detail.update(recorded=len(entries), dropped=len(dropped))
    return {"batch": [], "intent": None, "results": results,
            "stage_ms": {"record": step.elapsed_ms()}, "trace": step.trace()}


def route_next_batch(state: IngestState) -> Literal["load", "finalize"]:
    """Go to the next batch while sources are pending, else finalize."""
    return "load" if state.get("pending") else "finalize"


# -------------------------------------------------------------------------------------- finalize


def _remove_vanished(state: IngestState, deps: IngestDeps,
                     store: ManifestStore) -> list[SourceResult]:
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


def _rebuild_bm25(deps: IngestDeps, store: ManifestStore, reason: str) -> str:
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


def _swap_in(live: IngestDeps, shadow: IngestDeps, store: ManifestStore) -> str:
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


def finalize(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Remove sources gone from the specs, apply the journal to BM25, write the report."""
    run = _target(state, deps)
    with StageClock("finalize") as step:
        with run.manifest() as store:
            store.set_meta(LAST_INGEST_KEY, _now())
            removed = _remove_vanished(state, run, store)
            quarantine = deps.quarantine()
            for source_id in state.get("quarantine_gone", []):
                quarantine.remove(source_id)
            start = time.perf_counter()
            if run is deps:
                bm25_status = sync_bm25(deps, store)
                store.set_meta(CLEAN_KEY, "1")
            else:  # a reindex: its manifest is swapped in; the next run checks the counts
                bm25_status = _swap_in(deps, run, store)
            bm25_ms = (time.perf_counter() - start) * 1000
        step.detail.update(removed=len(removed), bm25=bm25_status, bm25_ms=round(bm25_ms, 1))
    own_ms = {"finalize": step.elapsed_ms() - bm25_ms, "bm25": bm25_ms}
    stage_ms = _sum_ms(state.get("stage_ms", {}), own_ms)
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
