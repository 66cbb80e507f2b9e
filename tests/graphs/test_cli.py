"""The command line over a real data directory: exit codes, JSON output, clear errors."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragloom.cli import app
from tests.conftest import EXAMPLES_KB

runner = CliRunner()


def test_ingest_json_then_ask_and_search(tmp_path: Path) -> None:
    data = str(tmp_path / "data")
    source = tmp_path / "kb"
    source.mkdir()
    (source / "pole.md").write_text((EXAMPLES_KB / "install-guide.md").read_text())
    result = runner.invoke(app, ["ingest", str(source), "-c", "clitest", "--data-dir", data, "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["sources"][0]["status"] == "ingested" and report["sources"][0]["chunks"] > 0

    asked = runner.invoke(app, ["ask", "Which port does lumend serve on?", "-c", "clitest",
                                "--data-dir", data])
    assert asked.exit_code == 0, asked.output
    assert "8642" in asked.stdout and "Sources" in asked.stdout and "[1]" in asked.stdout

    searched = runner.invoke(app, ["search", "lumend port", "-c", "clitest", "--data-dir", data,
                                   "--json", "-n", "2"])
    payload = json.loads(searched.stdout)
    assert payload["text"] == "" and 1 <= len(payload["citations"]) <= 2


def test_ingest_exit_code_is_1_when_a_source_failed(tmp_path: Path) -> None:
    good = tmp_path / "good.md"
    good.write_text("# Good\n\nThe hub answers on port 8642.\n")
    result = runner.invoke(app, ["ingest", str(good), str(tmp_path / "missing.md"), "-c", "clitest",
                                 "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 1
    assert "failed" in result.stdout and "ingested" in result.stdout


def test_unknown_profile_and_bad_filter_fail_with_clear_messages(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ask", "hi", "-p", "turbo", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown profile 'turbo'" in result.stderr and "balanced" in result.stderr
    bad = runner.invoke(app, ["search", "hi", "--filter", "{oops", "--data-dir", str(tmp_path)])
    assert bad.exit_code == 2 and "--filter" in bad.output


def test_an_ungrounded_answer_prints_a_warning(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from ragloom import runner as runner_module
    from ragloom.state import Citation, RagAnswer, Verdict

    ungrounded = RagAnswer(
        question="q", text="The Lumen Ultra costs EUR 999 [1].", best_effort=True,
        citations=[Citation(marker=1, chunk_id="kb/models.csv#row=1::0::x", source_id="kb/models.csv",
                            snippet="model: Lumen Max", score=0.5, score_origin="convex", start=0,
                            end=16)],
        verdicts=[Verdict(stage="groundedness", verdict="ungrounded", score=0.0,
                          reason="0/1 claims supported by their cited passages")])
    monkeypatch.setattr(runner_module, "ask", lambda *a, **k: ungrounded)
    result = runner.invoke(app, ["ask", "How much is the Lumen Ultra?", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("warning: this answer is not supported by the passages it cites")
    assert "0/1 claims supported" in lines[0] and lines[1] == ungrounded.text  # warning first
    grounded = ungrounded.model_copy(update={"best_effort": False, "verdicts": []})
    monkeypatch.setattr(runner_module, "ask", lambda *a, **k: grounded)
    assert "warning" not in runner.invoke(app, ["ask", "q", "--data-dir", str(tmp_path)]).output
