"""Start-up benchmark: wall time of cold CLI runs and of `langgraph dev` until it answers `/ok`.

    python benchmarks/startup.py [--runs 5] [--root DIR] [--json FILE]

Each run is a fresh process (the OS file cache stays warm, as it would for a user). Printed
beside two floors measured in the same run: `python -c pass` and `python -c "import chromadb"`.
Commands run round-robin, so load that comes and goes hits each alike; the median of the runs is
the figure. `--root` measures another checkout (its `src/` and `langgraph.json`), e.g. an older
commit unpacked with `git archive`. The example knowledge base is ingested first (untimed), which
also leaves the ONNX export in the cache. Targets (issue 10): search ≤ 2.5 s, ask (extractive)
≤ 3 s, langgraph dev ready ≤ 6 s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLLECTION = "startup"
QUESTION = "How long does the Lumen Pro keep running without sunlight?"
TARGETS = {"ragloom search": 2.5, "ragloom ask (extractive)": 3.0, "langgraph dev → /ok": 6.0}


def free_port() -> int:
    """A free TCP port on 127.0.0.1 other than 2024 (taken on these machines)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port != 2024:
            return port


def environment(root: Path, data_dir: Path) -> dict[str, str]:
    """The process environment for the measured commands: that checkout first, offline."""
    tracing = ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("RAGLOOM_") and k not in tracing}
    env.update(PYTHONPATH=str(root / "src"), RAGLOOM_DATA_DIR=str(data_dir),
               RAGLOOM_COLLECTION=COLLECTION, RAGLOOM_CHAT__PROVIDER="none",
               LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true",
               ANONYMIZED_TELEMETRY="False")
    return env


def timed(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds one command takes to exit; fails loudly on a non-zero exit."""
    start = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return elapsed


def langgraph_ready(env: dict[str, str], cwd: Path, log: Path, timeout_s: float = 180.0) -> float:
    """Seconds from starting `langgraph dev` until `/ok` answers 200; the server is then stopped."""
    port = free_port()
    cmd = [str(Path(sys.executable).parent / "langgraph"), "dev", "--no-browser", "--no-reload",
           "--host", "127.0.0.1", "--port", str(port)]
    url = f"http://127.0.0.1:{port}/ok"
    start = time.perf_counter()
    with log.open("ab") as out:
        proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    try:
        while time.perf_counter() - start < timeout_s:
            if proc.poll() is not None:
                raise SystemExit(f"langgraph dev exited with {proc.returncode}; see {log}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(url, timeout=1.0) as response:
                    if response.status == 200:
                        return time.perf_counter() - start
            time.sleep(0.05)
        raise SystemExit(f"langgraph dev not ready after {timeout_s:.0f} s; see {log}")
    finally:
        stop(proc)


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End the server's whole process group: SIGTERM, then SIGKILL after 15 s."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15.0)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def load() -> str:
    """The 1-, 5- and 15-minute load averages."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    """Measure and print the start-up figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--root", type=Path, default=ROOT, help="checkout to measure")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    root = args.root.resolve()
    work = Path(tempfile.mkdtemp(prefix="ragloom-startup-"))
    env = environment(root, work / "data")
    python = sys.executable
    cli = [python, "-m", "ragloom.cli"]
    # -c as well as RAGLOOM_COLLECTION: older checkouts let the flag's default override the variable
    timed([*cli, "ingest", str(ROOT / "examples" / "kb"), "-c", COLLECTION], env, work)  # set-up
    commands: dict[str, Callable[[], float]] = {
        "python -c pass": lambda: timed([python, "-c", "pass"], env, work),
        "python -c 'import chromadb'": lambda: timed([python, "-c", "import chromadb"], env, work),
        "ragloom search": lambda: timed([*cli, "search", QUESTION, "-c", COLLECTION], env,
                                        work),
        "ragloom ask (extractive)": lambda: timed([*cli, "ask", QUESTION, "-c", COLLECTION], env,
                                                  work),
        "langgraph dev → /ok": lambda: langgraph_ready(env, root, work / "langgraph-dev.log"),
    }
    before = load()
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, run in commands.items():
            samples[name].append(run())
    after = load()
    print(f"start-up, {args.runs} cold runs each, checkout {root}")
    print(f"load average before {before}, after {after} ({os.cpu_count()} CPUs)")
    print(f"{'command':<30} {'median s':>9} {'min':>6} {'max':>6}  target")
    figures = {}
    for name, values in samples.items():
        median = statistics.median(values)
        target = TARGETS.get(name)
        met = "met" if target is not None and median <= target else "MISSED"
        verdict = "" if target is None else f"≤ {target:.1f} s {met}"
        print(f"{name:<30} {median:>9.2f} {min(values):>6.2f} {max(values):>6.2f}  {verdict}")
        figures[name] = {"median_s": median, "runs_s": values, "target_s": target}
    if args.json:
        args.json.write_text(json.dumps({"root": str(root), "load_before": before,
                                         "load_after": after, "figures": figures}, indent=2))


if __name__ == "__main__":
    main()
