"""API keys: a YAML file of hashed keys, each scoped to collections and optionally a business unit.

A key is shown once, when `ragloom api-key` makes it; the file keeps only its SHA-256 (keys are 32
random bytes, so a fast hash is enough and lookups cost microseconds). The file is re-read when it
changes, so keys can be added or revoked without a restart.
"""

from __future__ import annotations

import hashlib
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragloom.api.errors import ServiceError
from ragloom.errors import ConfigError
from ragloom.settings import parse_yaml
from ragloom.stores.manifest import write_atomic

KEY_PREFIX = "rlk_"
ALL = "*"
Scope = Literal["read", "ingest"]


class ApiKey(BaseModel):
    """One entry of the keys file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    hash: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    collections: list[str] = Field(min_length=1, description="readable collections; * = all")
    bu: str | None = Field(None, description="the only business unit this key reads and writes")
    scopes: list[Scope] = Field(default_factory=lambda: list[Scope](["read"]))


class KeysFile(BaseModel):
    """The keys file: `keys: [...]`."""

    model_config = ConfigDict(extra="forbid")

    keys: list[ApiKey] = Field(default_factory=list)


@dataclass(frozen=True)
class Principal:
    """Who is asking: a key's scope, or an anonymous client on a keyless (loopback) server."""

    key: str | None
    collections: frozenset[str] | None
    """None: every collection."""
    bu: str | None
    scopes: frozenset[str]
    client: str

    @property
    def identity(self) -> str:
        """What the rate limit counts: the key, else the client address."""
        return f"key:{self.key}" if self.key else f"ip:{self.client}"

    def can_read(self, collection: str) -> bool:
        """True when this principal may read the collection."""
        return self.collections is None or collection in self.collections

    def readable(self, names: list[str]) -> list[str]:
        """The names among these this principal may read."""
        return [n for n in names if self.can_read(n)]


def hash_key(secret: str) -> str:
    """The stored form of a key."""
    return "sha256:" + hashlib.sha256(secret.encode("utf-8")).hexdigest()


def anonymous(client: str) -> Principal:
    """The principal of a request to a server without keys: reads everything, ingests nothing."""
    return Principal(key=None, collections=None, bu=None, scopes=frozenset({"read"}),
                     client=client)


def read_keys_file(path: Path) -> KeysFile:
    """Parse and validate a keys file; a missing file holds no keys."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return KeysFile()
    except OSError as exc:
        raise ConfigError(f"cannot read the keys file: {exc.strerror}", where=str(path)) from exc
    try:
        return KeysFile.model_validate(parse_yaml(text, path) or {})
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"invalid keys file entry {loc}: {first['msg']}", where=str(path),
                          hint="`ragloom api-key` writes valid entries") from exc


def add_key(path: Path, name: str, *, collections: list[str], bu: str | None = None,
            scopes: list[Scope] | None = None) -> str:
    """Add a key to the keys file (replacing one of the same name) and return its secret."""
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    entry = ApiKey(name=name, hash=hash_key(secret), collections=collections, bu=bu,
                   scopes=scopes or ["read"])
    current = read_keys_file(path)
    keys = [k for k in current.keys if k.name != name] + [entry]
    body = KeysFile(keys=keys).model_dump(mode="json", exclude_none=True)
    write_atomic(path, "# ragloom API keys: SHA-256 hashes only (`ragloom api-key`)\n"
                 + yaml.safe_dump(body, sort_keys=False))
    path.chmod(0o600)
    return secret


class KeyStore:
    """The keys of a keys file, by hash; reloaded when the file changes."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._by_hash: dict[str, ApiKey] = {}
        self._reload()

    @property
    def configured(self) -> bool:
        """True when the server authenticates callers (a keys file is configured)."""
        return self.path is not None

    def _reload(self) -> None:
        if self.path is None:
            return
        try:
            stat = self.path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except FileNotFoundError:
            stamp = (0, 0)
        with self._lock:
            if stamp == self._stamp:
                return
            self._by_hash = {k.hash: k for k in read_keys_file(self.path).keys}
            self._stamp = stamp

    def names(self) -> list[str]:
        """Names of the configured keys."""
        self._reload()
        return sorted(k.name for k in self._by_hash.values())

    def authenticate(self, secret: str | None, client: str) -> Principal:
        """The principal of a request's key; 401 when keys are configured and it has none valid."""
        if self.path is None:
            return anonymous(client)
        self._reload()
        if not secret:
            raise ServiceError(401, "this server needs an API key", where="Authorization",
                               hint="send `Authorization: Bearer <key>` or `X-API-Key: <key>`",
                               headers={"WWW-Authenticate": "Bearer"})
        key = self._by_hash.get(hash_key(secret))
        if key is None:
            raise ServiceError(401, "unknown or revoked API key", where="Authorization",
                               headers={"WWW-Authenticate": "Bearer"})
        collections = None if ALL in key.collections else frozenset(key.collections)
        return Principal(key=key.name, collections=collections, bu=key.bu,
                         scopes=frozenset(key.scopes), client=client)
