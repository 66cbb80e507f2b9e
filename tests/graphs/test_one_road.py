"""One road: the same config file resolves to the same settings on every surface, and a run's
own loop budget is honoured on every surface (read from each answer's trace)."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

import ragloom
from ragloom import runner
from ragloom.api.app import create_app
from ragloom.cli import app
from ragloom.crews.loader import run_crew
from ragloom.graphs import routing
from ragloom.settings import load_settings
from ragloom.state import RagAnswer, RagContext, TraceStep
from tests.conftest import EXAMPLES_KB

QUESTION = "How long does the Lumen Pro keep running without sunlight?"
COLLECTION = "road"
LOOP = "loop"
"""A one-passage collection: the budget tests loop forty times, each round kept cheap."""
LOOP_QUESTION = "How much does the P-40 pump move?"
CREW = """\
name: road-crew
rag:
  collections:
    default: {}
agents:
  reader:
    role: Reader
    goal: Answer from the knowledge base
    profile: quality
    knowledge: [default]
tasks:
  - id: answer
    agent: reader
    description: "Answer: {question}"
    expected_output: one cited sentence
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example knowledge base in collection `road`, a config file and a crew beside it."""
    root = tmp_path_factory.mktemp("road")
    assert not ragloom.ingest([str(EXAMPLES_KB)], collection=COLLECTION,
                              data_dir=root / "data").failed
    (root / "ragloom.yaml").write_text("retrieval: {candidate_k: 80, fusion: rrf}\n",
                                       encoding="utf-8")
    (root / "crew.yaml").write_text(CREW, encoding="utf-8")
    (root / "loop").mkdir()
    (root / "loop" / "pump.md").write_text("# Pump\n\nThe P-40 pump moves 40 litres a minute.\n",
                                           encoding="utf-8")
    assert not ragloom.ingest([str(root / "loop")], collection=LOOP, data_dir=root / "data").failed
    return root


@pytest.fixture
def configured(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment every surface reads: the config file and the data directory."""
    monkeypatch.setenv("RAGLOOM_CONFIG", str(home / "ragloom.yaml"))
    monkeypatch.setenv("RAGLOOM_DATA_DIR", str(home / "data"))
    monkeypatch.setenv("RAGLOOM_CHAT__PROVIDER", "none")
    return home


@pytest.fixture
def studio(configured: Path) -> Iterator[Any]:
    """graphs/studio.py as `langgraph dev` loads it (a fresh import under this environment)."""
    sys.modules.pop("ragloom.graphs.studio", None)
    yield importlib.import_module("ragloom.graphs.studio")
    sys.modules.pop("ragloom.graphs.studio", None)


def _retrieval_of(trace: list[TraceStep]) -> tuple[Any, Any]:
    step = next(s for s in trace if s.stage == "retrieve")
    return step.detail["candidate_k"], step.detail.get("fusion")


def test_the_same_config_file_resolves_alike_on_every_surface(
        configured: Path, studio: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, tuple[Any, Any]] = {}
    answers: list[RagAnswer] = []
    real_invoke = runner.invoke
    monkeypatch.setattr(runner, "invoke", lambda run: answers.append(real_invoke(run))
                        or answers[-1])

    cli = CliRunner().invoke(app, ["search", QUESTION, "-p", "quality", "-c", COLLECTION,
                                   "--json"])
    assert cli.exit_code == 0, cli.output
    seen["cli"] = _retrieval_of([TraceStep(**s) for s in json.loads(cli.stdout)["trace"]])

    seen["ask"] = _retrieval_of(ragloom.ask(QUESTION, profile="quality",
                                            collection=COLLECTION).trace)
    graph = ragloom.build_graph("quality", settings=load_settings(), collection=COLLECTION)
    seen["build_graph"] = _retrieval_of(ragloom.run_graph(graph, QUESTION).trace)

    documents = ragloom.as_retriever(profile="quality", collection=COLLECTION).invoke(QUESTION)
    assert documents
    seen["as_retriever"] = _retrieval_of(answers[-1].trace)

    crew = ragloom.load_crew(str(configured / "crew.yaml"), collection=COLLECTION,
                             checkpointer=None)
    seen["crew"] = _retrieval_of(run_crew(crew, {"question": QUESTION}).trace)

    with TestClient(create_app()) as client:
        response = client.post("/rag/retrieve", json={"query": QUESTION, "profile": "quality",
                                                      "collection": COLLECTION})
    assert response.status_code == 200, response.text
    seen["http"] = _retrieval_of([TraceStep(**s) for s in response.json()["trace"]])

    answer = studio.quality.invoke({"question": QUESTION},
                                   context=RagContext(collection=COLLECTION))["answer"]
    assert answer.profile == "quality"
    seen["studio"] = _retrieval_of(answer.trace)

    assert seen == dict.fromkeys(seen, (80, "rrf")), seen


@pytest.fixture
def looping(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every check fails: a corrective run rewrites until its budget is spent (the long way
    round: grade, generate, groundedness and answers-question each iteration)."""
    verdicts = {"grade": "correct", "input_guard": "ok", "scope": "in_scope",
                "groundedness": "grounded", "answers_question": "unaddressed"}
    monkeypatch.setattr(routing, "last_verdict", lambda state, stage: verdicts.get(stage))


def _ran_the_whole_budget(answer: RagAnswer, budget: int) -> None:
    assert answer.iterations == budget, [s.stage for s in answer.trace]
    assert not any(s.stage == "circuit_breaker" for s in answer.trace)


def test_a_run_budget_of_ten_is_spent_whole_on_every_surface(
        configured: Path, studio: Any, looping: None) -> None:
    _ran_the_whole_budget(ragloom.ask(LOOP_QUESTION, profile="corrective", collection=LOOP,
                                      max_iterations=10), 10)
    graph = ragloom.build_graph("corrective", collection=LOOP)
    _ran_the_whole_budget(ragloom.run_graph(graph, {"question": LOOP_QUESTION,
                                                    "max_iterations": 10}), 10)
    streamed = list(ragloom.stream(LOOP_QUESTION, profile="corrective", collection=LOOP,
                                   max_iterations=10))
    assert streamed[-1].answer is not None
    _ran_the_whole_budget(streamed[-1].answer, 10)
    served = studio.corrective.invoke({"question": LOOP_QUESTION, "max_iterations": 10},
                                      context=RagContext(collection=LOOP))["answer"]
    _ran_the_whole_budget(served, 10)


def test_a_run_budget_bounds_the_circuit_breaker_too(configured: Path, looping: None,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # with the soft bound out of the way, the run's own recursion limit (derived from its budget
    # of 1) trips long before the compiled one (derived from the largest budget)
    monkeypatch.setattr(routing, "budget_left", lambda state: True)
    monkeypatch.setattr(routing, "out_of_steps", lambda state: False)
    answer = ragloom.ask(LOOP_QUESTION, profile="corrective", collection=LOOP, max_iterations=1)
    assert answer.best_effort and [s.stage for s in answer.trace] == ["circuit_breaker"]
    assert "Recursion limit of 45" in answer.trace[0].detail["error"]
