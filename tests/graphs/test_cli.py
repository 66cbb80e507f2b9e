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
