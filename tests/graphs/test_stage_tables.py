"""Stage tables: one table per graph yields its nodes, its skipped steps and the trace order."""

from __future__ import annotations

from typing import Any

import pytest

from ragloom.graphs.adaptive import ADAPTIVE_TABLE
from ragloom.graphs.assembly import Stage, plan
from ragloom.graphs.corrective import corrective_table
from ragloom.graphs.staged import staged_table
from ragloom.nodes.deps import RagDeps
from ragloom.nodes.trace import in_stage_order, skipped_step
from ragloom.registry import graph_builder
from ragloom.settings import RagSettings, load_settings
from ragloom.state import TraceStep


def _node(state: Any, deps: Any) -> dict[str, Any]:
    """A node that does nothing."""
    return {}


def test_plan_splits_a_table_into_nodes_and_skipped_steps_in_table_order() -> None:
    table = [Stage("a", _node), Stage("b", _node, lambda s: "b is off"), Stage("c", _node),
             Stage("d", _node, lambda s: None if s.generate.enabled else "retrieval-only")]
    nodes, skipped = plan(table, RagSettings())
    assert [s.name for s in nodes] == ["a", "c", "d"]
    assert [(s.stage, s.detail["reason"], s.duration_ms) for s in skipped] == [
        ("b", "b is off", 0.0)]
    off = RagSettings.model_validate({"generate": {"enabled": False}})
    assert [s.stage for s in plan(table, off).skipped] == ["b", "d"]


def test_skipped_steps_go_before_the_first_later_stage_of_the_order() -> None:
    def step(stage: str) -> TraceStep:
        return TraceStep(stage=stage, duration_ms=1.0)

    trace = [step("guard"), step("retrieve"), step("grade"), step("retrieve"), step("generate"),
             step("answer")]
    skipped = [skipped_step("web", "off"), skipped_step("transform", "none")]
    order = ["guard", "transform", "retrieve", "grade", "web", "generate", "answer"]
    merged = in_stage_order(trace, skipped, order)
    assert [s.stage for s in merged] == ["guard", "transform", "retrieve", "grade", "retrieve",
                                         "web", "generate", "answer"]


@pytest.mark.parametrize("input_guarded", [True, False])
def test_every_table_names_each_stage_once(input_guarded: bool) -> None:
    for table in (staged_table(input_guarded), corrective_table(input_guarded), ADAPTIVE_TABLE):
        names = [s.name for s in table]
        assert len(names) == len(set(names)) and names[0] == "guard" and names[-1] == "answer"
        assert ("input_guard" in names) == (input_guarded or table is ADAPTIVE_TABLE)


@pytest.mark.parametrize("overrides", [
    {},
    {"guard": {"input": False, "output": False, "min_relevance": 0}},
    {"generate": {"enabled": False}},
    {"groundedness": {"enabled": True}, "transform": {"name": "multi-query"},
     "rerank": {"name": "llm"}, "ranking": {"source_cap": 2}},
    {"retrieval": {"sibling_weight": 0}, "loop": {"web": True},
     "web": {"search_url": "http://127.0.0.1:9/search"}},
])
@pytest.mark.parametrize(("profile", "table"), [("balanced", staged_table()),
                                                ("corrective", corrective_table()),
                                                ("adaptive", ADAPTIVE_TABLE)])
def test_a_stage_is_a_node_exactly_when_its_table_does_not_skip_it(
        profile: str, table: tuple[Stage, ...], overrides: dict[str, Any]) -> None:
    settings = load_settings(profile, **overrides)
    deps = RagDeps(settings=settings, index=None, embedder=None)  # type: ignore[arg-type]
    drawn = graph_builder(profile)(deps).compile().get_graph(xray=1).nodes
    nodes = {name.rsplit(":", 1)[-1] for name in drawn if not name.startswith("iterative:")}
    nodes_planned, skipped = plan(table, settings)
    assert {s.name for s in nodes_planned} - {"refuse"} <= nodes
    assert not {s.stage for s in skipped} & nodes
