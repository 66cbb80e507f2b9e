"""Crash safety: SIGKILL an ingest process at several points; the re-run ends as one clean ingest."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ragloom.runner import ingest
from tests.graphs.test_ingest_graph import assert_consistent

pytestmark = pytest.mark.integration

WORDS = ("amber", "basalt", "cobalt", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "jasper")


def write_corpus(root: Path, n: int = 60) -> None:
    """Many small distinct Markdown files so a run spans dozens of batches."""
    root.mkdir(parents=True)
    for i in range(n):
        paragraphs = [
            f"Paragraph {p} of note {i}: the {WORDS[(i + p) % 10]} module reports code {i * 7 + p}. "
            + " ".join(f"{WORDS[(i * p + q) % 10]}-{q}" for q in range(60))
            for p in range(4)
        ]
        (root / f"note-{i:03d}.md").write_text(f"# Note {i}\n\n" + "\n\n".join(paragraphs), "utf-8")


def recorded_sources(data_dir: Path) -> int:
    """How many sources the manifest records right now (0 when absent or mid-write)."""
    try:
        return len(json.loads((data_dir / "manifests" / "crash.json").read_text())["sources"])
    except (OSError, ValueError, KeyError):
        return 0


def run_and_kill(corpus: Path, data_dir: Path, when: Callable[[], bool] | None) -> int:
    """Run `ragloom ingest` in a subprocess; SIGKILL it once `when()` holds. Return its exit code."""
    env = {**os.environ, "RAGLOOM_INGEST__BATCH_SOURCES": "2", "ANONYMIZED_TELEMETRY": "False"}
    cmd = [sys.executable, "-m", "ragloom.cli", "ingest", str(corpus), "--collection", "crash",
           "--data-dir", str(data_dir), "--json"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    try:
        while when is not None and proc.poll() is None and time.monotonic() < deadline:
            if when():
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.005)
        return proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigkill_at_several_points_then_rerun_equals_clean_ingest(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus)
    clean_dir, crash_dir = tmp_path / "clean", tmp_path / "crashed"
    ingest([str(corpus)], collection="crash", data_dir=clean_dir)
    expected = assert_consistent(clean_dir, "crash")

    kill_points = [
        lambda: (crash_dir / "chroma").exists(),
        lambda: recorded_sources(crash_dir) >= 6,
        lambda: recorded_sources(crash_dir) >= 30,
    ]
    for point in kill_points:
        code = run_and_kill(corpus, crash_dir, point)
        assert code == -signal.SIGKILL, "the ingest finished before it could be killed"
    assert 0 < recorded_sources(crash_dir) < 60

    assert run_and_kill(corpus, crash_dir, None) == 0
    assert assert_consistent(crash_dir, "crash") == expected
