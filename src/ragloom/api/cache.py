"""The answer cache: responses keyed by normalised query, filters, profile and collection revision.

In-process (LRU + TTL) by default; on Redis when several workers must share it. A collection that
changes gets a new revision, so its old entries are never read again (they expire by TTL).
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import time
import unicodedata
from collections.abc import Callable
from typing import Any, Protocol

from cachetools import TTLCache

_SPACES = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s?!.]+$")


def normalise_query(query: str) -> str:
    """The query as the cache compares it: NFKC, case-folded, spaces collapsed, no final
    punctuation."""
    text = unicodedata.normalize("NFKC", query).casefold()
    return _TRAILING.sub("", _SPACES.sub(" ", text).strip())


def cache_key(**parts: Any) -> str:
    """A stable key for the parts of a request that decide its answer."""
    parts["query"] = normalise_query(str(parts.get("query", "")))
    blob = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class AnswerCache(Protocol):
    """Get and set serialised responses by key."""

    name: str

    async def get(self, key: str) -> bytes | None:
        """The cached value, or None."""

    async def set(self, key: str, value: bytes) -> None:
        """Store a value for the cache's TTL."""


class NoCache:
    """The cache when `api.cache_ttl_s` is 0."""

    name = "off"

    async def get(self, key: str) -> bytes | None:
        """Always a miss."""
        return None

    async def set(self, key: str, value: bytes) -> None:
        """Store nothing."""


class MemoryCache:
    """A bounded in-process cache (one per worker)."""

    name = "memory"

    def __init__(self, ttl_s: float, max_entries: int,
                 timer: Callable[[], float] = time.monotonic) -> None:
        self._entries: TTLCache[str, bytes] = TTLCache(maxsize=max_entries, ttl=ttl_s,
                                                       timer=timer)
        self._lock = threading.Lock()

    async def get(self, key: str) -> bytes | None:
        """The cached value, or None when absent or expired."""
        with self._lock:
            return self._entries.get(key)

    async def set(self, key: str, value: bytes) -> None:
        """Store a value (the least recently used entry goes when full)."""
        with self._lock:
            self._entries[key] = value


class RedisCache:
    """The cache on Redis, shared by every worker."""

    name = "redis"

    def __init__(self, client: Any, ttl_s: float, prefix: str) -> None:
        self._client = client
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._prefix = prefix

    async def get(self, key: str) -> bytes | None:
        """The cached value, or None."""
        value = await self._client.get(self._prefix + key)
        return bytes(value) if value is not None else None

    async def set(self, key: str, value: bytes) -> None:
        """Store a value with the TTL."""
        await self._client.set(self._prefix + key, value, px=self._ttl_ms)
