"""Expand only the paths a change feed reported, under the run's specs."""

from __future__ import annotations

import os
from stat import S_ISDIR, S_ISREG

from ragloom.ingestion.loaders.expansion import Expansion, display, utf8_name
from ragloom.ingestion.loaders.formats import is_supported, unsupported
from ragloom.ingestion.loaders.specs import describe_spec, posix_abs, spec_root, within
from ragloom.ingestion.loaders.walk import safe_stat, walk_directory


def _linked_below(root: str, path: str) -> bool:
    """Whether a component of path below root (path itself included) is a symbolic link."""
    while path != root and within(path, root):
        if os.path.islink(path):
            return True
        path = os.path.dirname(path)
    return False


def _add_changed(path: str, found: Expansion, follow_symlinks: bool) -> None:
    """Add one changed path (a file, or a directory walked) where a spec of the run covers it;
    a path no spec covers or lies under is listed as skipped, whether it exists or not."""
    local = [s for s in found.specs if s.kind != "url"]
    if not any(within(path, spec_root(s)) or within(spec_root(s), path) for s in local):
        found.skipped[display(path)] = "not under any source of this run"
        return
    roots = [spec_root(s) for s in local if s.kind in ("directory", "glob")]
    root = next((r for r in roots if within(path, r)), None)
    if root is not None and any(p.startswith(".") for p in path[len(root):].split("/")):
        return  # hidden, as a walk never lists it
    if root is not None and not follow_symlinks and _linked_below(root, path):
        found.skipped[display(path)] = "symbolic link (set ingest.follow_symlinks to follow)"
        return
    stat = safe_stat(path)
    if stat is None:  # gone: the caller removes what was recorded at or under it
        return
    listed = Expansion()
    if S_ISDIR(stat.st_mode):
        walk_directory(path, listed, follow_symlinks=follow_symlinks)
    elif not S_ISREG(stat.st_mode):
        listed.skipped[display(path)] = "not a regular file"
    elif not is_supported(path):
        listed.skipped[display(path)] = unsupported(path)
    else:
        listed.add_file(path, stat, path)
    found.skipped.update(listed.skipped)
    found.errors.extend(listed.errors)
    inodes = listed.inodes()
    for source_id, (_sid, _origin, _kind, size, mtime_ns) in listed.found.items():
        spec = next((s for s in found.specs if s.kind != "url" and s.covers(source_id)), None)
        if spec is None:
            found.skipped[display(source_id)] = "not under any source of this run"
        elif found.claim(source_id, inodes[source_id]):  # not a hard link fed by another path
            found.found[source_id] = (source_id, spec.origin, "file", size, mtime_ns)


def expand_changed(specs: list[str], changed: list[str], *,
                   follow_symlinks: bool = False) -> Expansion:
    """Expand only the paths a change feed reported (edited, created or deleted files, or
    directories), under the run's specs; nothing else is listed or stat'ed.

    The caller trusts the feed: a source it does not name is left as recorded. URL specs are
    neither fetched nor removed. The walk's rules hold (hidden names, links, supported types).
    """
    found = Expansion(specs=[describe_spec(spec) for spec in specs])
    found.errors = [(spec, "no such file or directory")
                    for spec, d in zip(specs, found.specs, strict=True) if d.kind == "missing"]
    for spec in found.specs:
        if spec.kind == "url":
            found.skipped[spec.origin] = ("a web page: not fetched in a change-fed run "
                                          "(ingest it without a feed)")
    paths = list(dict.fromkeys(posix_abs(path) for path in changed))
    for path in paths:
        _add_changed(path, found, follow_symlinks)
    found.scope = [path for path in paths if utf8_name(path)]  # no other name is ever recorded
    return found
