"""A crew run through ChatOpenAI against a real OpenAI-compatible server (SmolLM2 on xllamacpp).

SmolLM2-135M is weak: this checks the protocol (chat calls, the manager's structured reply,
markers filtered to the passages, citations resolvable), never the quality of the answers.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from ragloom.crews.loader import build_crew, run_crew
from ragloom.settings import load_settings
from tests.integration.servers import ingest_example_kb, marker_numbers, smollm2_server

pytestmark = pytest.mark.integration

CREW = """\
name: llm-crew
process: hierarchical
agents:
  support:
    role: Support agent
    goal: Answer from the passages
    knowledge: [llmcrew]
  writer:
    role: Reply writer
    goal: Write a one-sentence reply to the customer
tasks:
  - id: answer
    agent: support
    description: "Answer the customer's question: {question}"
  - id: reply
    agent: writer
    description: "Write the reply to the customer who asked: {question}"
rag:
  collections:
    llmcrew: {}
"""


@pytest.fixture(scope="module")
def llm_base_url() -> Iterator[str]:
    with smollm2_server(n_ctx=4096, threads=2) as base_url:
        yield base_url


def test_crew_runs_through_chat_openai(tmp_path: Path, llm_base_url: str) -> None:
    data = tmp_path / "data"
    ingest_example_kb(data, "llmcrew")
    path = tmp_path / "crew.yaml"
    path.write_text(textwrap.dedent(CREW), encoding="utf-8")
    settings = load_settings(data_dir=data, rerank={"top_n": 3},
                             assemble={"token_budget": 450},
                             chat={"provider": "openai", "base_url": llm_base_url,
                                   "model": "local", "max_tokens": 64, "timeout_s": 60.0})
    crew = build_crew(path, settings=settings, checkpointer=None)
    result = run_crew(crew.graph, {"question": "How long is the warranty?"})
    assert [t.generator for t in result.tasks] == ["chat", "chat"]
    for output in result.tasks:
        assert output.text.strip()
        assert set(marker_numbers(output.text)) == {c.marker for c in output.citations}
        for citation in output.citations:
            assert citation.chunk_id.startswith(citation.source_id)
    managers = [s.detail for s in result.trace if s.stage == "manager" and "task" in s.detail]
    assert len(managers) == 2
    assert all(d["agent"] in ("support", "writer") for d in managers)
    assert all(d["by"] in ("manager", "crew file") for d in managers)
