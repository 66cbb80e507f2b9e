"""The command line over a real data directory: exit codes, JSON output, clear errors."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
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


def test_ingest_table_lists_changed_sources_and_counts_unchanged_ones(tmp_path: Path) -> None:
    kb = tmp_path / "kb"
    kb.mkdir()
    (kb / "a.md").write_text("# A\n\nThe hub answers on port 8642.\n")
    (kb / "b.md").write_text("# B\n\nThe mast is 2.4 m tall.\n")
    os.utime(kb / "a.md", ns=(1_700_000_000_000_000_000,) * 2)  # old: settled from its stat
    argv = ["ingest", str(kb), "-c", "clitest", "--data-dir", str(tmp_path / "data")]
    assert runner.invoke(app, argv).exit_code == 0
    (kb / "b.md").write_text("# B\n\nThe mast is 3.1 m tall.\n")

    quiet = runner.invoke(app, argv)
    assert quiet.exit_code == 0, quiet.output
    assert "b.md" in quiet.stdout and "a.md" not in quiet.stdout
    flat = " ".join(quiet.stdout.split())  # the console wraps long lines
    assert "1 updated, 1 unchanged" in flat and "-v lists the unchanged sources" in flat

    verbose = runner.invoke(app, [*argv, "-v"])
    assert "a.md" in verbose.stdout and "-v lists" not in verbose.stdout

    settled = runner.invoke(app, [*argv, "--json"])
    assert str((kb / "a.md").resolve()) in json.loads(settled.stdout)["unchanged"]


def test_unknown_profile_and_bad_filter_fail_with_clear_messages(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ask", "hi", "-p", "turbo", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "unknown profile 'turbo'" in result.stderr and "balanced" in result.stderr
    bad = runner.invoke(app, ["search", "hi", "--filter", "{oops", "--data-dir", str(tmp_path)])
    assert bad.exit_code == 2 and "--filter" in bad.output


def _ingest_tiny(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    source = tmp_path / "kb"
    source.mkdir(exist_ok=True)
    (source / "port.md").write_text("# Ports\n\nThe lumend daemon serves on port 8642.\n")
    return runner.invoke(app, ["ingest", str(source), "--json", *args], env=env)


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "q", "--top-n", "0"],
        ["search", "q", "-n", "-3"],
        ["ask", "q", "--top-n", "101"],
        ["eval", "--dataset", "x.yaml", "--k", "0"],
        ["eval", "--dataset", "x.yaml", "--limit", "0"],
        ["eval", "--dataset", "x.yaml", "--depth", "-1"],
    ],
)
def test_numeric_flags_are_validated(argv: list[str], tmp_path: Path) -> None:
    result = runner.invoke(app, [*argv, "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert f"Invalid value for '{argv[-2]}'" in result.output or f"'{argv[-2]}'" in result.output


def test_collection_comes_from_env_and_config_file_unless_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = str(tmp_path / "data")
    from_env = _ingest_tiny(tmp_path, "--data-dir", data, env={"RAGLOOM_COLLECTION": "envcoll"})
    assert from_env.exit_code == 0, from_env.output
    assert json.loads(from_env.stdout)["collection"] == "envcoll"
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ragloom.yaml").write_text(f"collection: filecoll\ndata_dir: {data}\n")
    from_file = _ingest_tiny(tmp_path)
    assert json.loads(from_file.stdout)["collection"] == "filecoll"
    flagged = _ingest_tiny(tmp_path, "-c", "flagcoll", env={"RAGLOOM_COLLECTION": "envcoll"})
    assert json.loads(flagged.stdout)["collection"] == "flagcoll"
    searched = runner.invoke(app, ["search", "lumend port", "--json"])  # filecoll, from the file
    assert searched.exit_code == 0, searched.output
    assert "8642" in json.loads(searched.stdout)["citations"][0]["snippet"]


def test_cache_dir_variable_works_with_every_command(tmp_path: Path) -> None:
    env = {"RAGLOOM_CACHE_DIR": str(tmp_path / "cache"), "RAGLOOM_DATA_DIR": str(tmp_path / "d")}
    assert _ingest_tiny(tmp_path, env=env).exit_code == 0
    for argv in (["search", "lumend port"], ["ask", "Which port?"], ["config", "show"]):
        result = runner.invoke(app, argv, env=env)
        assert result.exit_code == 0, (argv, result.output)


def test_help_keeps_brackets_names_values_and_lists_profiles() -> None:
    from ragloom.profiles.presets import profile_names

    helped = runner.invoke(app, ["ask", "--help"])
    assert helped.exit_code == 0
    assert "[n] citations" in helped.stdout and "<bool>" not in helped.stdout
    assert " | ".join(profile_names()) in " ".join(helped.stdout.split())
    assert "--top-n N" in helped.stdout and "--data-dir DIR" in helped.stdout


def test_version() -> None:
    from ragloom import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout.strip() == f"ragloom {__version__}"


def test_default_output_is_clean_and_verbose_adds_detail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ragloom.nodes import trace

    data = str(tmp_path / "data")
    ingested = _ingest_tiny(tmp_path, "--data-dir", data)
    assert ingested.exit_code == 0 and "DEBUG" not in ingested.stderr
    asked = runner.invoke(app, ["ask", "Which port does lumend use?", "--data-dir", data])
    assert asked.exit_code == 0 and "8642" in asked.stdout
    assert "WARNING" not in asked.stderr and asked.stderr.strip() == ""
    monkeypatch.setattr(trace, "_logged", set())  # as in a fresh process: notes not yet logged
    detailed = runner.invoke(app, ["-v", "ask", "Which port does lumend use?", "--data-dir", data])
    assert detailed.exit_code == 0
    assert "ragloom: no chat model" in detailed.stderr  # the extractive generator's note


def test_unexpected_errors_print_one_line_and_debug_shows_the_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragloom.runner

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("scripted failure\nsecond line")

    monkeypatch.setattr(ragloom.runner, "retrieve", broken)
    result = runner.invoke(app, ["search", "q", "--data-dir", str(tmp_path)])
    assert result.exit_code == 1
    assert "unexpected RuntimeError: scripted failure" in result.stderr
    assert "--debug" in result.stderr and "Traceback" not in result.output
    assert "second line" not in result.stderr
    debugged = runner.invoke(app, ["search", "q", "--data-dir", str(tmp_path), "--debug"])
    assert isinstance(debugged.exception, RuntimeError)  # re-raised: Python prints the traceback


def test_config_show_names_the_source_of_each_value(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("rerank: {top_n: 7}\n")
    result = runner.invoke(app, ["config", "show", "--json", "--config", str(config), "-p", "fast",
                                 "-c", "kb"], env={"RAGLOOM_ASSEMBLE__TOKEN_BUDGET": "900"})
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["config_file"] == str(config)
    rows = shown["settings"]
    assert rows["rerank.top_n"] == {"value": 7, "source": f"file:{config}"}
    assert rows["retrieval.mode"] == {"value": "vector", "source": "preset:fast"}
    assert rows["assemble.token_budget"]["source"] == "env:RAGLOOM_ASSEMBLE__TOKEN_BUDGET"
    assert rows["collection"] == {"value": "kb", "source": "flag"}
    assert rows["chunker.size"]["source"] == "default"
    table = runner.invoke(app, ["config", "show", "--config", str(config)])
    assert table.exit_code == 0 and "rerank.top_n" in table.stdout


def test_messages_keep_their_brackets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ragloom.runner
    from ragloom.errors import ConfigError

    def broken(*args: object, **kwargs: object) -> None:
        raise ConfigError("marker [n] and [bold]tags[/bold] stay", where="x")

    monkeypatch.setattr(ragloom.runner, "retrieve", broken)
    result = runner.invoke(app, ["search", "q", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert "x: marker [n] and [bold]tags[/bold] stay" in " ".join(result.stderr.split())


def test_an_ungrounded_answer_prints_a_warning(monkeypatch, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from ragloom import runner as runner_module
    from tests.fakes import ungrounded_answer

    ungrounded = ungrounded_answer()
    monkeypatch.setattr(runner_module, "ask", lambda *a, **k: ungrounded)
    result = runner.invoke(app, ["ask", "How much is the Lumen Ultra?", "--data-dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("warning: this answer is not supported by the passages it cites")
    assert "0/1 claims supported" in lines[0] and lines[1] == ungrounded.text  # warning first
    grounded = ungrounded.model_copy(update={"best_effort": False, "verdicts": []})
    monkeypatch.setattr(runner_module, "ask", lambda *a, **k: grounded)
    assert "warning" not in runner.invoke(app, ["ask", "q", "--data-dir", str(tmp_path)]).output
