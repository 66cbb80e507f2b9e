"""`ragloom serve`: check the settings (binding, workers, Redis), then run uvicorn.

Without keys the server binds 127.0.0.1 whatever host was asked for, and says so. Several workers
need Redis, so that the answer cache, rate limits and metrics hold across them. Every worker
reads the same resolved settings, written once to a file the workers load (RAGLOOM_CONFIG).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml

from ragloom.extras import require_extra

require_extra("api", "the HTTP service (ragloom serve)")  # before the imports it checks

from ragloom.api.ratelimit import parse_limits
from ragloom.errors import ConfigError, StoreError
from ragloom.settings import RagSettings, resolve_settings

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
APP_FACTORY = "ragloom.api.app:app_from_env"


def _check_redis(url: str) -> None:
    """Fail fast when nothing answers PING at the Redis URL."""
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3).ping()
    except (redis.RedisError, ValueError) as exc:
        raise StoreError(f"Redis does not answer: {exc}", where=url,
                         hint="start it (redis-server --port N) or fix api.redis_url") from exc


def server_settings(*, config_file: Path | None = None, **overrides: Any
                    ) -> tuple[RagSettings, list[str]]:
    """The settings a server runs with, and the notes to print (binding, keys)."""
    settings = resolve_settings(config_file=config_file, **overrides)
    api = settings.api
    notes: list[str] = []
    parse_limits(api.rate_limit, "api.rate_limit")
    parse_limits(api.anonymous_rate_limit, "api.anonymous_rate_limit")
    if api.keys_file is None:
        if api.host not in LOOPBACK:
            notes.append(f"no API keys configured (api.keys_file): binding 127.0.0.1 only, "
                         f"not {api.host}")
        else:
            notes.append("no API keys configured (api.keys_file): anonymous access, bound to "
                         "127.0.0.1 only")
        settings = settings.model_copy(update={"api": api.model_copy(update={"host": "127.0.0.1"})})
    elif not Path(api.keys_file).exists():
        notes.append(f"keys file {api.keys_file} has no keys yet: every request gets a 401 "
                     "until `ragloom api-key NAME --keys-file ...` adds one")
    if api.workers > 1 and not api.redis_url:
        raise ConfigError(f"{api.workers} workers need a shared store for the cache and the "
                          "rate limits", where="api.workers",
                          hint="pass --redis-url redis://127.0.0.1:6379/0 or use one worker")
    if api.redis_url:
        _check_redis(api.redis_url)
    return settings, notes


def run_server(settings: RagSettings) -> None:
    """Run uvicorn with the app factory; every worker loads these settings."""
    import uvicorn

    api = settings.api
    body = settings.model_dump(mode="json")
    body["data_dir"] = str(Path(settings.data_dir).expanduser().resolve())
    folder = Path(body["data_dir"]) / "api"
    folder.mkdir(parents=True, exist_ok=True)
    fd, path = tempfile.mkstemp(prefix="serve-", suffix=".yaml", dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        yaml.safe_dump(body, handle, sort_keys=False)
    os.environ["RAGLOOM_CONFIG"] = path
    auth = f"keys from {api.keys_file}" if api.keys_file else "anonymous"
    cache = "redis" if api.redis_url else "in-process"
    print(f"ragloom serving http://{api.host}:{api.port} — {api.workers} worker(s), "
          f"auth: {auth}, cache and rate limits: {cache}, default collection "
          f"{settings.collection!r}", flush=True)
    try:
        uvicorn.run(APP_FACTORY, factory=True, host=api.host, port=api.port,
                    workers=api.workers, access_log=False, log_level="warning",
                    timeout_graceful_shutdown=5)
    finally:
        with contextlib.suppress(FileNotFoundError):
            Path(path).unlink()
