"""Ingest on every change: a file watcher (watchfiles: inotify on Linux, FSEvents on macOS) feeds
the paths it reports to incremental runs as a change feed, so each run costs what changed, not
what the collection holds. `ragloom ingest SOURCE... --watch` runs it."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence

from ragloom.errors import ConfigError, RagloomError
from ragloom.ingestion.loaders import describe_spec, spec_root
from ragloom.settings import RagSettings
from ragloom.state import IngestionReport

DEBOUNCE_MS = 500
"""Changes are gathered until none has come for this long, then ingested in one run."""
WAKE_MS = 1000
"""How often the watcher wakes without changes to notice `stop`."""
RETRY_S = 10.0
"""A run that failed is tried again this long after, or with the next batch of changes."""


def watch_roots(specs: Sequence[str]) -> list[str]:
    """The directories to watch for local specs: a directory itself, a glob's fixed part, the
    directory of a file or of a file not yet made (editors replace files by renaming). A URL, or a
    path whose directory does not exist, is a ConfigError: a watcher sees only local files, and
    watching some distant parent of a mistyped path would watch far too much."""
    roots: dict[str, None] = {}
    for spec in specs:
        described = describe_spec(spec)
        if described.kind == "url":
            raise ConfigError("--watch follows local files, not web pages", where=spec,
                              hint="ingest URLs in a run without --watch")
        root = spec_root(described)
        if not os.path.isdir(root):
            root = os.path.dirname(root)
        if not os.path.isdir(root):
            raise ConfigError(f"--watch: no such directory {root}", where=spec,
                              hint="create it first, or check the path")
        roots[root] = None
    return list(roots)


def _own_paths(settings: RagSettings) -> list[str]:
    """What ingesting writes (the data and cache directories): changes there are not the user's."""
    from ragloom.resources import data_paths

    return [str(data_paths(settings).data_dir),
            str(settings.resolved_cache_dir().expanduser().resolve())]


def watch_ingest(
    sources: Sequence[str],
    *,
    settings: RagSettings,
    on_report: Callable[[IngestionReport], None],
    on_error: Callable[[RagloomError], None] | None = None,
    stop: threading.Event | None = None,
) -> None:
    """Ingest sources whole once, then again, fed the changed paths, after every batch of changes
    under them, until `stop` is set (or Ctrl-C). Each run's report goes to `on_report`.

    The watcher starts before the first run, so nothing changed during it is missed; it ignores
    what ingesting itself writes (a data directory inside a watched tree would otherwise start a
    run after every run). With `on_error`, a run that fails with a ragloom error other than a
    ConfigError (another ingest holding the collection, a store error) goes there and the watch
    goes on: what that run owed (its paths, or the whole first run) is tried again after
    `RETRY_S` or with the next batch. A ConfigError, or any error without `on_error`, ends it.
    """
    from watchfiles import DefaultFilter, watch

    from ragloom.runner import ingest

    specs = list(sources)
    changes = watch(*watch_roots(specs), watch_filter=DefaultFilter(ignore_paths=_own_paths(settings)),
                    debounce=DEBOUNCE_MS, rust_timeout=WAKE_MS, yield_on_timeout=True,
                    stop_event=stop, ignore_permission_denied=True)

    def attempt(changed: list[str] | None) -> bool:
        try:
            report = ingest(specs, changed=changed, settings=settings)
        except RagloomError as exc:
            if on_error is None or isinstance(exc, ConfigError):
                raise
            on_error(exc)
            return False
        on_report(report)
        return True

    if next(changes, None) is None:  # stopped already; else the watcher runs from here
        return
    owed: set[str] | None = set() if attempt(None) else None  # None: the whole run is owed
    tried_at = time.monotonic()  # a run that failed is tried again RETRY_S after it
    for batch in changes:
        if owed is not None:
            owed.update(path for _change, path in batch)
        due = (owed is None or bool(owed)) and time.monotonic() - tried_at >= RETRY_S
        if not batch and not due:
            continue
        if attempt(None if owed is None else sorted(owed)):
            owed = set()
        tried_at = time.monotonic()
