"""The evaluation harness end to end through `ragloom eval`, offline, over the golden set.

One module-scoped run (`--limit 5`, fast and balanced, answers on) is shared by the assertions;
a second, retrieval-only run over four hand-picked golden cases checks the gate and re-ingestion.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from ragloom.cli import app
from tests.conftest import EXAMPLES_KB, ROOT

GOLDEN = ROOT / "examples" / "eval" / "golden.yaml"
LIMIT = 5


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """`ragloom eval` over the first cases of the golden set with two profiles."""
    root = tmp_path_factory.mktemp("eval")
    out = root / "out"
    result = CliRunner().invoke(app, [
        "eval", "--dataset", str(GOLDEN), "--compare", "fast,balanced", "--limit", str(LIMIT),
        "--out", str(out), "--data-dir", str(root / "data"), "--judge", "heuristic"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    return {"root": root, "out": out, "output": result.output, "report": report}


def test_reports_compare_profiles_and_name_the_judge(run: dict[str, Any]) -> None:
    report = run["report"]
    assert [p["profile"] for p in report["profiles"]] == ["fast", "balanced"]
    assert report["cases"] == LIMIT and report["collection"] == "eval-lumen-golden"
    assert report["judge"].startswith("heuristic")
    assert report["ingest"]["sources"] == 12
    for name in ("report.json", "report.md", "chart.png"):
        assert (run["out"] / name).stat().st_size > 0
    assert (run["out"] / "chart.png").read_bytes()[:4] == b"\x89PNG"
    assert "ragloom eval — lumen-golden" in run["output"] and "harness overhead" in run["output"]
    markdown = (run["out"] / "report.md").read_text(encoding="utf-8")
    assert "| metric | fast | balanced |" in markdown and "judge: heuristic" in markdown


def test_every_case_is_scored_and_metrics_are_in_range(run: dict[str, Any]) -> None:
    for profile in run["report"]["profiles"]:
        assert len(profile["cases"]) == LIMIT
        for name in ("recall@5", "mrr@10", "ndcg@10", "faithfulness", "answer_relevancy",
                     "context_precision", "context_recall", "citation_validity"):
            value = profile["metrics"][name]
            assert value is not None and 0.0 <= value <= 1.0, (profile["profile"], name)
        assert profile["latency_ms"]["ask_p50"] > 0 and profile["latency_ms"]["retrieve_p95"] > 0
        assert profile["cost"]["model_calls"] == 0  # offline: extractive answers, no model
        assert profile["cost"]["prompt_tokens"] is None
        for case in profile["cases"]:
            assert case["answer"] is not None and case["retrieve_ms"] > 0


def test_chunks_map_back_to_the_golden_refs(run: dict[str, Any]) -> None:
    from ragloom.evaluation.datasets import load_golden

    refs = set(load_golden(GOLDEN).refs)  # every ref of the set maps, also under --limit
    for profile in run["report"]["profiles"]:
        for case in profile["cases"]:
            assert case["ranking"] and len(case["ranking"]) == len(set(case["ranking"]))
            for doc in case["ranking"]:
                # a judged source appears as its ref; any other source as its absolute path
                assert doc in refs or (Path(doc).is_absolute() and Path(doc).name not in refs), doc
    balanced = {c["id"]: c for c in run["report"]["profiles"][1]["cases"]}
    dark = balanced["pro-dark-runtime"]
    assert dark["relevant"] == ["datasheet-lumen-pro.pdf"]
    assert "datasheet-lumen-pro.pdf" in dark["ranking"][:5] and dark["retrieval"]["recall@5"] == 1.0
    assert "7 days" in dark["answer"] and dark["expected_hits"] == 1


def test_timing_separates_runner_time_from_harness_overhead(run: dict[str, Any]) -> None:
    timing = run["report"]["timing"]
    assert 0 < timing["runner_s"] < timing["total_s"]
    assert timing["ask_s"] > 0 and timing["retrieve_s"] > 0
    assert timing["overhead_s"] == pytest.approx(timing["total_s"] - timing["runner_s"], abs=1e-2)


def test_gate_fails_below_a_floor_and_reingest_embeds_nothing(run: dict[str, Any]) -> None:
    golden = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
    keep = {"lumend-port", "vocab-factory-reset", "no-peru", "corr-lightning-firmware"}
    subset = run["root"] / "subset.yaml"
    subset.write_text(yaml.safe_dump({
        "name": "lumen-golden", "corpus": str(EXAMPLES_KB),
        "cases": [c for c in golden["cases"] if c["id"] in keep]}), encoding="utf-8")
    gate = run["root"] / "gate.yaml"
    gate.write_text("profile: balanced\nk: 5\nexclude_tags: [corrective]\n"
                    "floors: {recall@5: 0.0, mrr@10: 1.01}\n", encoding="utf-8")
    result = CliRunner().invoke(app, [
        "eval", "--dataset", str(subset), "--compare", "balanced", "--no-answers", "--no-chart",
        "--gate", str(gate), "--out", str(run["root"] / "gate-out"),
        "--data-dir", str(run["root"] / "data")])
    assert result.exit_code == 1, result.output
    assert "gate on balanced: 3 cases (1 excluded by tag)" in result.output
    assert "PASS recall@5" in result.output and "FAIL mrr@10" in result.output
    report = json.loads((run["root"] / "gate-out" / "report.json").read_text(encoding="utf-8"))
    assert report["ingest"]["embeddings_computed"] == 0 and report["ingest"]["unchanged"] == 12
    assert report["judge"].startswith("none") and report["profiles"][0]["cases"][0]["answer"] is None


def test_unknown_profile_fails_with_the_known_names(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["eval", "--dataset", str(GOLDEN), "--compare", "turbo",
                                      "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown profile 'turbo'" in result.output and "fast, quality" in " ".join(result.output.split())


@pytest.mark.integration
def test_with_a_chat_model_the_llm_judge_runs_and_token_usage_is_counted(
        run: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """SmolLM2 on xllamacpp answers one case: protocol and accounting only, never quality."""
    from ragloom.evaluation.datasets import load_dataset
    from ragloom.evaluation.harness import run_eval
    from tests.integration.servers import smollm2_server

    with smollm2_server() as base_url:
        monkeypatch.setenv("RAGLOOM_CHAT__PROVIDER", "openai")
        monkeypatch.setenv("RAGLOOM_CHAT__BASE_URL", base_url)
        monkeypatch.setenv("RAGLOOM_CHAT__MAX_TOKENS", "24")
        report = run_eval(load_dataset(GOLDEN), ["fast"], limit=1, data_dir=run["root"] / "data")
    assert report.judge.startswith("llm (openai:local")
    profile = report.profiles[0]
    assert profile.cost.model_calls == 1 == profile.cases[0].model_calls  # one generate call
    assert profile.cost.calls_with_usage == 1
    assert profile.cost.prompt_tokens and profile.cost.prompt_tokens > 100  # the passages
    assert 0 < (profile.cost.completion_tokens or 0) <= 24
    assert profile.cost.judge_calls >= 3  # faithfulness or relevancy, precision, recall
    assert profile.cases[0].answer
