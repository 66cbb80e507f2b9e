"""`ragloom serve` answering with a real chat model (SmolLM2 on xllamacpp): tokens streamed over
SSE as the model writes them, model calls and tokens in the metrics, a client that hangs up
mid-answer cancelling the run, and graph runs traced to LangSmith when its environment is set
(to a stand-in LangSmith endpoint on 127.0.0.1 that records what it is sent)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import httpx
import pytest

from tests.api.servers import RagloomServe, Recording, ragloom_serve, recording_endpoint
from tests.integration.servers import smollm2_server

pytestmark = pytest.mark.integration
QUESTION = {"query": "How much does the P-40 pump move per minute?", "stream": True}


@pytest.fixture(scope="module")
def langsmith_endpoint() -> Iterator[Recording]:
    """A stand-in LangSmith API on 127.0.0.1."""
    with recording_endpoint() as recording:
        yield recording


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory,
           langsmith_endpoint: Recording) -> Iterator[RagloomServe]:
    """The service over a one-document collection, answering with SmolLM2, tracing to the
    stand-in LangSmith."""
    from ragloom.runner import ingest

    root = tmp_path_factory.mktemp("service-llm")
    (root / "docs").mkdir()
    (root / "docs" / "pump.md").write_text(
        "# Pump\n\nThe P-40 pump moves 40 litres a minute. It runs on 24 volts and weighs "
        "3 kg.\n", encoding="utf-8")
    assert not ingest([str(root / "docs")], collection="pumps", data_dir=root / "data").failed
    with smollm2_server() as base_url, ragloom_serve(
            ["--data-dir", str(root / "data"), "-c", "pumps"], log_path=root / "serve.log",
            env={"RAGLOOM_CHAT__PROVIDER": "openai", "RAGLOOM_CHAT__BASE_URL": base_url,
                 "RAGLOOM_CHAT__MAX_TOKENS": "200", "LANGSMITH_TRACING": "true",
                 "LANGSMITH_ENDPOINT": langsmith_endpoint.url, "LANGSMITH_API_KEY": "test-key",
                 "LANGSMITH_DISABLE_RUN_COMPRESSION": "true"}) as server:
        yield server


def _events(lines: Iterator[str]) -> Iterator[tuple[str, dict]]:
    name = "message"
    for line in lines:
        if line.startswith("event:"):
            name = line[6:].strip()
        elif line.startswith("data:"):
            yield name, json.loads(line[5:].strip())
            name = "message"


def test_model_tokens_stream_then_the_final_event(served: RagloomServe) -> None:
    with httpx.stream("POST", f"{served.url}/rag/ask", json=QUESTION, timeout=120) as response:
        assert response.status_code == 200
        events = list(_events(response.iter_lines()))
    tokens = [d["text"] for n, d in events if n == "token"]
    name, final = events[-1]
    assert name == "final", events[-1]
    assert len(tokens) > 3  # the model's own pieces, not one event per sentence
    assert final["metrics"]["model_calls"] >= 1
    assert final["metrics"]["tokens"]["completion"] > 0
    assert final["metrics"]["latency_ms"]["generate"] > 0
    generate = next(s for s in final["trace"] if s["stage"] == "generate")
    assert generate["detail"]["generator"] == "chat"


def test_a_client_that_hangs_up_cancels_the_run(served: RagloomServe) -> None:
    body = {**QUESTION, "query": "Describe the P-40 pump in detail: flow, voltage and weight."}
    with httpx.stream("POST", f"{served.url}/rag/ask", json=body, timeout=120) as response:
        for name, _ in _events(response.iter_lines()):
            if name == "token":
                break  # hang up at the first token
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        lines = [line for line in served.access_lines() if line.get("cancelled")]
        if lines:
            break
        time.sleep(0.2)
    assert lines, served.log_tail()
    assert lines[-1]["route"] == "/rag/ask" and "retrieved" not in lines[-1]


def test_graph_runs_reach_langsmith_with_the_trace_id(served: RagloomServe,
                                                      langsmith_endpoint: Recording) -> None:
    assert httpx.get(f"{served.url}/health", timeout=10).json()["langsmith"] is True
    response = httpx.post(f"{served.url}/rag/retrieve",
                          json={"query": "What does the P-40 pump weigh?"}, timeout=120)
    trace_id = response.json()["trace_id"]
    sent = langsmith_endpoint.wait_for(trace_id.encode(), timeout_s=30)
    assert trace_id.encode() in sent, f"{len(langsmith_endpoint.bodies)} requests, none with it"
    assert b"ragloom-balanced" in sent  # the graph run, by the name the service gives it
