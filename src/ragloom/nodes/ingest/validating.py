"""The validate node: scan documents for prompt injection, quarantine or flag them."""

from __future__ import annotations

from typing import Any

from ragloom.errors import RejectedSourceError
from ragloom.ingestion.injection.screen import scan_injection
from ragloom.ingestion.verdict import ValidationResult
from ragloom.nodes.ingest.deps import IngestDeps
from ragloom.nodes.ingest.schema import IngestState, WorkItem
from ragloom.nodes.ingest.verdicts import (
    TRACED_VERDICTS,
    flagged,
    quarantine,
    quarantine_reason,
)
from ragloom.nodes.trace import StageClock
from ragloom.state import SourceDocument


def _flag(doc: SourceDocument, verdict: ValidationResult) -> SourceDocument:
    """Mark a suspicious document: every chunk of it carries the flag, the signals and the why."""
    return doc.model_copy(update={"metadata": flagged(doc.metadata, verdict)})


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
                    reason = quarantine_reason(verdict)
                    err = RejectedSourceError(reason, where=doc.doc_id, signals=verdict.signals,
                                              content_hash=doc.content_hash)
                    quarantine(deps, item.ref, doc.doc_id, err, excerpt=doc.text)
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
