"""Ingest on every change: a file watcher (watchfiles: inotify on Linux, FSEvents on macOS) feeds
the paths it reports to incremental runs as a change feed, so each run costs what changed, not
what the collection holds. `ragloom ingest SOURCE... --watch` runs it."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence

from ragloom.errors import ConfigError
from ragloom.ingestion.loaders import describe_spec, spec_root
from ragloom.settings import RagSettings
from ragloom.state import IngestionReport

DEBOUNCE_MS = 500
"""Changes are gathered until none has come for this long, then ingested in one run."""
WAKE_MS = 1000
"""How often the watcher wakes without changes to notice `stop`."""


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
    stop: threading.Event | None = None,
) -> None:
    """Ingest sources whole once, then again, fed the changed paths, after every batch of changes
    under them, until `stop` is set (or Ctrl-C). Each run's report goes to `on_report`.

    The watcher starts before the first run, so nothing changed during it is missed; it ignores
    what ingesting itself writes (a data directory inside a watched tree would otherwise start a
    run after every run).
    """
    from watchfiles import DefaultFilter, watch

    from ragloom.runner import ingest

    specs = list(sources)
    changes = watch(*watch_roots(specs), watch_filter=DefaultFilter(ignore_paths=_own_paths(settings)),
                    debounce=DEBOUNCE_MS, rust_timeout=WAKE_MS, yield_on_timeout=True,
                    stop_event=stop, ignore_permission_denied=True)
    if next(changes, None) is None:  # stopped already; else the watcher runs from here
        return
    on_report(ingest(specs, settings=settings))
    for batch in changes:
        if batch:
            changed = sorted({path for _change, path in batch})
            on_report(ingest(specs, changed=changed, settings=settings))
