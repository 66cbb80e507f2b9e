"""The semantic injection screen that runs inside the embed node."""

from __future__ import annotations

from ragloom.ingestion.injection import semantic as injection_semantic
from ragloom.ingestion.verdict import ValidationResult
from ragloom.nodes.ingest.deps import IngestDeps
from ragloom.nodes.ingest.schema import WorkItem
from ragloom.nodes.ingest.verdicts import TRACED_VERDICTS, flagged
from ragloom.nodes.trace import StageClock


def semantic_screen(items: list[WorkItem], deps: IngestDeps, step: StageClock) -> list[WorkItem]:
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
        suspicious = {doc_id: v for (n, doc_id), v in verdicts.items() if n == i}
        if not suspicious:
            batch.append(item)
            continue
        result = item.result.model_copy()
        result.suspicious_documents += len(suspicious)
        result.signals = sorted({*result.signals, "semantic"})
        chunks = [c.model_copy(update={"metadata": flagged(c.metadata, suspicious[c.doc_id])})
                  if c.doc_id in suspicious else c for c in item.chunks]
        batch.append(item.model_copy(update={"chunks": chunks, "result": result}))
    step.detail.update(semantic_windows=len(flat), semantic_flagged=[
        f"{doc_id}: {v.evidence[0]}" for (_, doc_id), v in verdicts.items()][:TRACED_VERDICTS])
    return batch
