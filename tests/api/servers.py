"""Real processes for the service's integration tests: `ragloom serve` and `redis-server`.

Each binds 127.0.0.1 on a free port, is polled for readiness under a deadline (failing with its
log tail), runs in its own process group and is always stopped.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from tests.conftest import ROOT, free_port
from tests.integration.servers import LOOPBACK, stop_group, wait_until


def _tail(path: Path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


@contextlib.contextmanager
def redis_server(log_dir: Path) -> Iterator[str]:
    """A private redis-server (no persistence) on a free port; yields its redis:// URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed: apt-get install -y redis-server "
                    "(.ci/run installs it)", pytrace=False)
    port = free_port()
    log = log_dir / "redis.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([binary, "--port", str(port), "--bind", LOOPBACK, "--save", "",
                                 "--appendonly", "no", "--protected-mode", "yes"],
                                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    url = f"redis://{LOOPBACK}:{port}/0"
    try:
        import redis

        wait_until(lambda: redis.Redis.from_url(url, socket_timeout=1).ping(), timeout_s=20,
                   what=f"redis-server on port {port}", diagnose=lambda: _tail(log))
        yield url
    finally:
        stop_group(proc)


class RagloomServe:
    """`ragloom serve` in a subprocess; its JSON access lines are read from its stderr log."""

    def __init__(self, args: list[str], *, log_path: Path, env: dict[str, str] | None = None,
                 startup_timeout_s: float = 180.0) -> None:
        self.port = free_port()
        self.url = f"http://{LOOPBACK}:{self.port}"
        self.log_path = log_path
        self.cmd = [sys.executable, "-m", "ragloom.cli", "serve", "--port", str(self.port), *args]
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("RAGLOOM_") and k not in ("LANGSMITH_TRACING",
                                                                  "LANGCHAIN_TRACING_V2")}
        self.env.update({"ANONYMIZED_TELEMETRY": "False", "PYTHONUNBUFFERED": "1",
                         "PYTHONPATH": os.pathsep.join(
                             [str(ROOT / "src"), str(ROOT), os.environ.get("PYTHONPATH", "")])})
        self.env.update(env or {})
        self.startup_timeout_s = startup_timeout_s
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the server and wait until /health answers (models loaded, graphs compiled)."""
        with self.log_path.open("wb") as log:
            self.proc = subprocess.Popen(self.cmd, cwd=ROOT, env=self.env, stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)

        def ready() -> bool:
            assert self.proc is not None
            if self.proc.poll() is not None:
                pytest.fail(f"ragloom serve exited with {self.proc.returncode}\n{self.log_tail()}",
                            pytrace=False)
            return httpx.get(f"{self.url}/health", timeout=2.0).status_code == 200

        wait_until(ready, timeout_s=self.startup_timeout_s, interval_s=0.5,
                   what=f"ragloom serve on {self.url}", diagnose=self.log_tail)

    def stop(self) -> None:
        """Stop the server and its workers."""
        proc, self.proc = self.proc, None
        if proc is not None:
            stop_group(proc)

    def log_tail(self) -> str:
        """The end of the server's output."""
        return "--- ragloom serve log tail ---\n" + _tail(self.log_path)

    def access_lines(self) -> list[dict]:
        """Every JSON access-log line written so far."""
        lines = []
        for line in self.log_path.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith('{"ts"'):
                lines.append(json.loads(line))
        return lines


@contextlib.contextmanager
def ragloom_serve(args: list[str], *, log_path: Path,
                  env: dict[str, str] | None = None) -> Iterator[RagloomServe]:
    """A running `ragloom serve`; always stopped on exit."""
    server = RagloomServe(args, log_path=log_path, env=env)
    try:
        server.start()
        yield server
    finally:
        server.stop()


class Recording:
    """What a stand-in HTTP endpoint was sent: every request's path and body."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.bodies: list[bytes] = []
        self.paths: list[str] = []

    def wait_for(self, needle: bytes, *, timeout_s: float) -> bytes:
        """Everything sent so far, once some request contains needle (or the time is up)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and not any(needle in b for b in self.bodies):
            time.sleep(0.2)
        return b"".join(self.bodies)


@contextlib.contextmanager
def recording_endpoint() -> Iterator[Recording]:
    """A stand-in for a collector API (LangSmith, OTLP) on 127.0.0.1: answers `{}` to every
    request and records it."""
    recording = Recording("")

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            recording.paths.append(self.path)
            recording.bodies.append(self.rfile.read(length) if length else b"")
            payload = b"{}"
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = _answer

        def log_message(self, *args: object) -> None:
            """Quiet."""

    server = ThreadingHTTPServer((LOOPBACK, 0), Handler)
    recording.url = f"http://{LOOPBACK}:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield recording
    finally:
        server.shutdown()
        server.server_close()
