"""Agent tools: rag_search, rag_ingest, rag_eval invoked with dict args and inside a LangGraph loop.

The agent test drives a real LangGraph tool loop (`ToolNode` + `tools_condition`) with a SCRIPTED
FAKE chat model (`ScriptedToolCallingFake`, a GenericFakeChatModel replaying fixed messages): it
proves the wiring (tool call -> our tool -> cited passages back to the model), not any model's
behaviour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_tests.unit_tests import ToolsUnitTests
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition

from ragloom import tools as tools_module
from ragloom.tools import build_tools

COLLECTION = "tools-kb"
DOCS = {
    "station.md": "# Lumen Station\n\nThe Lumen Station keeps running for 7 days without sun.\n\n"
                  "## Radio\n\nIts radio range is 300 metres in open terrain.\n",
    "billing.md": "# Billing\n\nThe Care plan costs EUR 3.99 per month and can be cancelled at any time.\n",
}


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A two-file knowledge base ingested once for the module."""
    root = tmp_path_factory.mktemp("tools")
    corpus = root / "kb"
    corpus.mkdir()
    for name, text in DOCS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    data_dir = root / "data"
    search, ingest, _ = build_tools(data_dir=data_dir, collection=COLLECTION)
    assert "2 ingested" in ingest.invoke({"sources": [str(corpus)]})
    return {"root": root, "corpus": corpus, "data_dir": data_dir}


def _tools(kb: dict[str, Path]) -> list[BaseTool]:
    return build_tools(data_dir=kb["data_dir"], collection=COLLECTION)


def test_tools_have_typed_argument_schemas() -> None:
    search, ingest, evaluate = build_tools()
    assert [t.name for t in (search, ingest, evaluate)] == ["rag_search", "rag_ingest", "rag_eval"]
    props = search.tool_call_schema.model_json_schema()["properties"]
    assert props["query"]["type"] == "string"
    assert props["top_n"]["type"] == "integer" and props["top_n"]["maximum"] == 50
    assert ingest.tool_call_schema.model_json_schema()["properties"]["sources"]["type"] == "array"
    assert "k" in evaluate.args and "dataset" in evaluate.args
    assert all(t.description for t in (search, ingest, evaluate))


def test_rag_search_returns_numbered_cited_passages(kb: dict[str, Path]) -> None:
    search = _tools(kb)[0]
    text = search.invoke({"query": "How long does the station run without sun?", "top_n": 2})
    assert text.startswith("2 passage(s) from collection 'tools-kb'")
    first = text.split("\n\n[2]")[0]
    assert "[1] " in first and "station.md" in first and "7 days without sun" in first
    message = search.invoke({"type": "tool_call", "id": "call-1", "name": "rag_search",
                             "args": {"query": "Care plan price", "top_n": 1}})
    assert isinstance(message, ToolMessage) and "3.99" in message.content
    assert message.artifact[0]["source_id"].endswith("billing.md")
    assert "3.99 per month" in message.artifact[0]["text"]


def test_rag_search_turns_errors_into_text(kb: dict[str, Path]) -> None:
    search = _tools(kb)[0]
    assert search.invoke({"query": "x", "profile": "turbo"}).startswith(
        "error: unknown profile 'turbo'")
    assert search.invoke({"query": "   "}).startswith("error: question: the question is empty")
    assert search.invoke({"query": "x", "top_n": 0}).startswith(
        "error: invalid arguments: top_n: Input should be greater than or equal to 1")
    assert search.invoke({"query": "x", "collection": "a"}).startswith(
        "error: collection: invalid collection name 'a'")


def test_rag_ingest_is_incremental_and_reports_failures(kb: dict[str, Path]) -> None:
    ingest = _tools(kb)[1]
    again = ingest.invoke({"sources": [str(kb["corpus"])]})
    assert "2 unchanged" in again and "0 embeddings computed" in again
    missing = ingest.invoke({"sources": [str(kb["root"] / "absent.md")], "collection": "tools-other"})
    assert "1 failed" in missing and "absent.md: no such file or directory" in missing
    assert ingest.invoke({"sources": []}).startswith("error: invalid arguments: sources")


def test_rag_eval_scores_a_golden_set(kb: dict[str, Path], tmp_path: Path) -> None:
    golden = tmp_path / "golden.yaml"
    golden.write_text(
        f"corpus: {kb['corpus']}\ncollection: {COLLECTION}\ncases:\n"
        "  - question: How long does the station run without sun?\n"
        "    relevant: [station.md]\n    expected: [7 days]\n"
        "  - question: What does the Care plan cost?\n    relevant: [billing.md]\n",
        encoding="utf-8")
    evaluate = _tools(kb)[2]
    text = evaluate.invoke({"dataset": str(golden), "answers": False, "out_dir": str(tmp_path / "r")})
    assert text.startswith("golden: 2 cases")
    assert "balanced: recall@5 1.000, MRR@10 1.000" in text
    assert (tmp_path / "r" / "report.json").is_file()
    assert evaluate.invoke({"dataset": str(tmp_path / "none.yaml")}).startswith(
        "error: " + str(tmp_path / "none.yaml"))


def test_module_level_tools_read_the_environment(kb: dict[str, Path],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGLOOM_DATA_DIR", str(kb["data_dir"]))
    monkeypatch.setenv("RAGLOOM_COLLECTION", COLLECTION)
    text = tools_module.rag_search.invoke({"query": "radio range", "top_n": 1})
    assert "300 metres" in text


class ScriptedToolCallingFake(GenericFakeChatModel):
    """Scripted fake chat model: replays fixed messages; binding tools changes nothing."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedToolCallingFake:
        return self


def test_a_langgraph_agent_calls_rag_search_and_gets_cited_passages(kb: dict[str, Path]) -> None:
    tools = _tools(kb)
    script = iter([
        AIMessage(content="", tool_calls=[{
            "name": "rag_search", "id": "call-1", "type": "tool_call",
            "args": {"query": "How long does the station run without sun?", "top_n": 2}}]),
        AIMessage(content="It runs for 7 days without sun [1]."),
    ])
    model = ScriptedToolCallingFake(messages=script).bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    app = graph.compile().with_config(recursion_limit=8)

    out = app.invoke({"messages": [HumanMessage("How long does the station run without sun?")]})
    kinds = [type(m).__name__ for m in out["messages"]]
    assert kinds == ["HumanMessage", "AIMessage", "ToolMessage", "AIMessage"]
    result = out["messages"][2]
    assert result.name == "rag_search" and result.tool_call_id == "call-1"
    assert "[1] " in result.content and "station.md" in result.content
    assert "7 days without sun" in result.content
    assert result.artifact and result.artifact[0]["source_id"].endswith("station.md")
    assert out["messages"][-1].content.endswith("[1].")


class TestRagSearchStandard(ToolsUnitTests):
    """LangChain's standard tool unit suite on rag_search (schema and construction)."""

    @property
    def tool_constructor(self) -> BaseTool:
        return build_tools()[0]

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "How long does the Lumen Pro run without sun?", "top_n": 3}
