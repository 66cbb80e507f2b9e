"""Request counters and latency windows behind `/metrics` (Prometheus text): p50/p95/p99 per
stage and per route over the last WINDOW requests (count and sum since the start, as Prometheus
summaries have them); in-process, or on Redis across workers."""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, Metric
from prometheus_client.registry import Collector

WINDOW = 1024
"""Latency samples kept per series."""
QUANTILES = (0.5, 0.95, 0.99)


@dataclass
class Snapshot:
    """Counters (`kind|label|label` → value) and latency samples (`kind|label` → milliseconds)."""

    counters: dict[str, float] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)


def _events(route: str, status: int, stages: dict[str, float], total_ms: float,
            cache: str | None) -> tuple[dict[str, float], dict[str, float]]:
    """The counter increments and the latency samples of one request (a latency series also
    counts its samples and their sum, cumulatively, as a Prometheus summary does)."""
    counters = {f"requests|{route}|{status}": 1.0}
    if cache is not None:
        counters[f"cache|{cache}"] = 1.0
    samples = {f"route|{route}": total_ms, **{f"stage|{s}": ms for s, ms in stages.items()}}
    for series, value in samples.items():
        counters[f"count|{series}"] = 1.0
        counters[f"sum|{series}"] = value
    return counters, samples


class StatsStore(Protocol):
    """Where the counters and latency windows live."""

    async def record(self, route: str, status: int, stages: dict[str, float], total_ms: float,
                     cache: str | None = None) -> None:
        """Count a request and add its latencies."""

    async def snapshot(self) -> Snapshot:
        """Everything recorded so far."""


class MemoryStats:
    """Counters and windows of this process."""

    def __init__(self) -> None:
        self._counters: defaultdict[str, float] = defaultdict(float)
        self._samples: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    async def record(self, route: str, status: int, stages: dict[str, float], total_ms: float,
                     cache: str | None = None) -> None:
        """Count a request and add its latencies."""
        counters, samples = _events(route, status, stages, total_ms, cache)
        with self._lock:
            for name, value in counters.items():
                self._counters[name] += value
            for series, value in samples.items():
                self._samples.setdefault(series, deque(maxlen=WINDOW)).append(value)

    async def snapshot(self) -> Snapshot:
        """A copy of the counters and windows."""
        with self._lock:
            return Snapshot(dict(self._counters), {k: list(v) for k, v in self._samples.items()})


class RedisStats:
    """Counters and windows on Redis, shared by every worker."""

    def __init__(self, client: Any, prefix: str) -> None:
        self._client = client
        self._counters = prefix + "counters"
        self._series = prefix + "series"
        self._prefix = prefix + "samples:"

    async def record(self, route: str, status: int, stages: dict[str, float], total_ms: float,
                     cache: str | None = None) -> None:
        """Count a request and add its latencies, in one round trip."""
        counters, samples = _events(route, status, stages, total_ms, cache)
        pipe = self._client.pipeline(transaction=False)
        for name, value in counters.items():
            pipe.hincrbyfloat(self._counters, name, value)
        for series, value in samples.items():
            pipe.sadd(self._series, series)
            pipe.lpush(self._prefix + series, value)
            pipe.ltrim(self._prefix + series, 0, WINDOW - 1)
        await pipe.execute()

    async def snapshot(self) -> Snapshot:
        """The shared counters and windows."""
        counters = await self._client.hgetall(self._counters)
        series = sorted(s.decode() for s in await self._client.smembers(self._series))
        pipe = self._client.pipeline(transaction=False)
        for name in series:
            pipe.lrange(self._prefix + name, 0, -1)
        values = await pipe.execute() if series else []
        return Snapshot({k.decode(): float(v) for k, v in counters.items()},
                        {name: [float(x) for x in got] for name, got in zip(series, values,
                                                                             strict=True)})


class _SnapshotCollector(Collector):
    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot

    def collect(self) -> Iterator[Metric]:
        requests = CounterMetricFamily("ragloom_requests", "Requests by route and status",
                                       labels=["route", "status"])
        cache = CounterMetricFamily("ragloom_cache", "Answer cache lookups", labels=["result"])
        for name, value in sorted(self.snapshot.counters.items()):
            kind, *labels = name.split("|")
            if kind == "requests":
                requests.add_metric(labels, value)
            elif kind == "cache":
                cache.add_metric(labels, value)
        yield requests
        yield cache
        for kind, label, doc in (("stage", "stage", "Stage latency (ms) over the last requests"),
                                 ("route", "route", "Request latency (ms) over the last requests")):
            metric = Metric(f"ragloom_{kind}_latency_ms", doc, "summary")
            for name, values in sorted(self.snapshot.samples.items()):
                series_kind, series = name.split("|", 1)
                if series_kind != kind or not values:
                    continue
                for q, v in zip(QUANTILES, np.percentile(values, [q * 100 for q in QUANTILES]),
                                strict=True):
                    metric.add_sample(metric.name, {label: series, "quantile": str(q)}, float(v))
                counters = self.snapshot.counters
                metric.add_sample(metric.name + "_count", {label: series},
                                  counters.get(f"count|{name}", 0.0))
                metric.add_sample(metric.name + "_sum", {label: series},
                                  counters.get(f"sum|{name}", 0.0))
            yield metric


def render(snapshot: Snapshot) -> bytes:
    """The Prometheus text exposition of a snapshot."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_SnapshotCollector(snapshot))
    return generate_latest(registry)
