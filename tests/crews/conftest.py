"""Fixtures of the crew tests: a tiny knowledge base and crew files written in the test."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

KB = {
    "warranty.md": "# Warranty\n\nThe Quill hub has a two-year warranty. Registering the hub in "
                   "the app within 30 days extends the warranty to three years.\n",
    "battery.md": "# Battery\n\nThe Quill sensor runs for 18 months on two AA batteries. Cold "
                  "weather below minus 10 degrees shortens the battery life.\n",
    "errors.md": "# Error E7\n\nError E7 means the sensor lost radio contact with the hub. Move "
                 "the sensor closer to the hub or remove metal obstacles.\n",
}
"""Three tiny documents, one fact family each, so a citation shows which one was used."""


def write_kb(folder: Path) -> Path:
    """Write the tiny knowledge base into folder/kb and return that folder."""
    kb = folder / "kb"
    kb.mkdir(parents=True, exist_ok=True)
    for name, text in KB.items():
        (kb / name).write_text(text, encoding="utf-8")
    return kb


def write_crew(folder: Path, text: str, name: str = "crew.yaml") -> Path:
    """Write a crew file (dedented) into folder and return its path."""
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def crew_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the tiny KB in kb/ and a data dir shared by the module's crews."""
    home = tmp_path_factory.mktemp("crews")
    write_kb(home)
    return home
