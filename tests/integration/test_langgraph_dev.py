"""The graphs of langgraph.json served by a real `langgraph dev`, called over HTTP with the SDK."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from langgraph_sdk.client import SyncLangGraphClient

from tests.conftest import ROOT
from tests.integration.servers import (
    LanggraphDev,
    assert_markers_resolve,
    ingest_example_kb,
    langgraph_dev,
    marker_numbers,
    trace_detail,
    trace_stages,
)

pytestmark = pytest.mark.integration

COLLECTION = "lgdev"
QUESTION = "What is the highest wind speed the Lumen Pro can measure?"
DATASHEET = (ROOT / "examples" / "kb" / "datasheet-lumen-pro.pdf").resolve()
STAGED = ["guard", "transform", "retrieve", "fuse", "rerank", "assemble", "generate",
          "groundedness", "answer"]
RETRIEVAL = ["guard", "transform", "retrieve", "fuse", "rerank", "assemble", "generate", "answer"]
RUN_TIMEOUT = httpx.Timeout(120.0, connect=5.0)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LanggraphDev]:
    """examples/kb ingested into a private data dir, then `langgraph dev` serving it."""
    root = tmp_path_factory.mktemp("langgraph-dev")
    data_dir = root / "data"
    ingest_example_kb(data_dir, COLLECTION)  # before start-up: the graphs open the indexes then
    with langgraph_dev(data_dir=data_dir, collection=COLLECTION,
                       log_path=root / "langgraph-dev.log") as running:
        yield running


@pytest.fixture(scope="module")
def client(server: LanggraphDev) -> SyncLangGraphClient:
    """A synchronous LangGraph SDK client of the server (no API key from the environment)."""
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server.url, api_key=None, timeout=RUN_TIMEOUT)


def test_every_graph_of_langgraph_json_is_served(server: LanggraphDev,
                                                client: SyncLangGraphClient) -> None:
    declared = set(json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))["graphs"])
    with server.diagnose():
        served = {a["graph_id"] for a in client.assistants.search(limit=100)}
    assert served == declared


def test_balanced_answers_with_resolving_citations_over_http(server: LanggraphDev,
                                                             client: SyncLangGraphClient) -> None:
    with server.diagnose():
        output = client.runs.wait(None, "balanced", input={"question": QUESTION})
    assert isinstance(output, dict) and "answer" in output, output
    answer = output["answer"]
    assert answer["question"] == QUESTION
    assert answer["profile"] == "balanced"
    assert answer["text"].strip(), answer
    assert marker_numbers(answer["text"]), f"no [n] marker in {answer['text']!r}"
    assert_markers_resolve(answer)
    assert "65 m/s" in answer["text"]
    assert any(c["source_id"] == str(DATASHEET) for c in answer["citations"])

    assert trace_stages(answer) == STAGED
    assert trace_detail(answer, "rerank")["reranker"] == "none"
    assert trace_detail(answer, "generate")["generator"] == "extractive"
    assert trace_detail(answer, "retrieve")["mode"] == "hybrid"
    assert all(step["duration_ms"] >= 0 for step in answer["trace"])


def test_retrieval_graph_returns_passages_and_skips_generation(server: LanggraphDev,
                                                               client: SyncLangGraphClient) -> None:
    with server.diagnose():
        output = client.runs.wait(None, "retrieval", input={"question": QUESTION, "top_n": 4})
    answer = output["answer"]
    assert answer["text"] == ""
    citations = answer["citations"]
    assert 1 <= len(citations) <= 4
    assert [c["marker"] for c in citations] == list(range(1, len(citations) + 1))
    assert_markers_resolve(answer)
    assert citations[0]["source_id"] == str(DATASHEET)
    assert trace_stages(answer) == RETRIEVAL
    generate = trace_detail(answer, "generate")
    assert generate["skipped"] is True and "retrieval-only" in generate["reason"]
    assert generate["citations"] == len(citations)
