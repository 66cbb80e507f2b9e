"""Answers over SSE, JSON and GraphQL (one code path), and the 504 of a chat model that times
out: a traced best-effort answer made without it, or the graph's own when its nodes fell back."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from ragloom.settings import RagSettings
from tests.api.conftest import Keys, Served, serve

QUESTION = {"query": "How much does the P-40 pump move?", "collection": "other"}


def sse_events(text: str) -> list[tuple[str, dict]]:
    """(event, data) of each Server-Sent Event in a response body."""
    events = []
    for frame in text.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", ""
        for line in frame.split("\n"):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data += line[5:].strip()
        if data:
            events.append((name, json.loads(data)))
    return events


def test_sse_streams_stages_and_sentences_then_one_final_event(keyed: Served,
                                                               keys: Keys) -> None:
    response = keyed.client.post("/rag/ask", json={**QUESTION, "stream": True},
                                 headers=Keys.header(keys.other))
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = sse_events(response.text)
    names = [n for n, _ in events]
    assert names[-1] == "final" and names.count("final") == 1
    stages = [d["stage"] for n, d in events if n == "stage"]
    assert stages.index("retrieve") < stages.index("generate") < stages.index("answer")
    final = events[-1][1]
    tokens = "".join(d["text"] for n, d in events if n == "token")
    assert tokens.strip() == final["answer"] and "40 litres" in final["answer"]
    assert final["citations"] and final["metrics"]["latency_ms"]["generate"] > 0
    again = sse_events(keyed.client.post("/rag/ask", json={**QUESTION, "stream": True},
                                         headers=Keys.header(keys.other)).text)
    assert again[-1][1]["metrics"]["cache_hit"] and again[0] == ("token", {
        "text": final["answer"]})


def test_graphql_and_rest_answer_alike(keyed: Served, keys: Keys) -> None:
    query = ('{ ragAsk(query: "Which voltage does the P-40 pump run on?", collection: "other", '
             'top_k: 20) { answer status trace_id citations { id marker text } '
             'metrics { cache_hit route guardrail latency_ms } } }')
    graphql = keyed.client.post("/graphql", json={"query": query},
                                headers=Keys.header(keys.other)).json()
    assert "errors" not in graphql, graphql
    got = graphql["data"]["ragAsk"]
    rest = keyed.client.post("/rag/ask", json={"query": "Which voltage does the P-40 pump run "
                                               "on?", "collection": "other", "top_k": 20},
                             headers=Keys.header(keys.other)).json()
    assert rest["metrics"]["cache_hit"]  # the same cache entry: the same code path
    assert got["answer"] == rest["answer"] and "24 volts" in got["answer"]
    assert [c["id"] for c in got["citations"]] == [c["id"] for c in rest["citations"]]
    assert got["status"] == 200 and got["metrics"]["guardrail"] == "ok"
    invalid = keyed.client.post("/graphql", json={"query": '{ ragAsk(query: "") { answer } }'},
                                headers=Keys.header(keys.other)).json()
    assert invalid["errors"][0]["extensions"]["status"] == 422


@pytest.fixture(scope="module")
def silent_port() -> Iterator[int]:
    """A port that accepts connections and never answers: every request to it times out."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield sock.getsockname()[1]
    finally:
        sock.close()


@pytest.fixture(scope="module")
def slow_chat(kb: RagSettings, silent_port: int) -> Iterator[Served]:
    """The service with a chat model that never answers (time-out 0.3 s)."""
    settings = kb.model_copy(update={"chat": kb.chat.model_copy(update={
        "provider": "openai", "base_url": f"http://127.0.0.1:{silent_port}/v1",
        "timeout_s": 0.3, "timeouts": kb.chat.timeouts.model_copy(update={"generate": 0.3})})})
    yield from serve(settings)


def test_a_chat_timeout_is_a_504_with_a_traced_best_effort_answer(slow_chat: Served) -> None:
    response = slow_chat.client.post("/rag/ask", json=QUESTION)
    assert response.status_code == 504
    body = response.json()
    assert "chat model" in body["detail"] and body["trace_id"]
    answer = body["answer"]
    assert answer["metrics"]["best_effort"] and answer["metrics"]["model_errors"] >= 1
    assert "40 litres" in answer["answer"] and answer["citations"]
    generate = next(s for s in answer["trace"] if s["stage"] == "generate")
    assert generate["detail"]["generator"] == "extractive"  # the node fell back, traced
    assert generate["detail"]["fallback"].startswith("extractive: ")
    again = slow_chat.client.post("/rag/ask", json=QUESTION)
    assert again.status_code == 504  # a best-effort answer is never cached
    streamed = sse_events(slow_chat.client.post("/rag/ask", json={**QUESTION,
                                                                  "stream": True}).text)
    assert streamed[-1][0] == "error" and streamed[-1][1]["answer"]["citations"]
    assert streamed[-1][1]["status"] == 504


def test_a_graph_that_fell_back_itself_answers_504_with_its_own_answer(
        slow_chat: Served) -> None:
    # corrective retrieval grades with the chat model, catches its time-out, grades offline
    response = slow_chat.client.post("/rag/retrieve", json={**QUESTION, "profile": "corrective"})
    assert response.status_code == 504
    answer = response.json()["answer"]
    assert answer["citations"] and answer["metrics"]["best_effort"]
    grade = next(s for s in answer["trace"] if s["stage"] == "grade")
    assert grade["detail"]["fallback"].startswith("heuristic")
    assert not [s for s in answer["trace"] if s["stage"] == "chat_fallback"]
