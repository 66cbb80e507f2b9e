"""Load on `ragloom serve` over 127.0.0.1: RPS and latency percentiles of /rag/retrieve and
/rag/ask, cached and uncached, at several client counts, with 1 and 2 workers; memory per worker.

    flock /tmp/ragloom-bench.lock python benchmarks/service.py [--clients 1,8,32] [--workers 1,2]
        [--collections kb,scifact] [--endpoints retrieve,ask] [--out bench-out/service]

- Collections: the example KB (`examples/kb`, 23 chunks) and SciFact (../shared/data/scifact,
  5,183 abstracts), ingested once into bench-out/service/data (a rerun costs zero embeddings).
- Server: `ragloom serve` (balanced profile, offline: extractive answers), anonymous, rate limits
  far above the load; one worker with the in-process cache, two workers on a private
  redis-server (cache, rate limits and metrics shared).
- Driver: an httpx asyncio client per simulated client, each sending its requests one after the
  other on its own keep-alive connection. Every cell is bounded in requests and in seconds.
  Uncached requests all carry distinct queries (SciFact queries; for the KB the golden-set
  questions numbered); cached ones cycle through queries asked once beforehand.
- Figures: client-side latency (p50/p95/p99, ms) and server-side time (the `Server-Timing`
  header the service sets: request in → response head out), RPS = answered / wall time, every
  status other than 200 counted as an error (429s listed apart). Memory: RSS of each worker after
  its runs.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, dataset, percentile, read_jsonl  # noqa: E402

OUT = ROOT / "bench-out" / "service"
TIMING = re.compile(r"app;dur=([0-9.]+)")
CACHED_QUERIES = 8
"""Distinct queries a cached cell cycles through (asked once before the cell)."""


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prepare(data_dir: Path, collections: list[str]) -> dict[str, list[str]]:
    """Ingest the collections (incrementally) and return each one's query pool."""
    from ragloom.runner import ingest

    pools: dict[str, list[str]] = {}
    if "example-kb" in collections:  # (collection names need three characters)
        report = ingest([str(ROOT / "examples" / "kb")], collection="example-kb",
                        data_dir=data_dir)
        print(f"example-kb: {report.chunks_written} chunks written, "
              f"{report.embeddings_computed} embeddings", flush=True)
        golden = yaml.safe_load((ROOT / "examples/eval/golden.yaml").read_text(encoding="utf-8"))
        questions = [c["question"] for c in golden["cases"]]
        pools["example-kb"] = [f"{q} ({n})" if n else q for n in range(40) for q in questions]
    if "scifact" in collections:
        root = dataset("scifact")
        started = time.perf_counter()
        report = ingest([str(root / "corpus.jsonl")], collection="scifact", data_dir=data_dir)
        print(f"scifact: {report.embeddings_computed} embeddings in "
              f"{time.perf_counter() - started:.0f} s", flush=True)
        pools["scifact"] = [q["text"] for q in read_jsonl(root / "queries.jsonl")]
    return pools


@contextlib.contextmanager
def redis_server(log: Path) -> Any:
    """A private redis-server on a free port; yields its URL."""
    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no"], stdout=log.open("wb"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        time.sleep(0.5)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)


@contextlib.contextmanager
def serve(data_dir: Path, workers: int, redis_url: str | None, log: Path) -> Any:
    """`ragloom serve` until /health answers; yields (url, process); stopped on exit."""
    port = free_port()
    cmd = [sys.executable, "-m", "ragloom.cli", "serve", "--port", str(port), "--workers",
           str(workers), "--data-dir", str(data_dir), "-c", "example-kb"]
    if redis_url:
        cmd += ["--redis-url", redis_url]
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAGLOOM_")}
    env.update({"RAGLOOM_API__ANONYMOUS_RATE_LIMIT": "1000000/minute",
                "PYTHONPATH": str(ROOT / "src"), "ANONYMIZED_TELEMETRY": "False"})
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=log.open("wb"),
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 300
    try:
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"ragloom serve exited: {log.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise SystemExit("ragloom serve did not start in 300 s")
            time.sleep(0.5)
        yield url, proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)


def worker_memory(proc: subprocess.Popen[bytes], workers: int) -> list[float]:
    """RSS (MiB) of each worker: the server process itself, or its worker children."""
    import psutil

    root = psutil.Process(proc.pid)
    tree = [root, *root.children(recursive=True)]
    python = [p for p in tree if "python" in p.name().lower()]
    chosen = python if workers == 1 else [p for p in python if p.pid != root.pid]
    rss = sorted(p.memory_info().rss / 2**20 for p in chosen)
    return [round(r, 1) for r in rss[-workers:]]


async def run_cell(url: str, endpoint: str, collection: str, queries: list[str], clients: int,
                   requests: int, seconds: float) -> dict[str, Any]:
    """`clients` concurrent clients sending `requests` in all (at most `seconds`)."""
    feed = iter(queries)
    latencies: list[float] = []
    server_ms: list[float] = []
    statuses: dict[int, int] = {}
    hits = 0
    sent = 0
    deadline = time.monotonic() + seconds
    lock = asyncio.Lock()

    async def client() -> None:
        nonlocal sent, hits
        async with httpx.AsyncClient(base_url=url, timeout=300) as http:
            while True:
                async with lock:
                    if sent >= requests or time.monotonic() > deadline:
                        return
                    sent += 1
                    query = next(feed)
                started = time.perf_counter()
                response = await http.post(f"/rag/{endpoint}",
                                           json={"query": query, "collection": collection})
                latencies.append((time.perf_counter() - started) * 1000)
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                found = TIMING.search(response.headers.get("server-timing", ""))
                if found:
                    server_ms.append(float(found.group(1)))
                if response.status_code == 200 and response.json()["metrics"]["cache_hit"]:
                    hits += 1

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    wall = time.perf_counter() - started
    ok = statuses.get(200, 0)

    def pct(values: list[float], q: float) -> float:
        return round(percentile(values, q), 2) if values else float("nan")

    return {"endpoint": endpoint, "collection": collection, "clients": clients,
            "requests": sum(statuses.values()), "rps": round(ok / wall, 2),
            "p50": pct(latencies, 50), "p95": pct(latencies, 95), "p99": pct(latencies, 99),
            "server_p50": pct(server_ms, 50), "server_p99": pct(server_ms, 99),
            "errors": sum(n for s, n in statuses.items() if s != 200),
            "rate_limited": statuses.get(429, 0), "cache_hits": hits,
            "wall_s": round(wall, 1)}


def budget(endpoint: str, cached: bool, clients: int, args: argparse.Namespace) -> int:
    """Requests of one cell: enough for p99 where they are cheap, bounded where they are not."""
    if cached:
        return max(200, 20 * clients)
    if endpoint == "retrieve":
        return max(args.retrieve_requests, 4 * clients)
    return max(args.ask_requests, clients)


def bench_server(url: str, pools: dict[str, list[str]], args: argparse.Namespace,
                 workers: int) -> list[dict[str, Any]]:
    """Every cell against one running server."""
    rows = []
    for collection, endpoint in itertools.product(args.collections, args.endpoints):
        pool = pools[collection]
        offset = {"retrieve": 0, "ask": len(pool) // 2}[endpoint] + 1000 * (workers - 1)
        fresh = itertools.cycle(pool[offset % len(pool):] + pool[:offset % len(pool)])
        warm = pool[-CACHED_QUERIES:]
        for query in warm:  # fill the cache (and warm the graph) outside any cell
            httpx.post(f"{url}/rag/{endpoint}", json={"query": query, "collection": collection},
                       timeout=300)
        for clients in args.clients:
            for cached in (False, True):
                queries = list(itertools.islice(itertools.cycle(warm), 100_000)) if cached \
                    else [next(fresh) for _ in range(budget(endpoint, False, clients, args))]
                row = asyncio.run(run_cell(url, endpoint, collection, queries, clients,
                                           budget(endpoint, cached, clients, args),
                                           args.cell_seconds))
                row.update(workers=workers, cached=cached)
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def markdown(rows: list[dict[str, Any]], memory: dict[int, list[float]]) -> str:
    """The results as a Markdown table."""
    lines = ["| workers | collection | endpoint | cache | clients | requests | RPS | p50 ms | "
             "p95 ms | p99 ms | server p50 ms | errors |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['workers']} | {r['collection']} | /rag/{r['endpoint']} | "
                     f"{'hit' if r['cached'] else 'miss'} | {r['clients']} | {r['requests']} | "
                     f"{r['rps']} | {r['p50']} | {r['p95']} | {r['p99']} | {r['server_p50']} | "
                     f"{r['errors']} |")
    lines.append("")
    for workers, rss in memory.items():
        lines.append(f"Memory with {workers} worker(s): {', '.join(f'{m} MiB' for m in rss)} RSS")
    return "\n".join(lines)


def check_targets(rows: list[dict[str, Any]]) -> list[str]:
    """The issue's targets: uncached retrieve p99 < 4x p50 at 8 clients; cached p50 < 2 ms
    server-side."""
    verdicts = []
    for r in rows:
        if r["endpoint"] == "retrieve" and not r["cached"] and r["clients"] == 8:
            ratio = r["p99"] / r["p50"]
            verdicts.append(f"{'PASS' if ratio < 4 else 'MISS'} uncached retrieve p99/p50 at 8 "
                            f"clients, {r['workers']} worker(s), {r['collection']}: {ratio:.2f}")
        if r["cached"] and r["clients"] == 1:
            verdicts.append(f"{'PASS' if r['server_p50'] < 2 else 'MISS'} cached server p50, "
                            f"/rag/{r['endpoint']}, {r['workers']} worker(s), "
                            f"{r['collection']}: {r['server_p50']} ms")
    return verdicts


def main() -> None:
    """Prepare the collections, then load one server per worker count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", default="1,8,32")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--collections", default="example-kb,scifact")
    parser.add_argument("--endpoints", default="retrieve,ask")
    parser.add_argument("--retrieve-requests", type=int, default=64)
    parser.add_argument("--ask-requests", type=int, default=12)
    parser.add_argument("--cell-seconds", type=float, default=90.0)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.clients = [int(c) for c in args.clients.split(",")]
    args.collections = args.collections.split(",")
    args.endpoints = args.endpoints.split(",")
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"uptime: {os.popen('uptime').read().strip()}", flush=True)
    data_dir = args.out / "data"
    pools = prepare(data_dir, args.collections)
    rows: list[dict[str, Any]] = []
    memory: dict[int, list[float]] = {}
    for workers in (int(w) for w in args.workers.split(",")):
        with contextlib.ExitStack() as stack:
            redis_url = (stack.enter_context(redis_server(args.out / "redis.log"))
                         if workers > 1 else None)
            url, proc = stack.enter_context(serve(data_dir, workers, redis_url,
                                                  args.out / f"serve-{workers}.log"))
            rows += bench_server(url, pools, args, workers)
            memory[workers] = worker_memory(proc, workers)
    print(f"uptime: {os.popen('uptime').read().strip()}", flush=True)
    table = markdown(rows, memory)
    verdicts = check_targets(rows)
    print(table)
    print("\n".join(verdicts))
    (args.out / "results.json").write_text(json.dumps({"rows": rows, "memory": memory,
                                                       "targets": verdicts}, indent=2))


if __name__ == "__main__":
    main()
