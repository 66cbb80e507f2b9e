"""Crews compiled to LangGraph graphs over a tiny knowledge base written in the test.

Scripted fake chat models (named as such) drive routing and parsing: which agent runs, what its
prompt holds, how markers are renumbered and resolved. They make no quality claim.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from typer.testing import CliRunner

import ragloom
from ragloom import resources
from ragloom.cli import app
from ragloom.crews.graph import CrewOutput
from ragloom.crews.loader import Crew, build_crew, checkpoint_path, run_crew
from ragloom.crews.result import CrewResult
from ragloom.errors import ChatUnavailableError, ConfigError
from ragloom.settings import load_settings
from tests.crews.conftest import write_crew
from tests.crews.fakes import ScriptedToolChat, tool_call
from tests.fakes import ScriptedRoleChat

SNAPSHOTS = Path(__file__).parent / "snapshots"
RAG = """\
rag:
  collections:
    quill-kb:
      sources: [kb/*.md]
      chunking: {strategy: recursive, max_tokens: 64, overlap: 8}
"""
QUESTION = {"question": "How long is the warranty?"}


def build(home: Path, text: str, name: str = "crew.yaml", **options: Any) -> Crew:
    """Create a crew from YAML text in the module's folder (no checkpointer unless asked)."""
    options.setdefault("checkpointer", None)
    return build_crew(write_crew(home, text, name), data_dir=home / "data", **options)


def source_marker(prompt: str, source: str) -> int:
    """The [n] a prompt's knowledge block gives the passage from source (a file name)."""
    found = re.search(rf"\[(\d+)\] \([^)]*{re.escape(source)}\)", prompt)
    assert found, f"no passage from {source} in the prompt:\n{prompt}"
    return int(found.group(1))


def cite(source: str, claim: str) -> Any:
    """A scripted reply: the claim, citing the marker the prompt gives the source's passage."""
    return lambda user: f"{claim} [{source_marker(user, source)}]."


def assert_resolves(result: CrewResult, home: Path) -> None:
    """Every marker of every output has a citation, each citation a chunk stored in the index."""
    settings = load_settings(data_dir=home / "data", collection="quill-kb")
    index = resources.document_index(settings)
    for output in result.tasks:
        markers = {int(n) for n in re.findall(r"\[(\d+)\]", output.text)}
        assert markers == {c.marker for c in output.citations}, output
        stored = {c.id: c for c in index.get_chunks([c.chunk_id for c in output.citations])}
        for citation in output.citations:
            assert stored[citation.chunk_id].source_id == citation.source_id
            assert stored[citation.chunk_id].text.startswith(citation.snippet[:40])


SUPPORT = RAG + """\
agents:
  support:
    role: Support agent
    goal: Answer from the knowledge base
    knowledge: [quill-kb]
tasks:
  - id: answer
    agent: support
    description: "Answer the customer's question: {question}"
    context: []
"""


def test_creation_ingests_the_rag_block_then_a_second_load_is_a_no_op(tmp_path: Path) -> None:
    from tests.crews.conftest import write_kb

    write_kb(tmp_path)
    first = build(tmp_path, SUPPORT)
    assert [r.collection for r in first.ingestion] == ["quill-kb"]
    assert first.ingestion[0].count("ingested") == 3 and first.ingestion[0].embeddings_computed > 0
    second = build(tmp_path, SUPPORT)
    assert second.ingestion[0].embeddings_computed == 0
    assert second.ingestion[0].count("unchanged") == 3
    result = run_crew(second.graph, QUESTION)
    assert result.ingestion == second.ingestion  # the creation report is part of the result


def test_offline_agent_answers_extractively_from_its_knowledge_with_citations(
        crew_home: Path) -> None:
    result = run_crew(build(crew_home, SUPPORT).graph, QUESTION)
    output = result.output("answer")
    assert output.generator == "extractive" and output.label.startswith("offline")
    assert "two-year warranty [1]" in output.text
    assert output.citations[0].source_id.endswith("warranty.md")
    assert result.final_output == output.text and result.citations == output.citations
    assert_resolves(result, crew_home)
    knowledge = [s for s in result.trace if s.stage == "knowledge"]
    assert knowledge[0].detail["query"] == "How long is the warranty?"  # the instruction cut
    assert {"retrieve", "assemble"} <= {s.stage for s in result.trace}


def test_the_knowledge_block_is_numbered_bounded_and_in_the_prompt(crew_home: Path) -> None:
    chat = ScriptedRoleChat(script={"Support agent": cite("warranty.md", "Two years")})
    crew = build(crew_home, SUPPORT, chat=chat)
    result = run_crew(crew.graph, QUESTION)
    prompt = chat.calls[0][1]
    assert prompt.startswith("Task: Answer the customer's question: How long is the warranty?")
    assert "Knowledge (numbered passages):" in prompt
    numbered = re.findall(r"^\[(\d+)\] \(([^)]+)\)", prompt, re.MULTILINE)
    assert sorted(n for n, _ in numbered) == ["1", "2", "3"]  # three passages, each numbered, named
    assert numbered[0][1] == "warranty.md"
    output = result.output("answer")
    assert output.generator == "chat" and output.citations[0].source_id.endswith("warranty.md")
    assert_resolves(result, crew_home)

    small = load_settings(data_dir=crew_home / "data", assemble={"token_budget": 50})
    chat = ScriptedRoleChat(script={"Support agent": "Nothing to cite."})
    bounded = build_crew(write_crew(crew_home, SUPPORT, "small.yaml"), settings=small, chat=chat,
                         checkpointer=None)
    trace = run_crew(bounded.graph, QUESTION).trace
    assembled = next(s for s in trace if s.stage == "assemble")  # inside the retrieval subgraph
    assert assembled.detail["task"] == "answer" and assembled.detail["dropped"] == 2
    assert next(s for s in trace if s.stage == "task").detail["own_passages"] == 1
    assert re.findall(r"^\[(\d+)\] \(", chat.calls[0][1], re.MULTILINE) == ["1"]


TWO_TASKS = RAG + """\
agents:
  support:
    role: Support agent
    knowledge: [quill-kb]
  writer:
    role: Reply writer
    knowledge: [quill-kb]
tasks:
  - id: answer
    agent: support
    description: "Answer: {question}"
  - id: reply
    agent: writer
    description: "Write the reply to {question}"
    output_file: "replies/{question}.md"
"""


def test_two_task_sequential_crew_passes_cited_output_on(crew_home: Path) -> None:
    chat = ScriptedRoleChat(script={
        "Support agent": cite("warranty.md", "The hub has a two-year warranty"),
        "Reply writer": lambda user: f"Dear customer, two years [{source_marker(user, 'warranty.md')}].",
    })
    crew = build(crew_home, TWO_TASKS, "two.yaml", chat=chat,
                 output_dir=crew_home / "out")
    result = run_crew(crew.graph, QUESTION)
    assert chat.roles() == ["Support agent", "Reply writer"]
    writer_prompt = chat.calls[1][1]
    marker = source_marker(writer_prompt, "warranty.md")
    assert "### answer (Support agent)" in writer_prompt  # sequential: earlier outputs by default
    assert f"The hub has a two-year warranty [{marker}]." in writer_prompt  # renumbered into its block
    assert result.final_output == f"Dear customer, two years [{marker}]."
    assert result.citations[0].source_id.endswith("warranty.md")
    assert_resolves(result, crew_home)
    written = Path(result.output("reply").output_file or "")
    assert written.parent == (crew_home / "out" / "replies").resolve()
    assert written.name == "How long is the warranty_.md"
    text = written.read_text(encoding="utf-8")
    assert text.startswith("Dear customer") and "Sources:\n[" in text and "warranty.md" in text
    assert not [p for p in written.parent.iterdir() if p.name.endswith(".tmp")]


CHAIN = RAG + """\
agents:
  researcher: {role: Battery researcher, knowledge: [quill-kb]}
  fixer: {role: Radio fixer, knowledge: [quill-kb]}
  editor: {role: Final editor, knowledge: [quill-kb]}
tasks:
  - id: battery
    agent: researcher
    description: How long do the batteries last?
    context: []
  - id: radio
    agent: fixer
    description: What does error E7 mean?
    context: [battery]
  - id: final
    agent: editor
    description: Summarise battery life and error E7.
    context: [radio]
"""


def test_context_chain_hands_each_task_only_the_outputs_it_names(crew_home: Path) -> None:
    chat = ScriptedRoleChat(script={
        "Battery researcher": cite("battery.md", "Batteries last 18 months"),
        "Radio fixer": lambda user: (f"E7 is lost radio contact [{source_marker(user, 'errors.md')}]"
                                     f"; batteries last 18 months "
                                     f"[{source_marker(user, 'battery.md')}]."),
        "Final editor": lambda user: user.split("### radio (Radio fixer)\n", 1)[1].split(
            "\n\n", 1)[0],
    })
    result = run_crew(build(crew_home, CHAIN, "chain.yaml", chat=chat).graph, {})
    radio_prompt, final_prompt = chat.calls[1][1], chat.calls[2][1]
    assert "### battery (Battery researcher)" in radio_prompt
    assert "### battery" not in final_prompt and "### radio (Radio fixer)" in final_prompt
    # the editor's reply repeats the fixer's text as its prompt shows it: markers in its block
    final = result.output("final")
    cited = {c.marker: c.source_id for c in final.citations}
    assert sorted(Path(s).name for s in cited.values()) == ["battery.md", "errors.md"]
    for marker, source in cited.items():
        assert source_marker(final_prompt, Path(source).name) == marker
    assert_resolves(result, crew_home)


HIERARCHY = RAG + """\
process: hierarchical
manager: {role: Support team lead}
agents:
  support: {role: Support agent, knowledge: [quill-kb]}
  writer: {role: Reply writer}
tasks:
  - id: answer
    agent: support
    description: "Answer: {question}"
  - id: reply
    description: "Write the reply to {question}"
"""


def test_hierarchical_manager_routes_tasks_with_its_chat_model(crew_home: Path) -> None:
    chat = ScriptedRoleChat(script={
        "Support team lead": ['{"agent": "support", "reason": "knows the docs"}',
                              '```json\n{"agent": "writer"}\n```'],
        "Support agent": cite("warranty.md", "Two years"),
        "Reply writer": "Dear customer, see above.",
    })
    result = run_crew(build(crew_home, HIERARCHY, "boss.yaml", chat=chat).graph, QUESTION)
    assert chat.roles() == ["Support team lead", "Support agent", "Support team lead",
                            "Reply writer"]
    assert [(t.task, t.agent) for t in result.tasks] == [("answer", "support"), ("reply", "writer")]
    assert "assigned by manager: knows the docs" in result.output("answer").notes
    managers = [s.detail for s in result.trace if s.stage == "manager"]
    assert [d.get("by") for d in managers] == ["manager", "manager", None]
    assert managers[-1]["decision"] == "finish"


def test_hierarchical_manager_falls_back_to_the_declared_order(crew_home: Path) -> None:
    chat = ScriptedRoleChat(script={"Support team lead": '{"agent": "nobody"}',
                                    "Support agent": "Two years.", "Reply writer": "Dear customer."})
    result = run_crew(build(crew_home, HIERARCHY, "boss2.yaml", chat=chat).graph, QUESTION)
    assert [t.agent for t in result.tasks] == ["support", "writer"]  # declared, then by order
    fallbacks = [s.detail["fallback"] for s in result.trace if "fallback" in s.detail]
    assert fallbacks == ["crew file: the manager's reply named no known agent",
                         "declared order: the manager's reply named no known agent"]

    offline = run_crew(build(crew_home, HIERARCHY, "boss3.yaml").graph, QUESTION)
    assert [(t.agent, t.generator) for t in offline.tasks] == [("support", "extractive"),
                                                               ("writer", "none")]
    assert offline.final_output.startswith("This task needs a chat model: agent 'Reply writer'")


def test_hierarchical_manager_stops_best_effort_before_the_recursion_limit(
        crew_home: Path) -> None:
    crew = build(crew_home, HIERARCHY, "boss4.yaml")
    result = run_crew(crew.graph, QUESTION, recursion_limit=7)
    assert result.best_effort
    assert [t.generator for t in result.tasks] == ["extractive", "not_run"]
    assert result.tasks[1].text.startswith("Not run")
    assert [s.stage for s in result.trace][-1] == "finish"  # a soft stop, not the breaker


def test_crew_recursion_limit_returns_a_best_effort_result(crew_home: Path) -> None:
    crew = build(crew_home, TWO_TASKS, "two-limit.yaml")
    result = run_crew(crew.graph, QUESTION, recursion_limit=4)
    assert result.best_effort and result.trace[-1].stage == "circuit_breaker"
    assert [t.generator for t in result.tasks] == ["extractive", "not_run"]


FAN_IN = RAG + """\
process: graph
agents:
  a: {role: Battery analyst, knowledge: [quill-kb]}
  b: {role: Radio analyst, knowledge: [quill-kb]}
  c: {role: Summary writer}
tasks:
  - {id: battery, agent: a, description: "How long do the batteries last?"}
  - {id: radio, agent: b, description: "What does error E7 mean?"}
  - {id: summary, agent: c, description: Summarise both.}
edges: [battery -> summary, radio -> summary]
"""


def test_graph_process_runs_branches_in_parallel_and_joins_them(crew_home: Path) -> None:
    chat = ScriptedRoleChat(script={"Battery analyst": cite("battery.md", "18 months"),
                                    "Radio analyst": cite("errors.md", "Lost radio contact"),
                                    "Summary writer": "Both answered."})
    crew = build(crew_home, FAN_IN, "fan.yaml", chat=chat)
    drawing = crew.graph.get_graph()
    edges = {(e.source, e.target) for e in drawing.edges}
    assert {("begin", "battery.knowledge.quill-kb"), ("begin", "radio.knowledge.quill-kb"),
            ("battery", "summary"), ("radio", "summary"), ("summary", "finish")} <= edges
    result = run_crew(crew.graph, {})
    assert chat.roles()[-1] == "Summary writer"
    summary_prompt = chat.calls[-1][1]
    assert "### battery (Battery analyst)" in summary_prompt
    assert "### radio (Radio analyst)" in summary_prompt
    cited = sorted(Path(c.source_id).name for c in result.output("summary").citations)
    assert cited == []  # the summary cited nothing; its inherited passages stay uncited
    assert result.final_output == "Both answered."


TOOLS = RAG + """\
agents:
  searcher:
    role: Search agent
    tools: [rag_search]
    max_iter: 3
tasks:
  - id: lookup
    agent: searcher
    description: How long do the sensor batteries last?
"""


def _battery_reply(messages: list[BaseMessage]) -> AIMessage:
    """Cite the passage the tool result numbered for battery.md."""
    result = next(m for m in messages if isinstance(m, ToolMessage))
    marker = re.search(r"\[(\d+)\] \S*battery\.md", str(result.content))
    assert marker, result.content
    return AIMessage(content=f"The batteries last 18 months [{marker.group(1)}].")


def test_agent_uses_rag_search_through_the_agent_loop(crew_home: Path) -> None:
    chat = ScriptedToolChat(replies=[
        tool_call("rag_search", "call-1", query="battery life", collection="quill-kb", top_n=2),
        _battery_reply])
    crew = build(crew_home, TOOLS, "tools.yaml", chat=chat)
    assert "lookup:tools" in crew.graph.get_graph(xray=1).nodes  # the loop is a subgraph
    result = run_crew(crew.graph, {})
    assert chat.bound == ["rag_search"] and len(chat.calls) == 2
    output = result.output("lookup")
    assert output.generator == "agent" and "tool calls: 1" in output.notes
    assert [Path(c.source_id).name for c in output.citations] == ["battery.md"]
    assert_resolves(result, crew_home)


def test_agent_loop_stops_at_max_iter_best_effort(crew_home: Path) -> None:
    chat = ScriptedToolChat(replies=[tool_call("rag_search", "again", query="battery",
                                               collection="quill-kb")])
    result = run_crew(build(crew_home, TOOLS, "tools2.yaml", chat=chat).graph, {})
    output = result.output("lookup")
    assert len(chat.calls) == 3  # max_iter model calls, then the loop ends
    assert output.best_effort and result.best_effort
    assert "max_iter reached (3 model calls)" in output.notes


def test_an_unavailable_chat_model_falls_back_to_the_offline_answer(crew_home: Path) -> None:
    chat = ScriptedRoleChat(script={"Support agent": "unused"}, fail_with=ChatUnavailableError)
    result = run_crew(build(crew_home, SUPPORT, "down.yaml", chat=chat).graph, QUESTION)
    output = result.output("answer")
    assert output.generator == "extractive" and output.best_effort and "two-year" in output.text
    assert output.notes == ["fallback=offline: scripted failure"]


def test_offline_task_without_knowledge_says_it_needs_a_chat_model(crew_home: Path) -> None:
    text = SUPPORT.replace("    knowledge: [quill-kb]\n", "")
    output = run_crew(build(crew_home, text, "bare.yaml").graph, QUESTION).output("answer")
    assert output.generator == "none" and output.citations == []
    assert output.text.startswith("This task needs a chat model: agent 'Support agent'")


def test_a_missing_placeholder_input_is_a_clear_error(crew_home: Path) -> None:
    crew = build(crew_home, SUPPORT, "inputs.yaml")
    with pytest.raises(ConfigError, match=r"missing crew input\(s\) 'question'.*inputs\.yaml:14:"
                                          r"tasks\[0\]\.description"):
        run_crew(crew.graph, {})
    with pytest.raises(ConfigError, match="--input question="):
        crew.graph.invoke({"inputs": {"topic": "x"}})


def test_runs_are_checkpointed_per_thread_and_resume_after_a_failure(crew_home: Path) -> None:
    calls = {"n": 0}

    def flaky(user: str) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("the writer crashed")
        return "Dear customer, two years."

    chat = ScriptedRoleChat(script={"Support agent": cite("warranty.md", "Two years"),
                                    "Reply writer": flaky})
    crew = build(crew_home, TWO_TASKS, "threads.yaml", chat=chat, checkpointer="sqlite")
    assert crew.checkpoints == checkpoint_path(crew.settings, crew.spec)
    assert crew.checkpoints.is_file()
    with pytest.raises(RuntimeError, match="the writer crashed"):
        run_crew(crew.graph, QUESTION, thread_id="t-1")
    config = {"configurable": {"thread_id": "t-1"}}
    assert set(crew.graph.get_state(config).values["outputs"]) == {"answer"}  # inspectable
    result = run_crew(crew.graph, thread_id="t-1", resume=True)
    assert chat.roles() == ["Support agent", "Reply writer", "Reply writer"]  # answer not redone
    assert result.thread_id == "t-1" and result.final_output == "Dear customer, two years."
    again = run_crew(crew.graph, thread_id="t-1", resume=True)  # finished: its result
    assert again.final_output == result.final_output and len(chat.calls) == 3
    with pytest.raises(ConfigError, match="thread 'nope' has no crew run to resume"):
        run_crew(crew.graph, thread_id="nope", resume=True)
    with pytest.raises(ConfigError, match="resuming a crew run needs a checkpointer"):
        run_crew(build(crew_home, TWO_TASKS, "threads2.yaml").graph, thread_id="t-1", resume=True)
    fresh = run_crew(crew.graph, {"question": "What about the battery?"}, thread_id="t-1")
    assert [s.stage for s in fresh.trace].count("begin") == 1  # a new run starts clean
    assert fresh.output("answer").description.endswith("What about the battery?")


def test_public_load_crew_invokes_like_the_issue_says(crew_home: Path) -> None:
    graph = ragloom.load_crew(write_crew(crew_home, SUPPORT, "public.yaml"),
                              data_dir=crew_home / "data")
    from langgraph.graph.state import CompiledStateGraph

    assert isinstance(graph, CompiledStateGraph)
    out = graph.invoke({"inputs": QUESTION})
    assert set(out) == set(CrewOutput.__annotations__)
    result = out["result"]
    assert isinstance(result, CrewResult) and result.thread_id == "default"
    assert "two-year warranty [1]" in result.final_output


def test_studio_topology_snapshots(tmp_path: Path) -> None:
    from ragloom.crews.loader import packaged_examples

    for name in sorted(packaged_examples()):
        crew = build_crew(name, data_dir=tmp_path / "data", checkpointer=None)
        drawing = str(crew.graph.get_graph(xray=1).draw_mermaid())
        path = SNAPSHOTS / f"crew-{name}.mmd"
        if os.environ.get("UPDATE_SNAPSHOTS") == "1":
            path.parent.mkdir(exist_ok=True)
            path.write_text(drawing, encoding="utf-8")
        assert path.exists(), f"missing snapshot {path}: run with UPDATE_SNAPSHOTS=1 once"
        assert drawing == path.read_text(encoding="utf-8"), name


runner = CliRunner()


def test_cli_validate_and_run(crew_home: Path) -> None:
    good = write_crew(crew_home, SUPPORT, "cli.yaml")
    checked = runner.invoke(app, ["crew", "validate", str(good)])
    assert checked.exit_code == 0, checked.output
    assert "crew cli (ragloom, sequential): 1 agent(s), 1 task(s)" in checked.stdout
    bad = write_crew(crew_home, SUPPORT.replace("agent: support", "agent: nobody"), "bad.yaml")
    failed = runner.invoke(app, ["crew", "validate", str(bad)])
    assert failed.exit_code == 2
    assert f"{bad}:13:tasks[0].agent: unknown agent 'nobody'" in failed.stderr
    ran = runner.invoke(app, ["crew", "run", str(good), "--input",
                              "question=How long is the warranty?", "--json",
                              "--data-dir", str(crew_home / "data")])
    assert ran.exit_code == 0, ran.output
    result = CrewResult.model_validate(json.loads(ran.stdout))
    assert "two-year warranty [1]" in result.final_output and result.thread_id
    missing = runner.invoke(app, ["crew", "run", str(good), "--data-dir", str(crew_home / "data")])
    assert missing.exit_code == 2 and "missing crew input(s) 'question'" in missing.stderr
    for raw, message in (("{oops", "--inputs-json is not valid JSON"),
                         ("[1]", "--inputs-json must be a JSON object")):
        refused = runner.invoke(app, ["crew", "run", str(good), "--inputs-json", raw])
        assert refused.exit_code == 2 and message in " ".join(refused.output.split())


def test_a_crewai_project_runs_offline_with_its_knowledge_and_output_file(tmp_path: Path) -> None:
    from tests.conftest import ROOT

    project = ROOT / "examples" / "crews" / "crewai" / "lumen_faq"
    crew = build_crew(project, data_dir=tmp_path / "data", output_dir=tmp_path / "out",
                      checkpointer=None)
    assert [r.collection for r in crew.ingestion] == ["lumen_faq-lumen-notes"]
    with pytest.raises(ConfigError, match=r"'question' is used in .*tasks\.yaml:2:"
                                          r"answer_task\.description"):
        run_crew(crew.graph, {})
    result = run_crew(crew.graph, {"question": "Does the hub work without internet?"})
    output = result.output("answer_task")
    assert output.generator == "extractive" and "14 days" in output.text
    assert [Path(c.source_id).name for c in output.citations] == ["lumen-notes.md"]
    assert output.output_file == str((tmp_path / "out" / "answers" / "latest.md").resolve())
    assert any("ignored key 'verbose'" in n for n in result.notices)
