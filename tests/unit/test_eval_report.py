"""Aggregation, the CI gate, report files and the model-usage meter (no pipeline runs here).

The chat model in the meter test is a scripted fake (GenericFakeChatModel replaying one message
with usage metadata): it checks counting, never a model.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage

from ragloom.errors import ConfigError
from ragloom.evaluation.harness import (
    CaseResult,
    EvalReport,
    ProfileResult,
    Timing,
    UsageMeter,
    aggregate,
    default_depth,
    metered,
    summarize,
)
from ragloom.evaluation.report import (
    Gate,
    check_gate,
    comparison_rows,
    load_gate,
    to_markdown,
    write_reports,
)
from tests.conftest import ROOT

GATE = ROOT / "examples" / "eval" / "gate.yaml"


def _case(cid: str, recall: float, mrr: float, tags: list[str] | None = None, *,
          answerable: bool = True, answer: str | None = "x", refused: bool = False,
          hits: int | None = None, expected: int | None = None) -> CaseResult:
    return CaseResult(
        id=cid, question=f"{cid}?", tags=tags or [], answerable=answerable,
        retrieval={"recall@5": recall, "mrr@10": mrr, "ndcg@10": mrr} if answerable else {},
        answer=answer, refused=refused, expected_hits=hits, expected_total=expected,
        judged={"faithfulness": 1.0, "answer_relevancy": 0.5}, ask_ms=100.0, retrieve_ms=10.0,
    )


def _report(cases: list[CaseResult], profile: str = "balanced") -> EvalReport:
    result = ProfileResult(profile=profile, cases=cases)
    summarize(result, 5)
    return EvalReport(dataset="toy", dataset_path="/x/toy.yaml", dataset_kind="golden",
                      collection="eval-toy", data_dir="/tmp/d", cases=len(cases), k=5, depth=20,
                      answers=True, judge="heuristic (test)", profiles=[result],
                      timing=Timing(total_s=10.0, runner_s=9.0))


CASES = [
    _case("a", 1.0, 1.0, hits=2, expected=2),
    _case("b", 1.0, 0.5, ["multi-hop"], hits=1, expected=2),
    _case("c", 0.0, 0.0, ["corrective"], hits=0, expected=1),
    _case("d", 0.0, 0.0, ["unanswerable"], answerable=False, answer="I don't know", refused=True),
    _case("e", 0.0, 0.0, ["unanswerable"], answerable=False, answer="It costs 5 euros."),
    _case("f", 1.0, 1.0, refused=True, answer="I don't know", hits=0, expected=1),
]


def test_aggregate_counts_each_metric_over_the_cases_it_applies_to() -> None:
    metrics = aggregate(CASES, 5)
    assert metrics["recall@5"] == pytest.approx(3 / 4)  # a, b, c, f are judged
    assert metrics["mrr@10"] == pytest.approx(2.5 / 4)
    assert metrics["expected_hit_rate"] == pytest.approx(1 / 4)  # only a hits everything
    assert metrics["refusal_correct"] == pytest.approx(1 / 2)  # d refused, e answered
    assert metrics["false_refusal"] == pytest.approx(1 / 4)  # f refused an answerable case
    assert metrics["answer_relevancy"] == pytest.approx(0.5)
    assert metrics["cases"] == 6 and metrics["retrieval_cases"] == 4


def test_summary_splits_gate_and_corrective_cases() -> None:
    result = _report(CASES).profiles[0]
    assert result.gate["recall@5"] == 1.0 and result.gate["cases"] == 5
    assert result.corrective["recall@5"] == 0.0 and result.corrective["cases"] == 1
    assert result.by_tag["multi-hop"]["mrr@10"] == 0.5
    assert result.latency_ms["ask_p50"] == 100.0 and result.latency_ms["retrieve_p95"] == 10.0


def test_gate_passes_and_fails_on_floors_without_corrective_cases() -> None:
    report = _report(CASES)
    passed = check_gate(report, Gate(floors={"recall@5": 1.0, "mrr@10": 0.8}))
    assert passed.passed and passed.cases == 5 and passed.excluded == 1
    failed = check_gate(report, Gate(floors={"recall@5": 1.0, "mrr@10": 0.85}))
    assert not failed.passed
    assert any(line.startswith("  FAIL mrr@10 0.833") for line in failed.lines())
    with_corrective = check_gate(report, Gate(exclude_tags=[], floors={"recall@5": 0.8}))
    assert not with_corrective.passed  # recall 0.75 once the corrective case counts


def test_gate_errors_are_clear() -> None:
    report = _report(CASES)
    with pytest.raises(ConfigError, match="unknown gate metric.*recall@10"):
        check_gate(report, Gate(floors={"recall@10": 0.5}))
    with pytest.raises(ConfigError, match="set for k=10 but the run used k=5"):
        check_gate(report, Gate(k=10, floors={"recall@10": 0.5}))
    with pytest.raises(ConfigError, match="profile 'fast' was not evaluated"):
        check_gate(report, Gate(profile="fast", floors={"recall@5": 0.5}))


def test_repository_gate_file_guards_balanced_recall_and_mrr() -> None:
    gate = load_gate(GATE)
    assert gate.profile == "balanced" and gate.k == 5 and gate.exclude_tags == ["corrective"]
    assert set(gate.floors) == {"recall@5", "mrr@10"}
    for name, floor in gate.floors.items():
        assert 0.0 < floor < gate.measured[name], name  # a little below what was measured


def test_gate_file_errors_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "gate.yaml"
    bad.write_text("profile: balanced\nfloors: {}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"gate\.yaml: invalid gate field floors"):
        load_gate(bad)


def test_reports_are_written_with_table_judge_and_chart(tmp_path: Path) -> None:
    report = _report(CASES)
    labels = [label for label, _ in comparison_rows(report)]
    assert "recall@5 (gate: no corrective)" in labels and "refusal correct (unanswerable)" in labels
    paths = write_reports(report, tmp_path / "out")
    assert paths["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = json.loads(paths["json"].read_text(encoding="utf-8"))
    assert data["judge"] == "heuristic (test)"
    assert data["profiles"][0]["gate"]["recall@5"] == 1.0
    assert data["timing"]["overhead_pct"] > 0
    markdown = paths["markdown"].read_text(encoding="utf-8")
    assert "judge: heuristic (test)" in markdown and "| recall@5 | 0.750 |" in markdown
    assert "harness overhead" in to_markdown(report)


def test_depth_covers_k_and_the_at_ten_metrics() -> None:
    assert default_depth(5) == 20 and default_depth(30) == 60 and default_depth(90) == 100


def test_usage_meter_counts_model_calls_and_reported_tokens_inside_the_block() -> None:
    reply = AIMessage(content="ok", usage_metadata={"input_tokens": 12, "output_tokens": 3,
                                                    "total_tokens": 15})
    fake = GenericFakeChatModel(messages=iter([reply, reply, reply]))
    meter = UsageMeter()
    with metered(meter):
        fake.invoke("hi")
        fake.invoke("again")
    fake.invoke("not counted")
    assert meter.snapshot() == (2, 2, 24, 6)
