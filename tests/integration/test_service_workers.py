"""`ragloom serve --workers 2` on a real redis-server: the answer cache, the rate limits and the
metrics hold across the workers."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Iterator

import httpx
import pytest

from ragloom.settings import RagSettings
from tests.api.conftest import Keys, build_kb, make_keys
from tests.api.servers import RagloomServe, ragloom_serve, redis_server

pytestmark = pytest.mark.integration
LIMIT = 12


@pytest.fixture(scope="module")
def workers(tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[RagloomServe, Keys, str]]:
    """Two workers sharing one Redis, over the scoped test KB."""
    root = tmp_path_factory.mktemp("workers")
    settings: RagSettings = build_kb(root)
    keys = make_keys(root / "keys.yaml")
    with redis_server(root) as url, ragloom_serve(
            ["--workers", "2", "--redis-url", url, "--keys-file", str(keys.path),
             "--data-dir", str(settings.data_dir), "-c", "scoped"],
            log_path=root / "serve.log",
            env={"RAGLOOM_API__RATE_LIMIT": f"{LIMIT}/minute"}) as server:
        yield server, keys, url


async def _burst(url: str, n: int, secret: str, body: dict,
                 timeout: float = 60) -> list[httpx.Response]:
    """N concurrent requests, each on its own connection."""
    async def one() -> httpx.Response:
        async with httpx.AsyncClient(base_url=url, timeout=timeout) as client:
            return await client.post("/rag/retrieve", json=body, headers=Keys.header(secret))

    return list(await asyncio.gather(*(one() for _ in range(n))))


def _retrieve_lines(server: RagloomServe, key: str, answered: int) -> list[dict]:
    """The access-log lines of the key's answered /rag/retrieve requests, waiting up to 5 s for
    `answered` of them: a worker logs after it responds."""
    deadline = time.monotonic() + 5.0
    while True:
        lines = [line for line in server.access_lines()
                 if line.get("route") == "/rag/retrieve" and line.get("status") == 200
                 and line.get("key") == key]
        if len(lines) >= answered or time.monotonic() > deadline:
            return lines
        time.sleep(0.1)


@contextlib.contextmanager
def _paused(pid: int) -> Iterator[None]:
    """The worker `pid` stopped (SIGSTOP), so the other worker accepts every new connection;
    resumed on exit (unless the supervisor replaced it meanwhile). Keep it under uvicorn's 5 s
    health check, after which the supervisor replaces a silent worker."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


def test_cache_and_rate_limit_hold_across_workers(
        workers: tuple[RagloomServe, Keys, str]) -> None:
    server, keys, _ = workers
    body = {"query": "What is the quarterly code word of the sales team?"}
    first = asyncio.run(_burst(server.url, 1, keys.sales, body))[0]
    assert first.status_code == 200 and not first.json()["metrics"]["cache_hit"]
    responses = asyncio.run(_burst(server.url, LIMIT - 1 + 6, keys.sales, body))
    codes = sorted(r.status_code for r in responses)
    assert codes == [200] * (LIMIT - 1) + [429] * 6  # one budget, whichever worker answered
    assert all(int(r.headers["Retry-After"]) >= 1 for r in responses if r.status_code == 429)
    assert all(r.json()["metrics"]["cache_hit"] for r in responses if r.status_code == 200)
    text = httpx.get(f"{server.url}/metrics", timeout=10).text
    assert f'ragloom_requests_total{{route="/rag/retrieve",status="200"}} {LIMIT}.0' in text
    assert 'ragloom_requests_total{route="/rag/retrieve",status="429"} 6.0' in text
    # A worker answers from an entry the other cached. Which worker accepts a connection is the
    # kernel's choice (one may take every request), so the worker that cached is paused while
    # the same query is asked again with a fresh connection: only the other worker can answer it.
    secret, query = keys.sales_writer, {"query": "Which code word does the writers' team use?"}
    assert asyncio.run(_burst(server.url, 1, secret, query))[0].status_code == 200
    first_lines = _retrieve_lines(server, "sales-writer", 1)
    assert [line["cache"] for line in first_lines] == ["miss"]
    miss = first_lines[0]
    with _paused(miss["pid"]):  # the repeat's time-out stays under the 5 s health check
        again = asyncio.run(_burst(server.url, 1, secret, query, timeout=4))[0]
    assert again.status_code == 200 and again.json()["metrics"]["cache_hit"]
    hit = _retrieve_lines(server, "sales-writer", 2)[-1]
    assert hit["cache"] == "hit" and hit["pid"] != miss["pid"]


def test_scope_holds_on_the_shared_cache(workers: tuple[RagloomServe, Keys, str]) -> None:
    server, keys, _ = workers
    body = {"query": "Which code word does the HR team use?"}
    hr = asyncio.run(_burst(server.url, 3, keys.hr, body))
    assert all("WALRUS" in r.text for r in hr)
    sales = asyncio.run(_burst(server.url, 3, keys.sales, body))
    assert all(r.status_code in (200, 429) and "WALRUS" not in r.text for r in sales)


def test_a_lost_redis_is_a_503_not_a_crash(workers: tuple[RagloomServe, Keys, str]) -> None:
    import redis

    server, keys, url = workers  # the module's last test: it stops the shared Redis
    with contextlib.suppress(redis.ConnectionError):
        redis.Redis.from_url(url).shutdown(nosave=True)
    responses = asyncio.run(_burst(server.url, 2, keys.admin, {"query": "code word"}))
    assert [r.status_code for r in responses] == [503, 503]
    assert "Redis" in responses[0].json()["detail"]
    assert httpx.get(f"{server.url}/health", timeout=10).status_code == 200
