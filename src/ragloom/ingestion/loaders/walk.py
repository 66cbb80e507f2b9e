"""Expand specs by listing the disk: directories walked, globs matched, each file once."""

from __future__ import annotations

import operator
import os
from stat import S_ISDIR, S_ISREG

from ragloom.errors import LoadError
from ragloom.ingestion.loaders.expansion import Expansion, display
from ragloom.ingestion.loaders.formats import is_supported, supported_hint, unsupported
from ragloom.ingestion.loaders.globs import glob_split, segment_match
from ragloom.ingestion.loaders.sources import SourceRef
from ragloom.ingestion.loaders.specs import describe_spec

_NAME = operator.attrgetter("name")


def _entries(folder: str, found: Expansion) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as scan:
            return sorted(scan, key=_NAME)
    except OSError as exc:
        found.skipped[display(folder)] = f"cannot list the directory: {exc.strerror}"
        return []


def _stat(entry: os.DirEntry[str], follow: bool, found: Expansion) -> os.stat_result | None:
    """The entry's stat; None (and a skipped note) for links not followed and broken links."""
    if entry.is_symlink() and not follow:
        found.skipped[display(entry.path)] = "symbolic link (set ingest.follow_symlinks to follow)"
        return None
    try:
        return entry.stat(follow_symlinks=follow)
    except OSError as exc:
        found.skipped[display(entry.path)] = f"cannot stat: {exc.strerror}"
        return None


def walk_directory(root: str, found: Expansion, *, follow_symlinks: bool = False) -> None:
    """Add the supported, non-hidden files under root, recursively, to `found`.

    Links are skipped unless `follow_symlinks`; either way each directory is entered once (by
    device + inode, so link loops end) and each file is listed once. Unsupported files are listed
    in `found.skipped`.
    """
    visited = {(st.st_dev, st.st_ino)} if (st := safe_stat(root)) else set()
    stack = [root]
    while stack:
        folder = stack.pop()
        subdirs = []
        for entry in _entries(folder, found):
            if entry.name.startswith("."):
                continue
            stat = _stat(entry, follow_symlinks, found)
            if stat is None:
                continue
            if S_ISDIR(stat.st_mode):
                if (stat.st_dev, stat.st_ino) not in visited:
                    visited.add((stat.st_dev, stat.st_ino))
                    subdirs.append(entry.path)
            elif not S_ISREG(stat.st_mode):
                found.skipped[display(entry.path)] = "not a regular file"
            elif not is_supported(entry.name):
                found.skipped[display(entry.path)] = unsupported(entry.name)
            else:
                found.add_file(entry.path, stat, root)
        stack.extend(reversed(subdirs))


def safe_stat(path: str) -> os.stat_result | None:
    """The path's stat (links followed); None when it cannot be had."""
    try:
        return os.stat(path)
    except OSError:
        return None


def _glob_walk(folder: str, pattern: list[str], found: Expansion, origin: str, follow: bool,
               visited: set[tuple[int, int, int]]) -> int:
    """Add the files under folder matching the glob segments; return how many files matched
    (supported or not). Each (directory, position in the pattern) is visited once."""
    if not pattern:
        return 0
    segment, rest = pattern[0], pattern[1:]
    matched = 0
    if segment == "**":
        matched += _glob_walk(folder, rest, found, origin, follow, visited) if rest else 0
    for entry in _entries(folder, found):
        if segment == "**":
            if entry.name.startswith("."):
                continue
        elif not segment_match(entry.name, segment):
            continue
        stat = _stat(entry, follow, found)
        if stat is None:
            continue
        if S_ISDIR(stat.st_mode):
            key = (stat.st_dev, stat.st_ino, len(pattern))
            if key in visited:
                continue
            visited.add(key)
            if segment == "**":
                matched += _glob_walk(entry.path, pattern, found, origin, follow, visited)
            elif rest:
                matched += _glob_walk(entry.path, rest, found, origin, follow, visited)
        elif S_ISREG(stat.st_mode) and not rest:
            matched += 1
            if is_supported(entry.name):
                found.add_file(entry.path, stat, origin)
            else:
                found.skipped[display(entry.path)] = unsupported(entry.name)
    return matched


def _expand_glob(pattern: str, found: Expansion, *, follow_symlinks: bool = False) -> None:
    """Files matching a glob (`**` recursive, hidden names not matched); directories skipped.

    Walked like a directory (links skipped unless followed, loops ended, each file once).
    """
    base, rest = glob_split(pattern)
    before = len(found.found)
    matched = 0
    if os.path.isdir(base):
        matched = _glob_walk(base, rest, found, pattern, follow_symlinks, set())
    if not matched:
        raise LoadError("no files match this pattern")
    if len(found.found) == before:
        raise LoadError(f"no supported files match this pattern; {supported_hint()}")


def _expand_one(spec: str, found: Expansion, follow_symlinks: bool) -> None:
    described = describe_spec(spec)
    found.specs.append(described)
    path = described.origin
    if described.kind == "url":
        found.add_url(spec)
    elif described.kind == "glob":
        _expand_glob(path, found, follow_symlinks=follow_symlinks)
    elif described.kind == "directory":
        walk_directory(path, found, follow_symlinks=follow_symlinks)
    elif described.kind == "missing":
        raise LoadError("no such file or directory")
    elif not is_supported(path):
        raise LoadError(f"{unsupported(path)}; {supported_hint()}")
    else:
        found.add_file(path, os.stat(path), path)  # path is absolute and normalised


def expand_specs(specs: list[str], *, follow_symlinks: bool = False) -> Expansion:
    """Expand files, directories, globs and URLs into unique refs, errors, skipped files, specs.

    An existing directory with no supported files yields no refs and no error (emptying a
    directory is how its sources are removed on re-ingest); a glob with no match is an error. A
    file name that is not valid UTF-8 is an error of that file only.
    """
    found = Expansion()
    for spec in specs:
        try:
            _expand_one(spec, found, follow_symlinks)
        except LoadError as exc:
            found.errors.append((spec, str(exc)))
    return found


def expand_sources(
    specs: list[str], *, follow_symlinks: bool = False
) -> tuple[list[SourceRef], list[tuple[str, str]]]:
    """Expand specs into unique refs plus (spec, error) pairs (see `expand_specs`)."""
    found = expand_specs(specs, follow_symlinks=follow_symlinks)
    return found.refs, found.errors
