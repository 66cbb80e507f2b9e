"""The embed node: embed the batch's new chunks, source by source."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ragloom.ingestion.injection import semantic as injection_semantic
from ragloom.nodes.ingest.deps import IngestDeps
from ragloom.nodes.ingest.progress import report_done
from ragloom.nodes.ingest.schema import IngestState, WorkItem
from ragloom.nodes.ingest.semantic_screen import semantic_screen
from ragloom.nodes.trace import StageClock

EMBED_GROUP_TEXTS = 64
"""Embed calls take the chunks of whole sources until they hold at least this many texts, so
progress is reported source by source without giving up batched encoding."""


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
                report_done([i.ref.source_id for i in group])
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
                update["batch"] = semantic_screen(items, deps, step)
                stage_ms["semantic_screen"] = (time.perf_counter() - start) * 1000
            else:
                step.note(semantic_off=reason)
    # semantic_screen: the part of embed the semantic layer took
    return {**update, "embeddings": vectors,
            "stage_ms": {"embed": step.elapsed_ms(), **stage_ms}, "trace": step.trace()}
