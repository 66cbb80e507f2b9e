"""`ragloom serve` answering with a real chat model (SmolLM2 on xllamacpp): tokens streamed over
SSE as the model writes them, model calls and tokens in the metrics, a client that hangs up
mid-answer cancelling the run, and graph runs traced to LangSmith when its environment is set
(to a stand-in LangSmith endpoint on 127.0.0.1 that records what it is sent)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from tests.api.servers import RagloomServe, ragloom_serve
from tests.integration.servers import smollm2_server

pytestmark = pytest.mark.integration
QUESTION = {"query": "How much does the P-40 pump move per minute?", "stream": True}


class _Recorder(BaseHTTPRequestHandler):
    """A stand-in LangSmith API: answers `{}` to everything and keeps every request body."""

    bodies: list[bytes] = []

    def _answer(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        _Recorder.bodies.append(self.rfile.read(length) if length else b"")
        payload = b"{}"
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = do_POST = do_PATCH = _answer

    def log_message(self, *args: object) -> None:
        """Quiet."""


@pytest.fixture(scope="module")
def langsmith_endpoint() -> Iterator[str]:
    """The stand-in LangSmith endpoint's URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory,
           langsmith_endpoint: str) -> Iterator[RagloomServe]:
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
                 "LANGSMITH_ENDPOINT": langsmith_endpoint, "LANGSMITH_API_KEY": "test-key",
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


def test_graph_runs_reach_langsmith_with_the_trace_id(served: RagloomServe) -> None:
    assert httpx.get(f"{served.url}/health", timeout=10).json()["langsmith"] is True
    response = httpx.post(f"{served.url}/rag/retrieve",
                          json={"query": "What does the P-40 pump weigh?"}, timeout=120)
    trace_id = response.json()["trace_id"]
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any(trace_id.encode() in body for body in _Recorder.bodies):
            break
        time.sleep(0.3)
    sent = b"".join(_Recorder.bodies)
    assert trace_id.encode() in sent, f"{len(_Recorder.bodies)} requests, none with the trace id"
    assert b"ragloom-balanced" in sent  # the graph run, by the name the service gives it
