"""Nodes of the incremental ingestion graph: plan → load → validate → chunk → embed → upsert → record.

Chroma is the source of truth. The manifest records a source only after its chunks are stored, and
the BM25 index is rebuilt from Chroma whenever the two disagree, so a crash at any point leaves
state that the next run repairs into the state of one clean ingest.
"""

from __future__ import annotations

import logging
import math
import operator
import shutil
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from ragloom.errors import EmbeddingProfileMismatchError, LoadError, RejectedSourceError
from ragloom.ingest.chunkers import Chunker, chunker_fingerprint
from ragloom.ingest.loaders import SourceRef, expand_sources, parse_source, read_source, spec_origin
from ragloom.ingest.validation import ValidationResult, scan_injection
from ragloom.nodes.trace import StageClock
from ragloom.providers.embeddings import Embedder
from ragloom.settings import RagSettings
from ragloom.state import Chunk, IngestionReport, SourceDocument, SourceResult, TraceStep
from ragloom.stores.base import DocumentIndex
from ragloom.stores.bm25 import Bm25Index, ids_revision
from ragloom.stores.manifest import DocEntry, Manifest, SourceEntry, load_manifest, save_manifest
from ragloom.stores.paths import DataPaths
from ragloom.stores.quarantine import Quarantine, QuarantineRecord

log = logging.getLogger(__name__)

MAX_BATCHES = 1000
"""Upper bound on load→record loops per run; batches grow to fit, keeping the recursion limit fixed."""

NODES_PER_BATCH = 6
EVIDENCE_CHARS = 500
"""Longest evidence string kept in chunk metadata and quarantine reasons."""
TRACED_VERDICTS = 20
"""Suspicious or rejected documents named in the validate trace per batch."""


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

    @property
    def collection(self) -> str:
        """The collection being ingested into."""
        return self.index.collection


class WorkItem(BaseModel):
    """One source travelling through a batch."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    ref: SourceRef
    raw_hash: str
    old: SourceEntry | None = None
    documents: list[SourceDocument] = Field(default_factory=list)
    kept: dict[str, DocEntry] = Field(default_factory=dict)
    chunks: list[Chunk] = Field(default_factory=list)
    quarantined: bool = False
    result: SourceResult


def _sum_ms(left: dict[str, float], right: dict[str, float]) -> dict[str, float]:
    merged = dict(left)
    for key, value in right.items():
        merged[key] = merged.get(key, 0.0) + value
    return merged


class IngestInput(TypedDict, total=False):
    """Input schema of the ingestion graph."""

    sources: list[str]
    reindex: bool


class IngestOutput(TypedDict, total=False):
    """Output schema of the ingestion graph."""

    report: IngestionReport


class IngestState(TypedDict, total=False):
    """Working state of the ingestion graph."""

    sources: list[str]
    reindex: bool
    manifest: Manifest
    pending: list[SourceRef]
    batch_size: int
    seen: list[str]
    origins: list[str]
    batch: list[WorkItem]
    embeddings: Any
    changed: bool
    results: Annotated[list[SourceResult], operator.add]
    warnings: Annotated[list[str], operator.add]
    stage_ms: Annotated[dict[str, float], _sum_ms]
    trace: Annotated[list[TraceStep], operator.add]
    report: IngestionReport


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _reset_collection(deps: IngestDeps) -> None:
    deps.index.drop()
    deps.paths.manifest_file(deps.collection).unlink(missing_ok=True)
    shutil.rmtree(deps.paths.bm25_dir(deps.collection), ignore_errors=True)


def _repair(manifest: Manifest, index: DocumentIndex) -> list[str]:
    """Make the manifest and Chroma agree: drop entries with missing chunks, delete orphan chunks."""
    notes: list[str] = []
    stored = set(index.all_ids())
    for source_id, entry in list(manifest.sources.items()):
        ids = {cid for doc in entry.docs.values() for cid in doc.chunk_ids}
        if not ids <= stored:
            del manifest.sources[source_id]
            notes.append(f"repaired: {source_id} had chunks missing from the store; it is re-ingested")
    orphans = sorted(stored - manifest.chunk_ids())
    if orphans:
        index.delete_ids(orphans)
        notes.append(f"repaired: removed {len(orphans)} unrecorded chunk(s) left by an interrupted run")
    return notes


def plan(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Expand the sources, load and check the manifest, and repair it against the store."""
    with StageClock("plan") as step:
        warnings: list[str] = []
        if state.get("reindex"):
            _reset_collection(deps)
        profile_key = deps.embedder.profile.key()
        path = deps.paths.manifest_file(deps.collection)
        manifest, warning = load_manifest(path)
        if warning:
            warnings.append(f"{warning}; falling back to a full ingest")
        if manifest is not None and manifest.embedding_profile != profile_key:
            raise EmbeddingProfileMismatchError(
                f"collection {deps.collection!r} was built with embedding profile "
                f"{manifest.embedding_profile}, the active one is {profile_key}",
                where=str(path),
                hint="run the ingest again with --reindex (reindex=True) to rebuild it",
            )
        if manifest is None:
            manifest = Manifest(collection=deps.collection, embedding_profile=profile_key)
        repairs = _repair(manifest, deps.index)
        if repairs:
            save_manifest(path, manifest)
        warnings.extend(repairs)
        refs, errors = expand_sources(list(state.get("sources", [])))
        failed = [SourceResult(source_id=spec, status="failed", errors=[msg]) for spec, msg in errors]
        failed_specs = {spec for spec, _ in errors}
        origins = sorted({spec_origin(s) for s in state.get("sources", []) if s not in failed_specs})
        step.detail.update(sources=len(refs), spec_errors=len(errors), repairs=len(repairs))
    batch_size = max(deps.settings.ingest.batch_sources, math.ceil(len(refs) / MAX_BATCHES))
    return {
        "manifest": manifest,
        "pending": refs,
        "batch_size": batch_size,
        "seen": [ref.source_id for ref in refs],
        "origins": origins,
        "changed": bool(state.get("reindex")) or bool(repairs),
        "results": failed,
        "warnings": warnings,
        "stage_ms": {"plan": step.elapsed_ms()},
        "trace": step.trace(),
    }


def _quarantine(deps: IngestDeps, ref: SourceRef, doc_id: str, err: RejectedSourceError,
                excerpt: str) -> None:
    Quarantine(deps.paths.quarantine_dir(deps.collection)).add(
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


def _load_one(ref: SourceRef, manifest: Manifest, deps: IngestDeps,
              fingerprint: str) -> WorkItem | SourceResult:
    old = manifest.sources.get(ref.source_id)
    try:
        raw = read_source(ref, deps.settings.ingest)
        if old is not None and old.content_hash == raw.content_hash and old.chunker == fingerprint:
            chunks = sum(len(doc.chunk_ids) for doc in old.docs.values())
            return SourceResult(source_id=ref.source_id, status="unchanged",
                                documents=len(old.docs), chunks=chunks)
        documents = parse_source(raw, deps.settings.ingest)
    except RejectedSourceError as err:
        _quarantine(deps, ref, ref.source_id, err, excerpt="")
        return WorkItem(ref=ref, raw_hash=err.content_hash, old=old, quarantined=True,
                        result=SourceResult(source_id=ref.source_id, status="quarantined",
                                            errors=[str(err)], signals=err.signals))
    except LoadError as err:
        return SourceResult(source_id=ref.source_id, status="failed", errors=[str(err)])
    status = "ingested" if old is None else "updated"
    return WorkItem(ref=ref, raw_hash=raw.content_hash, old=old, documents=documents,
                    result=SourceResult(source_id=ref.source_id, status=status,
                                        documents=len(documents)))


def load(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Read the next batch of sources; unchanged ones are settled here without parsing."""
    with StageClock("load") as step:
        pending = list(state.get("pending", []))
        size = state.get("batch_size", deps.settings.ingest.batch_sources)
        current, rest = pending[:size], pending[size:]
        fingerprint = chunker_fingerprint(deps.settings.chunker)
        batch: list[WorkItem] = []
        settled: list[SourceResult] = []
        for ref in current:
            outcome = _load_one(ref, state["manifest"], deps, fingerprint)
            (batch if isinstance(outcome, WorkItem) else settled).append(outcome)
        step.detail.update(sources=len(current), to_process=len(batch), settled=len(settled))
    return {"pending": rest, "batch": batch, "results": settled,
            "stage_ms": {"load": step.elapsed_ms()}, "trace": step.trace()}


def _flag(doc: SourceDocument, verdict: ValidationResult) -> SourceDocument:
    """Mark a suspicious document: every chunk of it carries the flag, the signals and the why."""
    metadata = {
        **doc.metadata,
        "suspicious": True,
        "injection_signals": ",".join(verdict.signals),
        "injection_score": verdict.score,
        "injection_evidence": " | ".join(verdict.evidence)[:EVIDENCE_CHARS],
    }
    return doc.model_copy(update={"metadata": metadata})


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


def chunk(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Split new and changed documents; unchanged documents of a changed source keep their chunks."""
    with StageClock("chunk") as step:
        fingerprint = chunker_fingerprint(deps.settings.chunker)
        batch: list[WorkItem] = []
        for item in state.get("batch", []):
            old_docs = item.old.docs if item.old is not None and item.old.chunker == fingerprint else {}
            kept: dict[str, DocEntry] = {}
            chunks: list[Chunk] = []
            for doc in item.documents:
                previous = old_docs.get(doc.doc_id)
                if previous is not None and previous.content_hash == doc.content_hash:
                    kept[doc.doc_id] = previous
                else:
                    chunks.extend(deps.chunker.split(doc))
            batch.append(item.model_copy(update={"kept": kept, "chunks": chunks}))
        step.detail.update(chunks=sum(len(i.chunks) for i in batch),
                           unchanged_documents=sum(len(i.kept) for i in batch),
                           chunker=deps.settings.chunker.name)
    return {"batch": batch, "stage_ms": {"chunk": step.elapsed_ms()}, "trace": step.trace()}


def embed(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Embed every new chunk of the batch in one batched call."""
    with StageClock("embed") as step:
        texts = [c.text for item in state.get("batch", []) for c in item.chunks]
        vectors = deps.embedder.embed_array(texts)
        step.detail.update(embeddings=len(texts), model=deps.embedder.profile.key())
    return {"embeddings": vectors, "stage_ms": {"embed": step.elapsed_ms()},
            "trace": step.trace()}


def _stale_ids(item: WorkItem) -> list[str]:
    if item.old is None:
        return []
    keep = {cid for doc in item.kept.values() for cid in doc.chunk_ids}
    return [cid for doc in item.old.docs.values() for cid in doc.chunk_ids if cid not in keep]


def upsert(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Delete the stale chunks of changed sources and store the new chunks with their vectors."""
    with StageClock("upsert") as step:
        batch = state.get("batch", [])
        stale = [cid for item in batch for cid in _stale_ids(item)]
        if stale:
            deps.index.delete_ids(stale)
        chunks = [c for item in batch for c in item.chunks]
        vectors = state.get("embeddings")
        if chunks:
            deps.index.upsert(chunks, np.asarray(vectors))
        step.detail.update(deleted=len(stale), upserted=len(chunks))
    return {"changed": state.get("changed", False) or bool(stale or chunks),
            "embeddings": None, "stage_ms": {"upsert": step.elapsed_ms()},
            "trace": step.trace()}


def _entry(item: WorkItem, fingerprint: str) -> SourceEntry:
    docs = dict(item.kept)
    for c in item.chunks:
        docs.setdefault(c.doc_id, DocEntry(content_hash="", chunk_ids=[])).chunk_ids.append(c.id)
    hashes = {doc.doc_id: doc.content_hash for doc in item.documents}
    for doc_id, entry in docs.items():
        entry.content_hash = hashes.get(doc_id, entry.content_hash)
    return SourceEntry(origin=item.ref.origin, content_hash=item.raw_hash, chunker=fingerprint,
                       docs=docs, recorded_at=_now())


def record(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Record the batch's stored sources in the manifest, atomically, only after they are stored."""
    with StageClock("record") as step:
        fingerprint = chunker_fingerprint(deps.settings.chunker)
        manifest = state["manifest"].model_copy(deep=True)
        results: list[SourceResult] = []
        for item in state.get("batch", []):
            result = item.result.model_copy()
            if item.quarantined:
                manifest.sources.pop(item.ref.source_id, None)
            else:
                entry = _entry(item, fingerprint)
                manifest.sources[item.ref.source_id] = entry
                result.chunks = sum(len(d.chunk_ids) for d in entry.docs.values())
                result.embeddings_computed = len(item.chunks)
            results.append(result)
        save_manifest(deps.paths.manifest_file(deps.collection), manifest)
        step.detail.update(recorded=len(results))
    return {"manifest": manifest, "batch": [], "results": results,
            "stage_ms": {"record": step.elapsed_ms()}, "trace": step.trace()}


def route_next_batch(state: IngestState) -> Literal["load", "finalize"]:
    """Go to the next batch while sources are pending, else finalize."""
    return "load" if state.get("pending") else "finalize"


def _remove_vanished(state: IngestState, deps: IngestDeps,
                     manifest: Manifest) -> list[SourceResult]:
    seen = set(state.get("seen", []))
    origins = set(state.get("origins", []))
    gone = [sid for sid, entry in manifest.sources.items()
            if entry.origin in origins and sid not in seen]
    results: list[SourceResult] = []
    for source_id in gone:
        entry = manifest.sources.pop(source_id)
        ids = [cid for doc in entry.docs.values() for cid in doc.chunk_ids]
        if ids:
            deps.index.delete_ids(ids)
        results.append(SourceResult(source_id=source_id, status="removed", chunks=len(ids)))
    return results


def _sync_bm25(deps: IngestDeps, changed: bool) -> str:
    directory = deps.paths.bm25_dir(deps.collection)
    current = Bm25Index.load(directory)
    if not changed and current is not None and current.revision == ids_revision(deps.index.all_ids()):
        return "in sync"
    Bm25Index.build(deps.index.all_chunks(), directory)
    return "rebuilt"


def finalize(state: IngestState, deps: IngestDeps) -> dict[str, Any]:
    """Remove sources gone from re-ingested directories or globs, sync BM25, write the report."""
    with StageClock("finalize") as step:
        manifest = state["manifest"].model_copy(deep=True)
        removed = _remove_vanished(state, deps, manifest)
        if removed:
            save_manifest(deps.paths.manifest_file(deps.collection), manifest)
        bm25 = _sync_bm25(deps, state.get("changed", False) or bool(removed))
        step.detail.update(removed=len(removed), bm25=bm25)
    stage_ms = _sum_ms(state.get("stage_ms", {}), {"finalize": step.elapsed_ms()})
    report = IngestionReport(
        collection=deps.collection,
        sources=sorted([*state.get("results", []), *removed], key=lambda r: r.source_id),
        stage_ms={k: round(v, 1) for k, v in stage_ms.items()},
        total_ms=round(sum(stage_ms.values()), 1),
        reindexed=bool(state.get("reindex")),
        warnings=list(state.get("warnings", [])),
    )
    return {"report": report, "manifest": manifest, "trace": step.trace()}
