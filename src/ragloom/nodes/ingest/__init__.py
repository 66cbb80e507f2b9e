"""Nodes of the incremental ingestion graph: plan → load → validate → chunk → embed → upsert → record.

Chroma is the source of truth. Plan settles unchanged sources from their stat (size, mtime) and
identity without reading them, so only changed work enters the batch loop. Each batch announces
the chunk ids it will touch (a manifest intent) before writing to Chroma and records its sources
in one manifest transaction only after their chunks are stored; finalize applies the manifest's
journal to the BM25 index. A crash at any point leaves an intent or a journal that the next run
replays, and counts that disagree trigger a full repair from Chroma, so the next run ends in the
state of one clean ingest while costing what changed.

One module per node (`planning`, `loading`, `validating`, `chunking`, `embedding`, `storing`,
`recording`, `finalizing`) and per job they share (`recovery`, `bm25_sync`, `semantic_screen`,
`verdicts`, `identity`, `progress`, `batches`); the graph builder takes the nodes from here.
"""

from ragloom.nodes.ingest.batches import ingest_recursion_limit, route_next_batch
from ragloom.nodes.ingest.chunking import chunk
from ragloom.nodes.ingest.deps import IngestDeps
from ragloom.nodes.ingest.embedding import embed
from ragloom.nodes.ingest.finalizing import finalize
from ragloom.nodes.ingest.loading import load
from ragloom.nodes.ingest.planning import plan
from ragloom.nodes.ingest.progress import SOURCE_DONE
from ragloom.nodes.ingest.recording import record
from ragloom.nodes.ingest.schema import IngestInput, IngestOutput, IngestState, WorkItem
from ragloom.nodes.ingest.storing import upsert
from ragloom.nodes.ingest.validating import validate

__all__ = [
    "SOURCE_DONE",
    "IngestDeps",
    "IngestInput",
    "IngestOutput",
    "IngestState",
    "WorkItem",
    "chunk",
    "embed",
    "finalize",
    "ingest_recursion_limit",
    "load",
    "plan",
    "record",
    "route_next_batch",
    "upsert",
    "validate",
]
