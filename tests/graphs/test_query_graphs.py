"""The query graphs over a real ingested example knowledge base (offline: no chat model)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from ragloom.errors import QueryError, UnknownNameError
from ragloom.graphs.retrieval import build_retrieval_graph
from ragloom.nodes.deps import RagDeps
from ragloom.registry import build_graph, graph_builder
from ragloom.runner import ask, ingest, retrieve
from ragloom.settings import load_settings
from tests.conftest import EXAMPLES_KB

SNAPSHOTS = Path(__file__).parent / "snapshots"
STAGES = ["guard", "input_guard", "transform", "retrieve", "fuse", "rerank", "ranking", "assemble",
          "scope", "generate", "groundedness", "output_guard", "answer"]


@pytest.fixture(scope="module")
def kb_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding the example knowledge base, ingested once for the module."""
    data_dir = tmp_path_factory.mktemp("query-data")
    report = ingest([str(EXAMPLES_KB)], collection="kbq", data_dir=data_dir)
    assert not report.failed
    return data_dir


PROFILES = ["fast", "balanced", "quality", "corrective", "adaptive"]


def _compiled(name: str, retrieval_only: bool = False, **overrides: Any) -> Any:
    settings = load_settings(name, **overrides)
    if retrieval_only:
        settings = settings.model_copy(update={"generate": settings.generate.model_copy(
            update={"enabled": False})})
    deps = RagDeps(settings=settings, index=None, embedder=None)  # type: ignore[arg-type]
    return graph_builder(name)(deps).compile()


def _nodes(name: str, retrieval_only: bool = False, **overrides: Any) -> set[str]:
    return set(_compiled(name, retrieval_only, **overrides).get_graph().nodes) - {
        "__start__", "__end__"}


@pytest.mark.parametrize("retrieval_only", [False, True])
@pytest.mark.parametrize("name", PROFILES)
def test_topology_matches_snapshot(name: str, retrieval_only: bool) -> None:
    path = SNAPSHOTS / f"{name}{'-retrieval' if retrieval_only else ''}.mmd"
    drawing = str(_compiled(name, retrieval_only).get_graph(xray=1).draw_mermaid())
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(drawing, encoding="utf-8")
    assert path.exists(), f"missing snapshot {path}: run with UPDATE_SNAPSHOTS=1 once"
    assert drawing == path.read_text(encoding="utf-8")


def test_retrieval_is_one_subgraph_node_whose_inside_xray_shows() -> None:
    graph = _compiled("balanced")
    assert "retrieval" in graph.get_graph().nodes
    inside = set(graph.get_graph(xray=1).nodes)
    assert {"retrieval:retrieve", "retrieval:fuse", "retrieval:assemble"} <= inside
    assert "retrieval:rerank" not in inside  # rerank none is not a node


@pytest.mark.parametrize(("overrides", "present", "absent"), [
    ({}, {"retrieval", "generate"}, {"groundedness"}),
    ({"groundedness": {"enabled": True}}, {"groundedness"}, set()),
])
def test_a_graph_has_nodes_only_for_stages_that_work(overrides: dict[str, Any], present: set[str],
                                                     absent: set[str]) -> None:
    nodes = _nodes("balanced", **overrides)
    assert present <= nodes and not absent & nodes


def test_retrieval_subgraph_nodes_follow_the_settings() -> None:
    def inside(**overrides: Any) -> set[str]:
        graph = _compiled("balanced", **overrides).get_graph(xray=1)
        return {n.split(":", 1)[1] for n in graph.nodes if n.startswith("retrieval:")}

    assert inside() == {"retrieve", "fuse", "assemble"}
    assert inside(retrieval={"sibling_weight": 0}) == {"retrieve", "assemble"}
    assert inside(transform={"name": "multi-query"}, rerank={"name": "llm"}) == {
        "transform", "retrieve", "fuse", "rerank", "assemble"}


def test_unknown_profile_lists_known_names() -> None:
    with pytest.raises(UnknownNameError, match="adaptive, balanced, corrective, fast, quality"):
        graph_builder("turbo")
    with pytest.raises(UnknownNameError):
        load_settings("turbo")


@pytest.mark.parametrize("profile", ["fast", "balanced", "quality"])
def test_answer_cites_resolvable_chunks_with_a_full_trace(kb_data: Path, profile: str) -> None:
    result = ask("How long does the Lumen Pro keep running without sunlight?",
                 collection="kbq", profile=profile, data_dir=kb_data)
    assert "7 days" in result.text
    markers = {int(m) for m in re.findall(r"\[(\d+)\]", result.text)}
    assert markers and markers == {c.marker for c in result.citations}
    source = Path(result.citations[0].source_id)
    assert source.parent == EXAMPLES_KB.resolve()
    assert [step.stage for step in result.trace] == STAGES
    by_stage = {step.stage: step.detail for step in result.trace}
    assert by_stage["generate"]["generator"] == "extractive"
    assert by_stage["rerank"].get("reranker", "none") == "none"
    if profile == "quality":
        assert [v.stage for v in result.verdicts] == ["input_guard", "scope", "groundedness",
                                                      "output_guard"]
    else:
        assert by_stage["groundedness"].get("skipped") is True
    assert result.profile == profile


def test_left_out_stages_are_traced_as_skipped_in_stage_order(kb_data: Path) -> None:
    result = ask("How do I reset the Lumen hub?", collection="kbq", data_dir=kb_data)
    assert [step.stage for step in result.trace] == STAGES
    skipped = {s.stage: s.detail["reason"] for s in result.trace if s.detail.get("skipped")}
    assert set(skipped) == {"transform", "rerank", "ranking", "groundedness"}
    assert "transform none" in skipped["transform"]
    assert all(s.duration_ms == 0.0 for s in result.trace if s.detail.get("skipped"))


def test_retrieval_only_returns_passages_and_skips_generation(kb_data: Path) -> None:
    result = retrieve("What is the API rate limit?", collection="kbq", data_dir=kb_data, top_n=3)
    assert result.text == ""
    assert [c.marker for c in result.citations] == [1, 2, 3]
    assert any(c.source_id.endswith("api.md") for c in result.citations)
    generate = next(step for step in result.trace if step.stage == "generate")
    assert generate.detail["skipped"] is True and "retrieval-only" in generate.detail["reason"]
    scores = [c.score for c in result.citations]
    assert scores == sorted(scores, reverse=True)


def test_filters_apply_to_both_legs(kb_data: Path) -> None:
    result = retrieve("wind speed", collection="kbq", data_dir=kb_data,
                      filters={"source_type": "markdown"})
    assert result.citations
    assert all(c.metadata["source_type"] == "markdown" for c in result.citations)


def test_unrelated_question_gets_i_dont_know(kb_data: Path) -> None:
    result = ask("What is the capital of Peru?", collection="kbq", data_dir=kb_data)
    assert result.text.startswith("I don't know")
    assert result.citations == []


def test_bad_questions_fail_clearly(kb_data: Path) -> None:
    with pytest.raises(QueryError, match="empty"):
        ask("   ", collection="kbq", data_dir=kb_data)
    with pytest.raises(QueryError, match="over the limit"):
        ask("why " * 1000, collection="kbq", data_dir=kb_data)


def test_build_graph_invokes_with_the_configured_collection(kb_data: Path) -> None:
    graph = build_graph("fast", collection="kbq", data_dir=kb_data)
    out = graph.invoke({"question": "Which port does lumend serve on?"})
    assert "8642" in out["answer"].text


@pytest.mark.parametrize("section,name,kind", [("transform", "telepathy", "transform"),
                                               ("rerank", "oracle", "reranker")])
def test_unknown_component_names_fail_before_any_work(kb_data: Path, section: str, name: str,
                                                      kind: str) -> None:
    settings = load_settings("balanced", collection="kbq", data_dir=kb_data, **{section: {"name": name}})
    with pytest.raises(UnknownNameError, match=f"unknown {kind} '{name}'") as info:
        ask("anything", settings=settings)
    assert "none" in str(info.value)
