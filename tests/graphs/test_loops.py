"""The corrective and adaptive graphs over the ingested example knowledge base.

LLM roles (grader, rewriter, generator, checks) are played by `ScriptedRoleChat`, a scripted fake:
these tests check routing, bounds, reducers and traces, never answer quality.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest

from ragloom import resources
from ragloom.graphs import routing
from ragloom.registry import compile_profile
from ragloom.runner import ask, ingest, retrieve, run_graph
from ragloom.settings import load_settings
from tests.conftest import EXAMPLES_KB
from tests.fakes import ScriptedRoleChat

COLLECTION = "loops"
QUESTION = "How long does the Lumen Pro keep running without sunlight?"
GRADER, REWRITER = "You grade retrieved passages", "You rewrite a search query"
GENERATOR, ANSWERS = "You answer questions using only", "addresses the question"
GROUNDED = "You check whether an answer is supported"


@pytest.fixture(scope="module")
def kb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example knowledge base, ingested once for the module."""
    data_dir = tmp_path_factory.mktemp("loops")
    assert not ingest([str(EXAMPLES_KB)], collection=COLLECTION, data_dir=data_dir).failed
    return data_dir


def graded(relevance: float) -> Any:
    """A grader reply giving every passage of the prompt the same relevance."""
    def reply(user: str) -> str:
        markers = sorted({int(m) for m in re.findall(r"^\[(\d+)\]", user, re.MULTILINE)})
        return json.dumps({"passages": [{"marker": m, "relevance": relevance, "reason": "scripted"}
                                        for m in markers]})
    return reply


def graph_with(kb: Path, chat: ScriptedRoleChat | None, profile: str = "corrective",
               retrieval_only: bool = False, **overrides: Any) -> Any:
    settings = load_settings(profile, data_dir=kb, collection=COLLECTION, **overrides)
    deps = dataclasses.replace(resources.rag_deps(settings), chat=chat)
    return compile_profile(deps, retrieval_only=retrieval_only)


def stages(answer: Any) -> list[str]:
    return [step.stage for step in answer.trace]


def test_offline_corrective_grades_answers_and_checks(kb: Path) -> None:
    result = ask(QUESTION, profile="corrective", collection=COLLECTION, data_dir=kb)
    assert "7 days" in result.text and result.citations
    assert [v.stage for v in result.verdicts][:2] == ["input_guard", "grade"]
    assert {"groundedness", "answers_question"} <= {v.stage for v in result.verdicts}
    grade = next(s for s in result.trace if s.stage == "grade")
    assert grade.detail["grader"] == "heuristic" and grade.detail["verdict"] == "correct"
    skipped = {s.stage for s in result.trace if s.detail.get("skipped")}
    assert {"web", "rerank", "transform"} <= skipped
    assert not result.best_effort


def test_a_never_passing_grader_ends_best_effort_within_budget(kb: Path) -> None:
    chat = ScriptedRoleChat(script={GRADER: graded(0.0), REWRITER: "lumen pro battery autonomy",
                                    GENERATOR: "It runs for 7 days [1].",
                                    ANSWERS: '{"answers": true}', GROUNDED: '{"grounded": true}'})
    result = run_graph(graph_with(kb, chat, loop={"max_iterations": 2}), QUESTION)
    assert result.best_effort and result.iterations == 2
    assert stages(result).count("rewrite") == 2 and stages(result).count("grade") == 3
    assert "circuit_breaker" not in stages(result)
    assert chat.roles().count(REWRITER) == 2
    assert "failed_checks" in result.trace[-1].detail


def test_rewrites_use_the_rationale_and_generation_answers_the_original_question(kb: Path) -> None:
    chat = ScriptedRoleChat(script={GRADER: [graded(0.0), graded(1.0)],
                                    REWRITER: "solar array autonomy days",
                                    GENERATOR: "The array keeps running for 7 days [1].",
                                    ANSWERS: '{"answers": true, "reason": "scripted"}',
                                    GROUNDED: '{"grounded": true, "score": 1.0}'})
    result = run_graph(graph_with(kb, chat), QUESTION)
    assert result.iterations == 1 and result.query_variants == ["solar array autonomy days"]
    rewrite_prompt = next(user for role, user in chat.calls if role == REWRITER)
    assert QUESTION in rewrite_prompt and "grade: incorrect" in rewrite_prompt
    generate_prompt = next(user for role, user in chat.calls if role == GENERATOR)
    assert f"Question: {QUESTION}" in generate_prompt and "solar array autonomy" not in generate_prompt
    assert not result.best_effort and result.citations
    grades = [s.detail for s in result.trace if s.stage == "grade"]
    assert [g["kept_round"] for g in grades] == [0, 1]  # the better-graded rewrite replaces round 0


def test_a_worse_rewrite_never_replaces_the_first_round(kb: Path) -> None:
    chat = ScriptedRoleChat(script={GRADER: [graded(0.4), graded(0.1)],
                                    REWRITER: "completely unrelated words"})
    graph = graph_with(kb, chat, retrieval_only=True, loop={"max_iterations": 1},
                       grade={"correct": 0.9, "incorrect": 0.5})
    first = run_graph(graph_with(kb, None, profile="balanced", retrieval_only=True), QUESTION)
    result = run_graph(graph, QUESTION)
    grades = [s.detail for s in result.trace if s.stage == "grade"]
    assert [g["kept_round"] for g in grades] == [0, 0] and result.iterations == 1
    top = [c.chunk_id for c in result.citations][:3]
    assert top == [c.chunk_id for c in first.citations][:3]


def test_soft_bound_disabled_the_circuit_breaker_stops_the_loop(kb: Path,
                                                                 monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    monkeypatch.setattr(routing, "budget_left", lambda state: True)
    chat = ScriptedRoleChat(script={GRADER: graded(0.0), REWRITER: "anything"})
    result = run_graph(graph_with(kb, chat, loop={"max_iterations": 1}), QUESTION)
    assert "circuit_breaker" in stages(result) and result.best_effort
    assert stages(result)[-1] == "answer"
    assert result.iterations > 1  # the budget was ignored: only the breaker stopped it


def test_a_tripped_recursion_limit_becomes_a_best_effort_answer(kb: Path,
                                                                monkeypatch: pytest.MonkeyPatch
                                                                ) -> None:
    monkeypatch.setattr(routing, "out_of_steps", lambda state: False)
    monkeypatch.setattr(routing, "budget_left", lambda state: True)
    chat = ScriptedRoleChat(script={GRADER: graded(0.0), REWRITER: "anything"})
    graph = graph_with(kb, chat).with_config(recursion_limit=12)
    result = run_graph(graph, QUESTION)
    assert result.best_effort and stages(result) == ["circuit_breaker"]
    assert "recursion" in result.trace[0].detail["reason"]


def test_ambiguous_grades_refine_passages_into_exact_spans(kb: Path) -> None:
    graph = graph_with(kb, None, retrieval_only=True, grade={"correct": 1.0, "incorrect": 0.0})
    result = run_graph(graph, QUESTION)
    assert "refine" in stages(result) and "generate" not in [
        s.stage for s in result.trace if not s.detail.get("skipped")]
    index = resources.document_index(load_settings("corrective", data_dir=kb,
                                                   collection=COLLECTION))
    originals = {c.id: c for c in index.get_chunks([c.chunk_id for c in result.citations])}
    assert result.citations
    for citation in result.citations:
        chunk = originals[citation.chunk_id]
        assert chunk.start <= citation.start < citation.end <= chunk.end
        span = chunk.text[citation.start - chunk.start:citation.end - chunk.start]
        assert span.startswith(citation.snippet[:40].rstrip("…"))
    refine = next(s for s in result.trace if s.stage == "refine")
    assert refine.detail["chars_out"] <= refine.detail["chars_in"]


def test_an_unavailable_chat_model_degrades_to_the_offline_grader(kb: Path) -> None:
    chat = ScriptedRoleChat(fail_with=TimeoutError)
    result = run_graph(graph_with(kb, chat, retrieval_only=True), QUESTION)
    grade = next(s for s in result.trace if s.stage == "grade")
    assert grade.detail["grader"] == "heuristic" and "fallback" in grade.detail
    assert result.best_effort and result.citations


def test_adaptive_answers_small_talk_and_arithmetic_without_retrieval(kb: Path) -> None:
    hello = ask("Hello!", profile="adaptive", collection=COLLECTION, data_dir=kb)
    maths = ask("What is 12 * 7?", profile="adaptive", collection=COLLECTION, data_dir=kb)
    assert hello.route == maths.route == "no_retrieval"
    assert "84" in maths.text and maths.citations == [] and hello.citations == []
    assert "retrieve" not in stages(maths) and stages(maths)[:4] == ["guard", "input_guard", "classify", "direct"]


def test_adaptive_sends_single_hop_questions_to_the_balanced_delegate(kb: Path) -> None:
    result = ask(QUESTION, profile="adaptive", collection=COLLECTION, data_dir=kb)
    assert result.route == "single_shot" and "7 days" in result.text
    assert stages(result)[:4] == ["guard", "input_guard", "classify", "transform"]
    assert stages(result)[-1] == "answer"


def test_adaptive_multi_hop_merges_parallel_hops_through_the_reducer(kb: Path) -> None:
    question = "Which costs more, the Lumen Max or the Lumen Pro?"
    result = ask(question, profile="adaptive", collection=COLLECTION, data_dir=kb)
    assert result.route == "multi_hop"
    hops = {s.detail["hop"] for s in result.trace if s.stage == "retrieve"}
    assert hops == {1, 2, 3}  # the question and one probe per compared model, in parallel
    assert len(result.query_variants) == 2
    merge = next(s for s in result.trace if s.stage == "merge")
    assert merge.detail["hops"] == 3 and result.citations


def test_adaptive_bridges_from_first_hop_names(kb: Path) -> None:
    question = "What is the radio range of the model that added ground wetness sensing?"
    result = retrieve(question, profile="adaptive", collection=COLLECTION, data_dir=kb)
    assert result.route == "multi_hop"
    bridge = next(s for s in result.trace if s.stage == "bridge")
    assert bridge.detail["probes"], "no follow-up probe from the first hop's passages"
    assert {s.detail.get("wave") for s in result.trace if s.stage == "retrieve"} == {1, 2}
    assert result.text == "" and result.citations


@pytest.mark.parametrize("profile", ["corrective", "adaptive"])
def test_the_langchain_retriever_serves_the_looping_profiles(kb: Path, profile: str) -> None:
    from ragloom.retriever import as_retriever

    docs = as_retriever(collection=COLLECTION, profile=profile, data_dir=kb, k=3).invoke(QUESTION)
    assert 1 <= len(docs) <= 3
    assert any("7 days" in d.page_content for d in docs)
    assert all(d.metadata["source_id"].startswith(str(EXAMPLES_KB.resolve())) for d in docs)
