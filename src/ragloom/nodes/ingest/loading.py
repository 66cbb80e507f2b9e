"""The load node: read and parse the next batch of changed sources."""

from __future__ import annotations

import logging
from typing import Any

from ragloom.errors import LoadError, RejectedSourceError
from ragloom.ingestion.loaders import SourceRef, parse_source, read_source
from ragloom.nodes.ingest.deps import IngestDeps, write_target
from ragloom.nodes.ingest.identity import source_identity, trusted_stat
from ragloom.nodes.ingest.progress import report_done
from ragloom.nodes.ingest.schema import IngestState, WorkItem
from ragloom.nodes.ingest.verdicts import quarantine
from ragloom.nodes.trace import StageClock
from ragloom.settings import IngestSettings
from ragloom.state import SourceResult
from ragloom.stores.manifest import SourceEntry

log = logging.getLogger(__name__)


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
    """Read a source; settle it when its bytes and identity are unchanged, else parse it."""
    raw = read_source(ref, settings)
    if old is not None and old.content_hash == raw.content_hash and old.identity == identity:
        touched[ref.source_id] = trusted_stat(ref)
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
        quarantine(deps, ref, ref.source_id, err, excerpt="")
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
    deps = write_target(state, deps)
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
        report_done([r.source_id for r in settled])
        step.detail.update(sources=len(current), to_process=len(batch), settled=len(settled))
    return {"pending": rest, "batch": batch, "results": settled,
            "stage_ms": {"load": step.elapsed_ms()}, "trace": step.trace()}
