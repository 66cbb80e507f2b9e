"""Spans leave over OTLP/HTTP when `api.otlp_endpoint` is set (to a stand-in collector on
127.0.0.1 that records what it is sent)."""

from __future__ import annotations

import pytest

from ragloom.settings import RagSettings
from tests.api.conftest import kb, serve  # noqa: F401 - the session fixture `kb`
from tests.api.servers import recording_endpoint

pytestmark = pytest.mark.integration


def test_spans_are_exported_over_otlp(kb: RagSettings) -> None:  # noqa: F811
    with recording_endpoint() as collector:
        for served in serve(kb, otlp_endpoint=f"{collector.url}/v1/traces"):
            response = served.client.post("/rag/retrieve", json={"query": "pump volts",
                                                                 "collection": "other"})
            assert response.status_code == 200
        # leaving the app flushed the batch processor
        sent = collector.wait_for(b"POST /rag/retrieve", timeout_s=10)
    assert "/v1/traces" in collector.paths
    trace_id = bytes.fromhex(response.json()["trace_id"])
    assert trace_id in sent  # the protobuf carries the raw 16-byte trace id
    for phase in (b"retrieve", b"prompt", b"rag.collection"):
        assert phase in sent
