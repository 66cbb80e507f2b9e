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
from ragloom.profiles.resolver import build_graph, graph_builder
from ragloom.runner import ask, ingest, retrieve
from ragloom.settings import load_settings
from tests.conftest import EXAMPLES_KB

SNAPSHOTS = Path(__file__).parent / "snapshots"
STAGES = ["guard", "transform", "retrieve", "fuse", "rerank", "assemble", "generate",
          "groundedness", "answer"]


@pytest.fixture(scope="module")
def kb_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding the example knowledge base, ingested once for the module."""
    data_dir = tmp_path_factory.mktemp("query-data")
    report = ingest([str(EXAMPLES_KB)], collection="kbq", data_dir=data_dir)
    assert not report.failed
    return data_dir


def _drawable(name: str, retrieval_only: bool = False, fold: bool = True) -> Any:
    settings = load_settings(name, fold_idle_stages=fold)
    deps = RagDeps(settings=settings, index=None, embedder=None)  # type: ignore[arg-type]
    builder = build_retrieval_graph if retrieval_only else graph_builder(name)
    return builder(deps).compile().get_graph()


def _mermaid(name: str, retrieval_only: bool = False, fold: bool = True) -> str:
    return str(_drawable(name, retrieval_only, fold).draw_mermaid())


def _nodes(name: str, retrieval_only: bool, fold: bool) -> set[str]:
    return set(_drawable(name, retrieval_only, fold).nodes) - {"__start__", "__end__"}


@pytest.mark.parametrize("name,retrieval_only,fold", [
    ("fast", False, True), ("balanced", False, True), ("quality", False, True),
    ("balanced", True, True), ("balanced", False, False)])
def test_topology_matches_snapshot(name: str, retrieval_only: bool, fold: bool) -> None:
    suffix = ("-retrieval" if retrieval_only else "") + ("" if fold else "-unfolded")
    path = SNAPSHOTS / f"{name}{suffix}.mmd"
    drawing = _mermaid(name, retrieval_only, fold)
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.write_text(drawing, encoding="utf-8")
    assert path.exists(), f"missing snapshot {path}: run with UPDATE_SNAPSHOTS=1 once"
    assert drawing == path.read_text(encoding="utf-8")


def test_unknown_profile_lists_known_names() -> None:
    with pytest.raises(UnknownNameError, match="balanced, fast, quality"):
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
        assert result.verdicts and result.verdicts[0].stage == "groundedness"
    else:
        assert by_stage["groundedness"].get("skipped") is True
    assert result.profile == profile


@pytest.mark.parametrize("retrieval_only", [False, True])
def test_folding_idle_stages_changes_nodes_not_results(kb_data: Path, retrieval_only: bool) -> None:
    question = "How do I reset the Lumen hub?"
    results = []
    for fold in (True, False):
        settings = load_settings("balanced", data_dir=kb_data, collection="kbq",
                                 fold_idle_stages=fold)
        run = retrieve if retrieval_only else ask
        results.append(run(question, settings=settings))
    every = set(STAGES) - ({"groundedness"} if retrieval_only else set())
    assert _nodes("balanced", retrieval_only, False) == every
    assert _nodes("balanced", retrieval_only, True) < every
    folded, unfolded = results
    assert folded.text == unfolded.text
    assert [c.chunk_id for c in folded.citations] == [c.chunk_id for c in unfolded.citations]
    assert [s.stage for s in folded.trace] == [s.stage for s in unfolded.trace]
    assert [s.stage for s in folded.trace][:6] == STAGES[:6]


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
