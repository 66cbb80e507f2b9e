"""Progress events of the ingestion graph for streaming callers."""

from __future__ import annotations

from langgraph.config import get_stream_writer

SOURCE_DONE = "source_done"
"""Custom stream event (`stream_mode="custom"`): `{"event": SOURCE_DONE, "source_id": ...}`,
once for every changed source when its work up to the embeddings is done."""


def report_done(source_ids: list[str]) -> None:
    """Tell a streaming caller (progress bars) that these sources are done.

    A no-op outside a graph run.
    """
    try:
        writer = get_stream_writer()
    except RuntimeError:  # the node was called directly, not by a graph
        return
    for source_id in source_ids:
        writer({"event": SOURCE_DONE, "source_id": source_id})
