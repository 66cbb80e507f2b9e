"""Rate limits per API key (per client IP without one): moving windows from the `limits` library,
in-process or on Redis; an exhausted window is a 429 with `Retry-After`."""

from __future__ import annotations

import math
import time

from limits import RateLimitItem, parse_many
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import MovingWindowRateLimiter

from ragloom.api.errors import ServiceError
from ragloom.api.keys import Principal
from ragloom.errors import ConfigError


def parse_limits(text: str, where: str) -> list[RateLimitItem]:
    """Rate limits from `N/unit` items joined by `;`, or a ConfigError naming the setting."""
    try:
        items = parse_many(text)
    except ValueError as exc:
        raise ConfigError(f"invalid rate limit {text!r}", where=where,
                          hint="write e.g. 600/minute or 10/second;300/minute") from exc
    if not items:
        raise ConfigError(f"invalid rate limit {text!r}", where=where)
    return items


def limits_storage(redis_url: str | None, prefix: str) -> Storage:
    """The window storage: Redis (shared by workers) when a URL is configured, else in-process."""
    if redis_url is None:
        return MemoryStorage()
    return RedisStorage("async+" + redis_url, implementation="redispy", key_prefix=prefix)


class RateLimiter:
    """Counts requests per principal against the key limit or the anonymous one."""

    def __init__(self, storage: Storage, *, per_key: str, per_ip: str) -> None:
        self._limiter = MovingWindowRateLimiter(storage)
        self._per_key = parse_limits(per_key, "api.rate_limit")
        self._per_ip = parse_limits(per_ip, "api.anonymous_rate_limit")
        self.storage = storage

    async def check(self, principal: Principal) -> None:
        """Count one request; raise a 429 with Retry-After when a window is exhausted."""
        items = self._per_key if principal.key else self._per_ip
        for item in items:
            if not await self._limiter.hit(item, "ragloom", principal.identity):
                stats = await self._limiter.get_window_stats(item, "ragloom", principal.identity)
                wait = max(1, math.ceil(stats.reset_time - time.time()))
                raise ServiceError(429, f"rate limit of {item} exceeded",
                                   where=principal.key or "client address",
                                   hint=f"retry in {wait} s", headers={"Retry-After": str(wait)})
