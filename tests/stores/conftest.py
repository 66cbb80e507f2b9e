"""Fixtures for the store tests: a real `chroma run` server, test vectors and chunks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest

from ragloom.providers.embeddings import EmbeddingProfile
from ragloom.state import Chunk
from ragloom.stores.chroma import close_clients

DIM = 8
SERVER_START_DEADLINE_S = 30.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def unit_vectors(n: int, seed: int = 0, dim: int = DIM) -> np.ndarray:
    """n deterministic random unit vectors."""
    vectors = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def make_chunks(n: int) -> list[Chunk]:
    """n chunks over two sources with scalar and structured metadata."""
    return [
        Chunk(
            id=f"doc{i}::0::{i:012d}",
            source_id=f"src{i % 2}.md",
            doc_id=f"doc{i}",
            text=f"common words about topic {i} and runs of item{i}",
            start=i * 10,
            end=i * 10 + 9,
            metadata={
                "page": i,
                "lang": "en" if i % 3 else "de",
                "draft": i == 4,
                "tags": ["t", str(i)],
            },
        )
        for i in range(n)
    ]


@pytest.fixture
def chunks() -> list[Chunk]:
    """Six chunks over two sources."""
    return make_chunks(6)


@pytest.fixture
def vectors() -> np.ndarray:
    """Six unit vectors aligned with `chunks`."""
    return unit_vectors(6)


@pytest.fixture
def profile() -> EmbeddingProfile:
    """The test embedding profile."""
    return EmbeddingProfile(provider="test", model="random-unit", dimension=DIM)


@pytest.fixture(autouse=True)
def _no_telemetry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")
    yield
    close_clients()


def _wait_for_heartbeat(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_DEADLINE_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"chroma run exited with {process.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/api/v2/heartbeat", timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    pytest.fail(
        f"chroma run did not answer {url} within {SERVER_START_DEADLINE_S:.0f} s: "
        f"{log.read_text()[-2000:]}"
    )


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """URL of a real `chroma run` server on 127.0.0.1, stopped at the end of the session."""
    executable = Path(sys.executable).parent / "chroma"
    if not executable.exists():
        pytest.fail(f"no chroma executable next to {sys.executable}")
    root = tmp_path_factory.mktemp("chroma-server")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = root / "server.log"
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [
                str(executable),
                "run",
                "--path",
                str(root / "data"),
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        _wait_for_heartbeat(url, process, log)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
