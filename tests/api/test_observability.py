"""One JSON log line per request (trace id, hashed user, verdict, retrieved ids, stage latencies,
has_citations; PII and secrets never in it), OpenTelemetry phase spans, and /metrics."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import pytest

from tests.api.conftest import Keys, Served

QUESTION = {"query": "What is the quarterly code word of the sales team?",
            "collection": "scoped", "user_id": "jane.doe@example.com"}


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.records: list[dict] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(json.loads(record.getMessage()))


@pytest.fixture
def access_lines() -> Iterator[list[dict]]:
    """The access-log records written during a test."""
    handler = _Lines()
    logger = logging.getLogger("ragloom.access")
    logger.addHandler(handler)
    try:
        yield handler.records
    finally:
        logger.removeHandler(handler)


def test_one_log_line_per_request_with_the_fields_and_no_pii(keyed: Served, keys: Keys,
                                                             access_lines: list[dict]) -> None:
    client = keyed.client
    answer = client.post("/rag/ask", json=QUESTION, headers=Keys.header(keys.sales))
    assert answer.status_code == 200
    bad = client.post("/rag/ask", json={"query": "x", "collection": "jane.doe-555-123-4567"},
                      headers=Keys.header(keys.sales))
    assert bad.status_code == 404
    assert len(access_lines) == 2
    line, error_line = access_lines
    body = answer.json()
    assert line["trace_id"] == body["trace_id"] == answer.headers["x-trace-id"]
    assert line["route"] == "/rag/ask" and line["status"] == 200 and line["key"] == "sales"
    assert line["guardrail"] == "ok" and line["has_citations"] is True
    assert line["retrieved"] == [c["id"] for c in body["citations"]]
    assert {"retrieve", "generate"} <= set(line["stages"])
    assert len(line["user"]) == 16 and line["cache"] == "miss"
    assert "[phone]" in error_line["error"] and "555" not in error_line["error"]
    text = json.dumps(access_lines)
    for secret in ("jane.doe@example.com", keys.sales, QUESTION["query"]):
        assert secret not in text


def test_spans_per_phase_under_the_request_span(keyed: Served, keys: Keys) -> None:
    keyed.spans.clear()
    response = keyed.client.post("/rag/ask", json={**QUESTION, "query": "Which team uses "
                                                   "PELICAN as code word?"},
                                 headers=Keys.header(keys.admin))
    assert response.status_code == 200
    spans = keyed.spans.get_finished_spans()
    root = next(s for s in spans if s.name == "POST /rag/ask")
    assert format(root.context.trace_id, "032x") == response.json()["trace_id"]
    assert root.attributes["rag.collection"] == "scoped"
    assert root.attributes["http.response.status_code"] == 200
    children = {s.name: s for s in spans if s.parent and s.parent.span_id == root.context.span_id}
    assert {"guard", "retrieve", "rerank", "prompt", "llm", "post"} <= set(children)
    assert children["retrieve"].attributes["rag.retrieve.ms"] > 0
    assert children["retrieve"].attributes["rag.retrieve.embed_ms"] >= 0  # a detail, flattened
    assert list(children["rerank"].attributes["rag.skipped"]) == ["rerank"]  # reranker none
    assert children["llm"].attributes["rag.generate.generator"] == "extractive"
    order = [children[n].start_time for n in ("retrieve", "prompt", "llm")]
    assert order == sorted(order)
    assert all(root.start_time <= s.start_time and s.end_time <= root.end_time
               for s in children.values())


def test_metrics_expose_requests_cache_and_stage_quantiles(keyed: Served, keys: Keys) -> None:
    client = keyed.client
    for _ in range(2):
        client.post("/rag/retrieve", json={"query": "pump volts", "collection": "other"},
                    headers=Keys.header(keys.other))
    text = client.get("/metrics").text
    assert 'ragloom_requests_total{route="/rag/retrieve",status="200"}' in text
    assert 'ragloom_cache_total{result="hit"}' in text
    assert 'ragloom_stage_latency_ms{quantile="0.95",stage="retrieve"}' in text
    assert 'ragloom_route_latency_ms{quantile="0.5",route="/rag/retrieve"}' in text
    assert "ragloom_stage_latency_ms_count" in text


def test_guard_verdicts_reach_the_metrics(keyed: Served) -> None:
    import time as clock

    from ragloom.api.engine import ModelCalls, QueryPlan
    from ragloom.api.service import RequestContext
    from ragloom.state import RagAnswer, Verdict

    service = keyed.client.app.state.service
    context = RequestContext(span=service.tracer.start_span("t"), start_ns=0,
                             started=clock.perf_counter())
    refused = RagAnswer(question="q", text="I can't help with that.", verdicts=[
        Verdict(stage="input_guard", verdict="jailbreak"),
        Verdict(stage="output_guard", verdict="redacted")])
    plan = QueryPlan(question="q", collection="other", profile="balanced")
    metrics = service._response(refused, plan, ModelCalls(), context).metrics
    assert (metrics.guardrail, metrics.output_guard) == ("jailbreak", "redacted")
    plain = service._response(RagAnswer(question="q", text="x"), plan, ModelCalls(), context)
    assert (plain.metrics.guardrail, plain.metrics.output_guard) == ("ok", None)
