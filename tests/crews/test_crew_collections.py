"""Crews read collections like every other surface: the configured one, or one named by a CrewAI
project's `knowledge`, in the data directory the run was given."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragloom.cli import app
from ragloom.crews.loader import build_crew, run_crew
from ragloom.crews.result import CrewResult
from ragloom.errors import UnknownCollectionError
from ragloom.runner import ingest
from tests.crews.conftest import write_crew, write_kb

AGENTS = """\
desk_agent:
  role: Bike desk
  goal: Answer questions from the notes
  backstory: You quote the notes.
  knowledge: [bikes]
"""
TASKS = """\
answer_task:
  description: "A customer asks: {question}"
  expected_output: One sentence.
  agent: desk_agent
"""


@pytest.fixture(scope="module")
def bikes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data directory whose only collection is `bikes` (no `default`)."""
    home = tmp_path_factory.mktemp("bikes")
    assert not ingest([str(write_kb(home))], collection="bikes", data_dir=home / "data").failed
    return home


def test_a_crewai_project_reads_an_existing_collection_named_in_its_knowledge(bikes: Path) -> None:
    project = bikes / "desk"
    (project / "config").mkdir(parents=True)
    write_crew(project / "config", AGENTS, "agents.yaml")
    write_crew(project / "config", TASKS, "tasks.yaml")
    crew = build_crew(project, data_dir=bikes / "data", checkpointer=None)
    result = run_crew(crew.graph, {"question": "How long is the warranty?"})
    assert "two-year warranty" in result.final_output
    assert [Path(c.source_id).name for c in result.citations] == ["warranty.md"]
    elsewhere = build_crew(project, data_dir=bikes / "elsewhere", checkpointer=None)
    with pytest.raises(UnknownCollectionError, match="unknown collection 'bikes'"):
        run_crew(elsewhere.graph, {"question": "How long is the warranty?"})


def test_a_packaged_crew_reads_the_collection_given_with_c(bikes: Path) -> None:
    ran = CliRunner().invoke(app, ["crew", "run", "support", "-c", "bikes", "--json",
                                   "--input", "question=How long is the warranty?",
                                   "--data-dir", str(bikes / "data")])
    assert ran.exit_code == 0, ran.output
    result = CrewResult.model_validate(json.loads(ran.stdout))
    assert "two-year warranty" in result.final_output
    refused = CliRunner().invoke(app, ["crew", "run", "support", "--input", "question=q",
                                       "--data-dir", str(bikes / "data")])
    assert refused.exit_code == 2 and "unknown collection 'default'" in refused.stderr
