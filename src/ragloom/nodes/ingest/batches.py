"""The batch loop of the ingestion graph: its bound, its recursion limit and its router."""

from __future__ import annotations

import math
from typing import Literal

from ragloom.nodes.ingest.schema import IngestState
from ragloom.settings import IngestSettings

MAX_BATCHES = 1000
"""Upper bound on load→record loops per run; batches grow to fit, keeping the recursion limit fixed."""

NODES_PER_BATCH = 6
"""Nodes one pass of the batch loop runs (load, validate, chunk, embed, upsert, record)."""


def batch_size(pending: int, settings: IngestSettings) -> int:
    """Sources per batch: the configured size, grown so that `pending` fits in MAX_BATCHES."""
    return max(settings.batch_sources, math.ceil(pending / MAX_BATCHES))


def ingest_recursion_limit() -> int:
    """Recursion limit of the ingest graph: every batch loop plus plan and finalize."""
    return NODES_PER_BATCH * MAX_BATCHES + 10


def route_next_batch(state: IngestState) -> Literal["load", "finalize"]:
    """Go to the next batch while sources are pending, else finalize."""
    return "load" if state.get("pending") else "finalize"
