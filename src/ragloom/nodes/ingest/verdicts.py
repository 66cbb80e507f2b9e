"""How the injection screen's verdicts land: quarantine records and the suspicious flag."""

from __future__ import annotations

from typing import Any

from ragloom.errors import RejectedSourceError
from ragloom.ingestion.loaders import SourceRef
from ragloom.ingestion.verdict import ValidationResult
from ragloom.nodes.ingest.deps import IngestDeps
from ragloom.nodes.ingest.identity import now
from ragloom.stores.quarantine import QuarantineRecord

EVIDENCE_CHARS = 500
"""Longest evidence string kept in chunk metadata and quarantine reasons."""
TRACED_VERDICTS = 20
"""Suspicious or rejected documents named in the validate trace per batch."""


def quarantine(deps: IngestDeps, ref: SourceRef, doc_id: str, err: RejectedSourceError,
               excerpt: str) -> None:
    """Record a rejected document of a source in the collection's quarantine."""
    deps.quarantine().add(
        QuarantineRecord(
            source_id=ref.source_id,
            doc_id=doc_id,
            reason=err.what,
            signals=err.signals,
            content_hash=err.content_hash,
            excerpt=excerpt[:500],
            quarantined_at=now(),
            collection=deps.collection,
        )
    )


def flagged(metadata: dict[str, Any], verdict: ValidationResult) -> dict[str, Any]:
    """Metadata with the suspicious flag, the signals and the why of a verdict."""
    return {
        **metadata,
        "suspicious": True,
        "injection_signals": ",".join(verdict.signals),
        "injection_score": verdict.score,
        "injection_evidence": " | ".join(verdict.evidence)[:EVIDENCE_CHARS],
    }


def quarantine_reason(verdict: ValidationResult) -> str:
    """Why a document is quarantined: the verdict's reason and evidence, cut to EVIDENCE_CHARS."""
    reason = verdict.reason
    if verdict.status == "suspicious":
        reason += " (quarantined because ingest.quarantine_suspicious is on)"
    if verdict.evidence:
        reason += "; evidence: " + "; ".join(verdict.evidence)
    return reason[:EVIDENCE_CHARS]
