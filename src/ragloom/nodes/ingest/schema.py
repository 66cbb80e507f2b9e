"""The ingestion graph's state schemas and the work item a changed source travels in."""

from __future__ import annotations

import operator
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict

from ragloom.ingestion.loaders import SourceRef
from ragloom.state import Chunk, IngestionReport, SourceDocument, SourceResult, TraceStep
from ragloom.stores.manifest import DocEntry, SourceEntry


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


def sum_ms(left: dict[str, float], right: dict[str, float]) -> dict[str, float]:
    """Add up stage timings key by key (the reducer of `stage_ms`)."""
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
    stage_ms: Annotated[dict[str, float], sum_ms]
    trace: Annotated[list[TraceStep], operator.add]
    report: IngestionReport

