"""The example crews served by a real `langgraph dev`, run over HTTP with the LangGraph SDK."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from langgraph_sdk.client import SyncLangGraphClient

from ragloom.crews.loader import load_crew, run_crew
from ragloom.crews.result import CrewResult
from tests.integration.servers import (
    LanggraphDev,
    assert_markers_resolve,
    ingest_example_kb,
    langgraph_dev,
)

pytestmark = pytest.mark.integration

QUESTION = "How long is the warranty?"
RUN_TIMEOUT = httpx.Timeout(180.0, connect=5.0)


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/kb ingested into `default`, the collection the packaged example crews read."""
    data = tmp_path_factory.mktemp("crews-dev") / "data"
    ingest_example_kb(data, "default")
    return data


@pytest.fixture(scope="module")
def server(data_dir: Path) -> Iterator[LanggraphDev]:
    """`langgraph dev` serving langgraph.json (crews included) over that data dir."""
    with langgraph_dev(data_dir=data_dir, collection="default",
                       log_path=data_dir.parent / "langgraph-dev.log") as running:
        yield running


@pytest.fixture(scope="module")
def client(server: LanggraphDev) -> SyncLangGraphClient:
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server.url, api_key=None, timeout=RUN_TIMEOUT)


def comparable(result: CrewResult) -> dict:
    """A result without what differs from run to run (durations, thread ids)."""
    return result.model_dump(exclude={"trace", "thread_id"})


def test_served_support_crew_returns_the_same_crew_result(server: LanggraphDev,
                                                         client: SyncLangGraphClient,
                                                         data_dir: Path) -> None:
    inputs = {"question": QUESTION}
    with server.diagnose():
        output = client.runs.wait(None, "crew-support", input={"inputs": inputs})
    assert isinstance(output, dict) and "result" in output, output
    served = CrewResult.model_validate(output["result"])
    local = run_crew(load_crew("support", data_dir=data_dir, checkpointer=None), inputs)
    assert comparable(served) == comparable(local)
    answer = served.output("answer")
    assert answer.generator == "extractive" and "warranty" in answer.text.lower()
    assert_markers_resolve({"text": served.final_output,
                            "citations": [c.model_dump() for c in served.citations]})
    assert [s["stage"] for s in output["result"]["trace"]][:1] == ["begin"]


def test_served_crew_runs_are_checkpointed_per_thread(server: LanggraphDev,
                                                      client: SyncLangGraphClient) -> None:
    with server.diagnose():
        thread = client.threads.create()
        output = client.runs.wait(thread["thread_id"], "crew-research",
                                  input={"inputs": {"topic": "the Lumen Pro wind sensor"}})
        state = client.threads.get_state(thread["thread_id"])
    result = CrewResult.model_validate(output["result"])
    assert [t.task for t in result.tasks] == ["research", "draft", "edit"]
    assert set(state["values"]["outputs"]) == {"research", "draft", "edit"}
    assert state["next"] == []
