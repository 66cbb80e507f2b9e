"""Crash safety: SIGKILL an ingest process at several points; the re-run ends as one clean ingest.

Kill points are observed from outside (the process is killed once the store or the manifest shows
progress) or named inside multi-step writes (`_RAGLOOM_CRASHPOINT`, see `stores.crashpoints`): after
a batch's intent and before its Chroma writes, inside the manifest transaction, while a BM25
segment is written, at the BM25 commit, and after it but before the journal is trimmed.
"""

from __future__ import annotations

import os
import sqlite3
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ragloom.runner import ingest
from tests.graphs.test_ingest_graph import assert_consistent

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]  # ~15 ingest processes

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
    path = data_dir / "manifests" / "crash.sqlite"
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1) as db:
            return int(db.execute("SELECT COUNT(*) FROM sources").fetchone()[0])
    except sqlite3.Error:
        return 0


def run_and_kill(corpus: Path, data_dir: Path, when: Callable[[], bool] | None,
                 crashpoint: str | None = None) -> int:
    """Run `ragloom ingest` in a subprocess; SIGKILL it once `when()` holds, or let it kill itself
    at a named crashpoint. Return its exit code."""
    env = {**os.environ, "RAGLOOM_INGEST__BATCH_SOURCES": "2", "ANONYMIZED_TELEMETRY": "False"}
    if crashpoint is not None:
        env["_RAGLOOM_CRASHPOINT"] = crashpoint
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

    kill_points: list[tuple[Callable[[], bool] | None, str | None]] = [
        (lambda: (crash_dir / "chroma").exists(), None),
        (None, "ingest.upsert:3"),      # intent written, Chroma not yet
        (None, "manifest.record:2"),    # inside the batch's manifest transaction
        (lambda: recorded_sources(crash_dir) >= 30, None),
        (None, "bm25.segment"),         # first BM25 build: segment staged, not renamed
        (None, "bm25.commit"),          # segment in place, CURRENT not yet replaced
    ]
    for when, point in kill_points:
        code = run_and_kill(corpus, crash_dir, when, point)
        assert code == -signal.SIGKILL, f"the ingest finished before it could be killed ({point})"
    assert 0 < recorded_sources(crash_dir) <= 60
    assert not (crash_dir / "bm25" / "crash" / "CURRENT.json").exists()

    assert run_and_kill(corpus, crash_dir, None) == 0
    assert assert_consistent(crash_dir, "crash") == expected

    # The incremental path: edits and a deletion, killed inside the BM25 update.
    for i in (3, 17, 41):
        note = corpus / f"note-{i:03d}.md"
        note.write_text(note.read_text("utf-8") + "\n\nAn added closing line about zebras.\n", "utf-8")
    (corpus / "note-050.md").unlink()
    ingest([str(corpus)], collection="crash", data_dir=tmp_path / "clean2")
    expected = assert_consistent(tmp_path / "clean2", "crash")
    for point in ("bm25.segment", "bm25.commit", "ingest.bm25-applied"):
        assert run_and_kill(corpus, crash_dir, None, point) == -signal.SIGKILL, point
    assert run_and_kill(corpus, crash_dir, None) == 0
    assert assert_consistent(crash_dir, "crash") == expected
