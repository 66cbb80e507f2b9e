"""Crew YAML → CrewSpec: both dialects, every error with file:line:field, notices, placeholders."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragloom.crews.dialects import label
from ragloom.crews.knowledge import Block, build_block, interleave, renumber, retrieval_query
from ragloom.crews.loader import find_crew, packaged_examples, validate_crew
from ragloom.crews.outputs import output_path
from ragloom.crews.placeholders import interpolate, missing_inputs, placeholders
from ragloom.crews.result import TaskOutput
from ragloom.crews.schema import CrewConfigError, TaskSpec
from ragloom.errors import ConfigError
from ragloom.settings import load_settings
from ragloom.state import Chunk, Citation, ScoredChunk
from tests.conftest import ROOT
from tests.crews.conftest import write_crew

CREWAI = ROOT / "examples" / "crews" / "crewai"

BASE = """\
rag:
  collections:
    kb-one: {}
agents:
  support:
    role: Support agent
    knowledge: [kb-one]
  writer:
    role: Writer
tasks:
  - id: answer
    agent: support
    description: "Answer: {question}"
  - id: reply
    agent: writer
    description: Write the reply
"""


def problems_of(path: Path) -> list[str]:
    """The problems validate reports for a crew path, as `file:line:field: message` strings."""
    with pytest.raises(CrewConfigError) as caught:
        validate_crew(path)
    return [str(p) for p in caught.value.problems]


def edit(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


CASES = [
    ("unknown agent", edit(BASE, "agent: writer", "agent: writter"), 15, "tasks[1].agent",
     "unknown agent 'writter'; did you mean 'writer'?"),
    ("unknown collection", edit(BASE, "knowledge: [kb-one]", "knowledge: [kb-two]"), 7,
     "agents.support.knowledge[0]", "unknown collection 'kb-two'"),
    ("unknown tool", edit(BASE, "role: Writer", "role: Writer\n    tools: [web_search]"), 10,
     "agents.writer.tools[0]", "unknown tool 'web_search'"),
    ("context cycle", edit(edit(BASE, "description: \"Answer: {question}\"",
                                "description: \"Answer: {question}\"\n    context: [reply]"),
                           "description: Write the reply",
                           "description: Write the reply\n    context: [answer]"),
     14, "tasks[0].context", "context cycle: answer → reply → answer"),
    ("duplicate task id", edit(BASE, "id: reply", "id: answer"), 14, "tasks[1].id",
     "duplicate task id 'answer'"),
    ("duplicate key", edit(BASE, "  writer:\n", "  support:\n"), 8, "agents.support",
     "duplicate key 'support'"),
    ("unknown field", edit(BASE, "role: Writer", "role: Writer\n    knowlege: [kb-one]"), 10,
     "agents.writer.knowlege", "unknown field 'knowlege'; did you mean 'knowledge'?"),
    ("wrong type", edit(BASE, "role: Writer", "role: Writer\n    max_iter: many"), 10,
     "agents.writer.max_iter", "valid integer"),
    ("missing description", edit(BASE, "    description: Write the reply\n", ""), 14,
     "tasks[1].description", "missing required field"),
    ("unknown process", BASE + "process: parallel\n", 17, "process", "unknown process 'parallel'"),
    ("unsafe output_file", edit(BASE, "description: Write the reply",
                                "description: Write the reply\n    output_file: ../../etc/x"),
     17, "tasks[1].output_file", "climbs out"),
    ("absolute output_file", edit(BASE, "description: Write the reply",
                                  "description: Write the reply\n    output_file: /tmp/x.md"),
     17, "tasks[1].output_file", "is absolute"),
    ("unknown profile", edit(BASE, "knowledge: [kb-one]", "knowledge: [kb-one]\n    profile: turbo"),
     8, "agents.support.profile", "unknown profile 'turbo'"),
    ("unknown chunker", edit(BASE, "kb-one: {}", "kb-one:\n      chunking: {strategy: magic}"), 4,
     "rag.collections.kb-one.chunking.strategy", "unknown chunker 'magic'"),
    ("bad collection name", edit(edit(BASE, "kb-one: {}", "k!: {}"), "[kb-one]", "[k!]"), 3,
     "rag.collections.k!", "collection name 'k!'"),
    ("edges outside graph", BASE + "edges: [answer -> reply]\n", 17, "edges",
     "edges apply to process 'graph'"),
    ("edge to unknown task", BASE + "process: graph\nedges:\n  - answer -> review\n", 19,
     "edges[0]", "unknown task 'review'"),
    ("reserved id", edit(BASE, "id: reply", "id: finish"), 14, "tasks[1].id", "reserved"),
    ("no agent", edit(BASE, "    agent: writer\n", ""), 14, "tasks[1].agent",
     "the task names no agent"),
]


@pytest.mark.parametrize(("case", "text", "line", "field", "message"), CASES,
                         ids=[c[0] for c in CASES])
def test_each_schema_error_names_file_line_and_field(tmp_path: Path, case: str, text: str,
                                                     line: int, field: str, message: str) -> None:
    path = write_crew(tmp_path, text)
    found = problems_of(path)
    where = f"{path}:{line}:{field}: "
    assert any(p.startswith(where) and message in p for p in found), (where, message, found)


def test_context_must_be_upstream_in_a_graph_crew(tmp_path: Path) -> None:
    text = edit(BASE, "description: Write the reply",
                "description: Write the reply\n  - id: third\n    agent: writer\n"
                "    description: Third\n    context: [answer]") + \
        "process: graph\nedges:\n  - answer -> reply\n"
    found = problems_of(write_crew(tmp_path, text))
    assert any(":20:tasks[2].context[0]: context 'answer' is not upstream of 'third'" in p
               for p in found), found


def test_every_problem_is_reported_at_once_with_its_place(tmp_path: Path) -> None:
    text = edit(edit(BASE, "agent: writer", "agent: nobody"), "knowledge: [kb-one]",
                "knowledge: [missing]\n    tools: [rag_search, magic]")
    path = write_crew(tmp_path, text)
    found = problems_of(path)
    assert len(found) == 3, found
    assert [p.split(": ", 1)[0] for p in found] == [
        f"{path}:7:agents.support.knowledge[0]", f"{path}:8:agents.support.tools[1]",
        f"{path}:16:tasks[1].agent"]
    with pytest.raises(ConfigError, match=r"crew\.yaml:7:agents\.support\.knowledge\[0\]"):
        validate_crew(path)


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    path = write_crew(tmp_path, "agents:\n  a: {role: x\ntasks: []\n")
    with pytest.raises(ConfigError, match=r"crew\.yaml:3: invalid YAML"):
        validate_crew(path)


def test_top_level_must_be_a_mapping_and_crews_need_agents_and_tasks(tmp_path: Path) -> None:
    assert problems_of(write_crew(tmp_path, "- a\n- b\n", "list.yaml"))[0].endswith(
        "list.yaml:1: a crew file must be a mapping with agents: and tasks:")
    found = problems_of(write_crew(tmp_path, "name: empty\nagents: {}\ntasks: []\n"))
    assert any("agents: the crew has no agents" in p for p in found)
    assert any("tasks: the crew has no tasks" in p for p in found)


def test_a_valid_ragloom_crew_and_its_defaults(tmp_path: Path) -> None:
    spec = validate_crew(write_crew(tmp_path, BASE + "process: sequential\n"))
    assert spec.dialect == "ragloom" and spec.name == "crew" and spec.process == "sequential"
    assert spec.order == ["answer", "reply"]
    assert spec.inputs == {"question": [f"{tmp_path / 'crew.yaml'}:13:tasks[0].description"]}
    assert spec.agents["support"].max_iter == 5 and spec.agents["writer"].knowledge == []
    assert spec.context_of("reply") == ["answer"]  # sequential: every earlier task by default
    assert spec.notices == []


def test_crewai_keys_in_a_ragloom_crew_are_reported_once_as_ignored(tmp_path: Path) -> None:
    text = edit(edit(BASE, "role: Writer", "role: Writer\n    verbose: true\n    memory: true"),
                "role: Support agent", "role: Support agent\n    verbose: false")
    spec = validate_crew(write_crew(tmp_path, text + "verbose: true\n"))
    verbose = [n for n in spec.notices if "'verbose'" in n]
    assert len(verbose) == 1 and verbose[0].count("verbose") == 4  # one notice, three places
    assert any("'memory'" in n for n in spec.notices)


def test_a_context_naming_a_later_task_moves_it_after_that_task(tmp_path: Path) -> None:
    text = edit(BASE, "description: \"Answer: {question}\"",
                "description: \"Answer: {question}\"\n    context: [reply]")
    spec = validate_crew(write_crew(tmp_path, text))
    assert spec.order == ["reply", "answer"]
    assert any("tasks run after the tasks their context names" in n for n in spec.notices)
    assert spec.context_of("answer") == ["reply"] and spec.context_of("reply") == []


def test_graph_edges_accept_arrows_and_pairs_and_default_the_context(tmp_path: Path) -> None:
    text = edit(BASE, "description: Write the reply",
                "description: Write the reply\n  - id: third\n    agent: writer\n"
                "    description: Third") + "process: graph\nedges:\n  - answer -> third\n" \
        "  - [reply, third]\n"
    spec = validate_crew(write_crew(tmp_path, text))
    assert spec.edges == [("answer", "third"), ("reply", "third")]
    assert spec.context_of("third") == ["answer", "reply"] and spec.context_of("reply") == []


# ---------------------------------------------------------------- CrewAI project configs


def test_crewai_flat_project_with_knowledge_sources_and_ignored_keys() -> None:
    spec = validate_crew(CREWAI / "lumen_faq")
    assert spec.dialect == "crewai" and spec.name == "lumen_faq"
    agent = spec.agents["faq_agent"]
    assert agent.role == "Lumen FAQ assistant"  # folded block, trailing newline stripped
    assert agent.knowledge == ["lumen_faq-lumen-notes"]
    sources = spec.rag.collections["lumen_faq-lumen-notes"].sources
    assert sources == [str((CREWAI / "lumen_faq" / "knowledge" / "lumen-notes.md").resolve())]
    assert spec.tasks[0].output_file == "answers/latest.md"
    assert list(spec.inputs) == ["question"]
    notices = "\n".join(spec.notices)
    for key in ("verbose", "allow_delegation", "markdown"):
        assert f"ignored key {key!r}" in notices
    assert "agents.yaml:11:faq_agent.verbose" in notices
    assert "faq_agent (openai/gpt-4o-mini)" in notices  # llm maps to the configured chat model


def test_crewai_src_layout_with_context_chain_unknown_tools_and_placeholders() -> None:
    spec = validate_crew(CREWAI / "market_brief")
    assert spec.order == ["research_task", "analysis_task", "reporting_task"]
    assert spec.context_of("reporting_task") == ["research_task", "analysis_task"]
    assert spec.agents["researcher"].tools == ["rag_search"]
    assert spec.agents["researcher"].max_iter == 4
    assert list(spec.inputs) == ["topic", "current_year"]
    assert spec.tasks[2].description.startswith("Write the report on {topic}.\nUse the")  # literal
    notices = "\n".join(spec.notices)
    assert "unknown tool 'SerperDevTool' left out" in notices
    assert "agents.yaml:10:researcher.tools[0]" in notices
    for key in ("max_rpm", "memory", "async_execution", "human_input"):
        assert f"ignored key {key!r}" in notices
    assert spec.process == "sequential"


def test_crewai_hierarchical_project_with_anchors_and_tasks_without_agents() -> None:
    spec = validate_crew(CREWAI / "support_desk")
    assert spec.process == "hierarchical"  # from crew.py's Process.hierarchical
    assert "_defaults" not in spec.agents and len(spec.agents) == 5
    assert spec.agents["triage_agent"].max_iter == 3  # merged from the anchor
    assert spec.agents["warranty_agent"].max_iter == 2  # explicit key wins over the merge
    assert spec.tasks[0].agent is None and spec.tasks[2].agent == "warranty_agent"
    shared = spec.agents["hardware_agent"].knowledge
    assert shared == spec.agents["triage_agent"].knowledge == ["support_desk-desk-handbook"]
    assert spec.agents["billing_agent"].knowledge == []  # a content source names no file
    notices = "\n".join(spec.notices)
    assert "entry '_defaults' has no role: not an agent, skipped" in notices
    assert "process 'hierarchical' read from crew.py" in notices
    assert "knowledge source without files ignored" in notices
    assert "ignored key 'tools'" in notices and "tasks.yaml:11:diagnosis_task.tools" in notices


def crewai_project(folder: Path, agents: str, tasks: str, layout: str = "config") -> Path:
    config = folder / layout
    config.mkdir(parents=True)
    (config / "agents.yaml").write_text(agents, encoding="utf-8")
    (config / "tasks.yaml").write_text(tasks, encoding="utf-8")
    return folder


AGENTS = """\
researcher:
  role: Researcher
  goal: Research {topic}
  backstory: Curious.
  tools: [SerperDevTool, ScrapeWebsiteTool]
writer:
  role: Writer
  goal: Write
  backstory: Clear.
"""
TASKS = """\
research_task:
  description: Research {topic} for {audience}
  expected_output: Notes
write_task:
  description: Write about {topic}
  expected_output: Text
  output_file: out/{topic}.md
"""


def test_crewai_tasks_without_agents_run_in_declared_order_and_unknown_tools_drop(
        tmp_path: Path) -> None:
    spec = validate_crew(crewai_project(tmp_path / "proj", AGENTS, TASKS))
    assert [t.agent for t in spec.tasks] == ["researcher", "writer"]
    assert spec.agents["researcher"].tools == []
    assert any("research_task → researcher" in n for n in spec.notices)
    assert sum("unknown tool" in n for n in spec.notices) == 2
    assert spec.inputs.keys() == {"topic", "audience"}
    assert validate_crew(tmp_path / "proj" / "config" / "agents.yaml").name == "proj"


def test_crewai_errors_name_the_file_line_and_task(tmp_path: Path) -> None:
    tasks = TASKS + "review_task:\n  description: Review\n  agent: editor\n" \
        "  context: [draft_task]\n"
    path = crewai_project(tmp_path / "proj", AGENTS, tasks)
    found = problems_of(path)
    tasks_file = path / "config" / "tasks.yaml"
    assert f"{tasks_file}:10:review_task.agent: unknown agent 'editor'" in found[0]
    assert f"{tasks_file}:11:review_task.context[0]: unknown task 'draft_task'" in found[1]


def test_crewai_duplicate_keys_are_reported_and_the_last_wins(tmp_path: Path) -> None:
    agents = AGENTS + "writer:\n  role: Second writer\n"
    spec = validate_crew(crewai_project(tmp_path / "proj", agents, TASKS))
    assert spec.agents["writer"].role == "Second writer"
    assert any("duplicate key 'writer'" in n and "agents.yaml:10:writer" in n
               for n in spec.notices)


def test_crewai_project_lookup_errors_are_clear(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no CrewAI config found"):
        validate_crew(tmp_path / "empty")
    crewai_project(tmp_path / "two" / "a", AGENTS, TASKS)
    crewai_project(tmp_path / "two" / "b", AGENTS, TASKS)
    with pytest.raises(ConfigError, match="several CrewAI configs found"):
        validate_crew(tmp_path / "two")
    (tmp_path / "half" / "config").mkdir(parents=True)
    (tmp_path / "half" / "config" / "agents.yaml").write_text(AGENTS, encoding="utf-8")
    with pytest.raises(ConfigError, match="has no tasks.yaml"):
        validate_crew(tmp_path / "half")
    (tmp_path / "bad" / "config").mkdir(parents=True)
    (tmp_path / "bad" / "config" / "agents.yaml").write_text("- a\n", encoding="utf-8")
    (tmp_path / "bad" / "config" / "tasks.yaml").write_text(TASKS, encoding="utf-8")
    assert problems_of(tmp_path / "bad")[0].endswith(
        "agents.yaml:1: agents.yaml must be a mapping of agents by name")


def test_packaged_examples_validate_and_resolve_by_name() -> None:
    examples = packaged_examples()
    assert {"support", "research", "triage"} <= set(examples)
    for name in examples:
        spec = validate_crew(name)
        assert spec.dialect == "ragloom" and find_crew(name) == examples[name]
    with pytest.raises(ConfigError, match="packaged example: research, support, triage"):
        find_crew("nonexistent-crew")


@pytest.mark.parametrize("path", sorted((ROOT / "examples" / "crews").glob("*.yaml")),
                         ids=lambda p: p.name)
def test_repository_examples_validate(path: Path) -> None:
    assert validate_crew(path).tasks


# ---------------------------------------------------------------- placeholders and outputs


def test_placeholders_leave_json_alone_and_missing_inputs_are_named() -> None:
    text = 'Reply as {"answer": "..."} about {topic} for {audience-name} {topic}'
    assert placeholders(text) == ["topic", "audience-name"]
    assert interpolate(text, {"topic": "wind", "audience-name": "kids"}) == \
        'Reply as {"answer": "..."} about wind for kids wind'
    assert interpolate("{items}", {"items": ["a", 1]}) == '["a", 1]'
    error = missing_inputs({"topic": ["tasks.yaml:3:research_task.description"]}, {})
    assert error is not None and "missing crew input(s) 'topic'" in str(error)
    assert "tasks.yaml:3:research_task.description" in str(error) and "--input topic=" in str(error)
    assert missing_inputs({"topic": []}, {"topic": "x"}) is None


def test_output_paths_stay_under_the_output_directory(tmp_path: Path) -> None:
    root = tmp_path / "out"
    assert output_path(root, "briefs/{p}.md", {"p": "Lumen Pro"}) == \
        (root / "briefs" / "Lumen Pro.md").resolve()
    sneaky = output_path(root, "{p}.md", {"p": "../../etc/passwd"})
    assert sneaky.parent == root.resolve() and "/" not in sneaky.name
    with pytest.raises(ConfigError, match="outside the output directory"):
        output_path(root, "../x.md", {})


# ---------------------------------------------------------------- knowledge blocks


def scored(n: int, source: str = "a.md") -> ScoredChunk:
    chunk = Chunk(id=f"{source}::{n}::{n:012d}", source_id=source, doc_id=source,
                  text=f"passage {n} text", start=n * 10, end=n * 10 + 9)
    return ScoredChunk(chunk=chunk, score=1.0 / (n + 1), score_origin="rrf")


def test_interleave_block_and_renumber() -> None:
    first, second = [scored(1), scored(2)], [scored(3, "b.md"), scored(1)]
    assert [s.chunk.id for s in interleave([first, second])] == [
        first[0].chunk.id, second[0].chunk.id, first[1].chunk.id]
    block = Block(interleave([first, second]))
    assert block.add(scored(2)) == 3 and block.add(scored(9)) == 4 and len(block) == 4
    assert renumber("A [1]. B [2, 3]. C [4][1].", {1: 5, 2: 6}) == "A [5]. B [6]. C [5]."


def test_build_block_inherits_the_cited_passages_of_context_tasks_renumbered() -> None:
    settings = load_settings("balanced")
    upstream = [scored(7, "up.md"), scored(8, "up.md")]
    cited = Citation(marker=2, chunk_id=upstream[1].chunk.id, source_id="up.md", snippet="",
                     score=0.5, score_origin="rrf", start=80, end=89)
    output = TaskOutput(task="t1", agent="a", role="A", description="d",
                        text="Claim [2]. Uncited [1].", citations=[cited], generator="chat")
    block, texts, detail = build_block([[scored(1)]], [(output, upstream)], settings)
    assert [s.chunk.id for s in block.passages] == [scored(1).chunk.id, upstream[1].chunk.id]
    assert texts == ["Claim [2]. Uncited ."]  # [2] → its passage's new number; [1] was not cited
    assert detail["own_passages"] == 1 and detail["inherited_passages"] == 1


@pytest.mark.parametrize(("description", "query", "expected"), [
    ("Answer the customer's question: {question}", None, "How long? ok"),
    ("How long is the warranty of the {question}", None, "How long is the warranty of the "
                                                         "How long? ok"),
    ("Research {question}: notes {question}", None, "Research How long? ok: notes How long? ok"),
    ("Anything: {question}", "warranty {question}", "warranty How long? ok"),
])
def test_retrieval_query(description: str, query: str | None, expected: str) -> None:
    task = TaskSpec(id="t", description=description, query=query)
    assert retrieval_query(task, {"question": "How long? ok"}, 200) == expected


def test_label_formats_paths() -> None:
    assert label(("tasks", 0, "agent")) == "tasks[0].agent"
    assert label(("researcher", "tools", 1)) == "researcher.tools[1]"


def test_crewai_configs_from_the_wild_load_robustly(tmp_path: Path) -> None:
    agents = AGENTS.replace("  tools: [SerperDevTool, ScrapeWebsiteTool]",
                            "  tools:\n    - {name: custom}\n    - rag_search\n  max_iter: null\n"
                            "  step_callback: null")
    spec = validate_crew(crewai_project(tmp_path / "proj", agents, TASKS))
    assert spec.agents["researcher"].tools == ["rag_search"]
    assert spec.agents["researcher"].max_iter == 5  # null: the default
    assert any("a tool that is not a name is left out" in n and "researcher.tools[0]" in n
               for n in spec.notices)


def test_ids_with_langgraph_namespace_characters_are_refused(tmp_path: Path) -> None:
    found = problems_of(write_crew(tmp_path, edit(BASE, "id: reply", "id: 'a:b'")))
    assert any(":14:tasks[1].id: task id 'a:b' is reserved" in p for p in found), found
    found = problems_of(write_crew(tmp_path, edit(BASE, "rag:\n", "rag:\n  profile: x\n")))
    assert any(":2:rag.profile: unknown field 'profile'" in p for p in found), found
