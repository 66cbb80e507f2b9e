"""docs/reference is generated from the code (`python -m ragloom.reference`) and must not drift."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ragloom import reference
from ragloom.settings import RagSettings, flatten

REFERENCE_DIR = Path(__file__).resolve().parents[2] / "docs" / "reference"


def test_committed_reference_is_current() -> None:
    # A fresh interpreter: names other tests register (rerankers, ...) must not leak into the check.
    src = Path(reference.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-m", "ragloom.reference", "--check", "--out",
                          str(REFERENCE_DIR)], capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 0, (f"docs/reference is stale: run `{reference.COMMAND}` from the "
                                 f"repository root and commit the result\n{run.stderr}")


def test_write_creates_every_generated_file(tmp_path: Path) -> None:
    written = {p.relative_to(tmp_path).as_posix() for p in reference.write(tmp_path)}
    assert written == set(reference.generate())
    assert reference.write(tmp_path) == []


def test_check_reports_a_changed_file(tmp_path: Path) -> None:
    reference.write(tmp_path)
    assert reference.stale(tmp_path) == []
    (tmp_path / "settings.md").write_text("edited by hand\n", encoding="utf-8")
    (tmp_path / "schemas" / "rag_answer.json").unlink()
    assert reference.stale(tmp_path) == ["schemas/rag_answer.json", "settings.md"]
    assert reference.main(["--check", "--out", str(tmp_path)]) == 1


def test_every_setting_is_documented_with_its_variable() -> None:
    text = reference.settings_markdown()
    for dotted in flatten(RagSettings.model_validate({}).model_dump(mode="json")):
        row = next((line for line in text.splitlines() if line.startswith(f"| `{dotted}` |")), "")
        assert reference.env_name(dotted) in row, dotted
        assert not row.endswith("|  |"), f"{dotted} has no description"
    assert "`RAGLOOM_CHAT__TIMEOUTS__GENERATE`" in text
    assert set(reference.NOTES) <= set(flatten(RagSettings.model_validate({}).model_dump()))


def test_output_has_no_machine_paths(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("COLUMNS", "37")
    files = reference.generate()
    for needle in (str(Path.home()), os.getcwd(), str(tmp_path)):
        assert not [name for name, text in files.items() if needle in text], needle
    assert files == reference.generate()


def test_cli_reference_lists_every_command() -> None:
    import typer

    from ragloom.cli import app

    text = reference.cli_markdown()
    root = typer.main.get_command(app)
    for name in root.list_commands(typer.Context(root)):
        assert f"## `ragloom {name}`" in text, name
    assert "`-n, --top-n N`: passages to keep, 1-100" in text
