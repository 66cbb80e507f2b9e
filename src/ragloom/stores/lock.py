"""An exclusive per-collection lock so two ingests never write one collection at once."""

from __future__ import annotations

import contextlib
import fcntl
import time
from collections.abc import Iterator
from pathlib import Path

from ragloom.errors import StoreError


@contextlib.contextmanager
def collection_lock(path: Path, *, timeout_s: float = 30.0) -> Iterator[None]:
    """Hold an exclusive advisory lock on `path`, waiting at most `timeout_s` for it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout_s
    with path.open("a+") as handle:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError as exc:
                if time.monotonic() > deadline:
                    raise StoreError(
                        "another ingest holds this collection",
                        where=str(path),
                        hint="wait for it to finish, then run again",
                    ) from exc
                time.sleep(0.1)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
