"""The plan node: recover, expand the specs, settle unchanged sources, find vanished ones."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from ragloom.ingestion.chunkers import chunker_fingerprint
from ragloom.ingestion.loaders import (
    Expansion,
    FoundSource,
    SourceRef,
    Spec,
    expand_changed,
    expand_specs,
    spec_origin,
    to_ref,
)
from ragloom.nodes.ingest.batches import batch_size
from ragloom.nodes.ingest.deps import IngestDeps, write_target
from ragloom.nodes.ingest.identity import loader_identity
from ragloom.nodes.ingest.recovery import (
    check_store,
    clean_leftovers,
    finish_deletion,
    open_manifest,
    recover_reindex,
    repair_intents,
)
from ragloom.nodes.ingest.schema import IngestState
from ragloom.nodes.trace import StageClock
from ragloom.settings import RagSettings
from ragloom.state import SourceResult
from ragloom.stores.manifest import ManifestStore, SourceStat


def _settle(found: list[FoundSource], stats: dict[str, SourceStat],
            settings: RagSettings) -> tuple[list[SourceRef], list[str]]:
    """Split found sources into changed refs and the ids of those unchanged by stat and
    identity (no file is opened, no per-source object is built for them)."""
    chunker = chunker_fingerprint(settings.chunker)
    csv_identity = chunker + loader_identity("x.csv", "file", settings.ingest)
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
        finished = finish_deletion(deps)
        leftovers = clean_leftovers(deps)
        recovered = [*finished, *recover_reindex(deps)]
        deps = write_target(state, deps)
        store, warnings = open_manifest(deps)
        warnings = [*recovered, *warnings]
        with store:
            repairs = repair_intents(store, deps.index) + check_store(store, deps.index)
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
    return {
        "pending": pending,
        "batch_size": batch_size(len(pending), deps.settings.ingest),
        "removals": removals,
        "quarantine_gone": quarantine_gone,
        "skipped": found.skipped,
        "settled": unchanged,
        "results": failed,
        "warnings": warnings,
        "stage_ms": {"plan": step.elapsed_ms()},
        "trace": step.trace(),
    }
