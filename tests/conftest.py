"""Shared fixtures: an isolated environment per test and the real embedder loaded once."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

os.environ["ANONYMIZED_TELEMETRY"] = "False"
os.environ.pop("LANGSMITH_TRACING", None)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES_KB = ROOT / "examples" / "kb"


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No RAGLOOM_* variable from the outer environment leaks into a test."""
    for name in list(os.environ):
        if name.startswith("RAGLOOM_"):
            monkeypatch.delenv(name)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh ragloom data directory."""
    path = tmp_path / "data"
    yield path
