"""Loaders: expand user specs into sources, read their bytes, parse them into SourceDocuments.

Three steps the ingest graph calls in turn, so each can fail on its own source without stopping
the run: `expand_sources` (paths, directories, globs, URLs → SourceRefs), `read_source` (bytes,
with the size cap enforced before reading) and `parse_source` (integrity check, then the format).
Files are read with the libraries themselves: csv, json, BeautifulSoup, pypdf, httpx.

Documents carry the filterable metadata `lang`, `bu`, `type` and `last_modified` (epoch seconds)
from Markdown front matter (which is taken off the text), CSV columns, HTML `<meta>` tags or the
ingest options (`ingest.metadata`); `last_modified` falls back to the source's modification time and
`lang` to the language detected in the text (`ragloom.language`).
"""

from __future__ import annotations

import contextlib
import csv
import fnmatch
import io
import json
import operator
import os
import re
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path, PurePosixPath
from stat import S_ISDIR, S_ISREG
from typing import Any, Literal

import httpx
import yaml
from pydantic import BaseModel

from ragloom.errors import LoadError, RejectedSourceError
from ragloom.ingestion.chunkers import markdown_headings
from ragloom.ingestion.html_text import html_to_text
from ragloom.ingestion.validation import check_integrity, decode_text
from ragloom.settings import IngestSettings
from ragloom.state import SourceDocument, content_hash

TEXT_SUFFIXES = (".txt", ".md", ".markdown", ".rst")
SUPPORTED_SUFFIXES: tuple[str, ...] = (*TEXT_SUFFIXES, ".csv", ".html", ".htm", ".pdf", ".jsonl")
_SUFFIX_SET = frozenset(SUPPORTED_SUFFIXES)
MAX_REDIRECTS = 5
_GLOB_CHARS = re.compile(r"[*?\[]")
_MEDIA_TYPES = {
    ".txt": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".rst": "text/x-rst",
    ".csv": "text/csv",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
    ".jsonl": "application/jsonl",
}
_SUFFIX_OF_MEDIA = {
    "text/html": ".html",
    "application/xhtml+xml": ".html",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "text/x-markdown": ".md",
    "application/pdf": ".pdf",
    "text/csv": ".csv",
    "application/jsonl": ".jsonl",
    "application/x-ndjson": ".jsonl",
}


class SourceRef(BaseModel):
    """One source to ingest: a file (absolute POSIX path) or a web page (its URL).

    Files carry the size and mtime seen when the spec was expanded: an unchanged stat settles a
    recorded source without reading it.
    """

    source_id: str
    origin: str
    kind: Literal["file", "url"]
    size: int | None = None
    mtime_ns: int | None = None


class RawSource(BaseModel):
    """The bytes of a source, with what is known about them before parsing."""

    ref: SourceRef
    data: bytes
    content_hash: str
    suffix: str
    media_type: str
    modified: str | None = None


def _supported_hint() -> str:
    return f"supported extensions: {', '.join(SUPPORTED_SUFFIXES)}"


def _is_url(spec: str) -> bool:
    return spec.lower().startswith(("http://", "https://"))


def _posix_abs(path: str) -> str:
    return Path(os.path.abspath(os.path.expanduser(path))).as_posix()


def _is_supported(path: str) -> bool:
    """Whether the file name's extension (as `os.path.splitext` reads it) has a loader."""
    name = path[path.rfind("/") + 1:].lstrip(".")
    dot = name.rfind(".")
    return dot > 0 and name[dot:].lower() in _SUFFIX_SET


def _display(path: str) -> str:
    r"""A path that can be printed and stored: undecodable bytes shown as `\xNN`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _unsupported(path: str) -> str:
    """The skip reason of a file no loader reads."""
    return f"unsupported file type {Path(path).suffix or '(none)'!r}"


def _utf8_name(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass
class Expansion:
    """What the specs expanded to: found sources, per-spec or per-file errors, skipped files, the
    specs. Sources stay plain tuples (`FoundSource`) until a caller needs `SourceRef`s: a walk
    over 100k unchanged files builds no models."""

    found: dict[str, FoundSource] = field(default_factory=dict)
    errors: list[tuple[str, str]] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    specs: list[Spec] = field(default_factory=list)
    scope: list[str] | None = None
    """For a change-fed expansion, the paths it looked at (None: the specs were listed whole).
    A recorded source at or under one of them that was not found is gone."""
    _inodes: dict[tuple[int, int], str] = field(default_factory=dict)

    def add_file(self, source_id: str, stat: os.stat_result, origin: str) -> None:
        """Add one regular file found on disk (absolute, normalised path), once per path and once
        per device + inode."""
        if source_id in self.found:
            return
        if not _utf8_name(source_id):
            self.errors.append((_display(source_id), "the file name is not valid UTF-8: rename it"))
            return
        if self.claim(source_id, (stat.st_dev, stat.st_ino)):
            self.found[source_id] = (source_id, origin, "file", stat.st_size, stat.st_mtime_ns)

    def claim(self, source_id: str, inode: tuple[int, int]) -> bool:
        """Record source_id as the path of this device + inode; False, and the path skipped, when
        another path of this expansion already holds it (a hard link, a second way in)."""
        first = self._inodes.setdefault(inode, source_id)
        if first != source_id:
            self.skipped[source_id] = f"same file as {first}"
        return first == source_id

    def inodes(self) -> dict[str, tuple[int, int]]:
        """The device + inode of each found file, by path."""
        return {source_id: inode for inode, source_id in self._inodes.items()}

    def in_scope(self, source_id: str) -> bool:
        """Whether this expansion looked at source_id (always, unless change-fed)."""
        return self.scope is None or any(_within(source_id, path) for path in self.scope)

    def add_url(self, url: str) -> None:
        """Add one web page."""
        self.found.setdefault(url, (url, url, "url", None, None))

    @property
    def refs(self) -> list[SourceRef]:
        """Every found source as a SourceRef, in the order found."""
        return [to_ref(item) for item in self.found.values()]


FoundSource = tuple[str, str, Literal["file", "url"], int | None, int | None]
"""(source_id, origin, kind, size, mtime_ns) of a source found by `expand_specs`."""


def to_ref(item: FoundSource) -> SourceRef:
    """The SourceRef of a found source."""
    source_id, origin, kind, size, mtime_ns = item
    return SourceRef(source_id=source_id, origin=origin, kind=kind, size=size, mtime_ns=mtime_ns)


@dataclass(frozen=True)
class Spec:
    """One spec as given: a file, a directory, a glob or a URL, and which source ids it covers.

    A spec covers every source its expansion would list if the file existed: re-ingesting it
    removes the covered sources that are gone. A path that does not exist covers itself and
    everything below it (a deleted file or directory).
    """

    kind: Literal["file", "directory", "glob", "url", "missing"]
    origin: str

    def covers(self, source_id: str) -> bool:
        """Whether a recorded source belongs to this spec."""
        if self.kind in ("file", "url"):
            return source_id == self.origin
        if self.kind == "missing":
            return source_id == self.origin or source_id.startswith(self.origin.rstrip("/") + "/")
        if self.kind == "directory":
            prefix = self.origin.rstrip("/") + "/"
            if not source_id.startswith(prefix) or not _is_supported(source_id):
                return False
            return not any(part.startswith(".") for part in source_id[len(prefix):].split("/"))
        return _is_supported(source_id) and _glob_match(
            _glob_parts(self.origin), source_id.strip("/").split("/"))


def _glob_parts(pattern: str) -> list[str]:
    return [p for p in pattern.strip("/").split("/") if p]


def _glob_split(pattern: str) -> tuple[str, list[str]]:
    """A glob's fixed directory (before the first wildcard) and its remaining segments."""
    parts = _glob_parts(pattern)
    fixed = next((i for i, p in enumerate(parts) if _GLOB_CHARS.search(p)), len(parts))
    return "/" + "/".join(parts[:fixed]), parts[fixed:]


def _segment_match(name: str, segment: str) -> bool:
    """Glob's rule for one path segment: wildcards never match a leading '.'."""
    if name.startswith(".") and not segment.startswith("."):
        return False
    return fnmatch.fnmatchcase(name, segment)


def _glob_match(pattern: list[str], parts: list[str]) -> bool:
    """Whether path segments match glob segments (`**` = zero or more non-hidden directories)."""
    reachable = {0}
    for part in parts:
        step: set[int] = set()
        for i in _closure(pattern, reachable):
            if i < len(pattern) and pattern[i] == "**" and not part.startswith("."):
                step.add(i)
            elif i < len(pattern) and pattern[i] != "**" and _segment_match(part, pattern[i]):
                step.add(i + 1)
        if not step:
            return False
        reachable = step
    return len(pattern) in _closure(pattern, reachable)


def _closure(pattern: list[str], states: set[int]) -> set[int]:
    """States plus those reached by letting each `**` match zero segments."""
    out, todo = set(states), list(states)
    while todo:
        i = todo.pop()
        if i < len(pattern) and pattern[i] == "**" and i + 1 not in out:
            out.add(i + 1)
            todo.append(i + 1)
    return out


_NAME = operator.attrgetter("name")


def _entries(folder: str, found: Expansion) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as scan:
            return sorted(scan, key=_NAME)
    except OSError as exc:
        found.skipped[_display(folder)] = f"cannot list the directory: {exc.strerror}"
        return []


def _stat(entry: os.DirEntry[str], follow: bool, found: Expansion) -> os.stat_result | None:
    """The entry's stat; None (and a skipped note) for links not followed and broken links."""
    if entry.is_symlink() and not follow:
        found.skipped[_display(entry.path)] = "symbolic link (set ingest.follow_symlinks to follow)"
        return None
    try:
        return entry.stat(follow_symlinks=follow)
    except OSError as exc:
        found.skipped[_display(entry.path)] = f"cannot stat: {exc.strerror}"
        return None


def _walk_directory(root: str, found: Expansion, *, follow_symlinks: bool = False) -> None:
    """Add the supported, non-hidden files under root, recursively, to `found`.

    Links are skipped unless `follow_symlinks`; either way each directory is entered once (by
    device + inode, so link loops end) and each file is listed once. Unsupported files are listed
    in `found.skipped`.
    """
    visited = {(st.st_dev, st.st_ino)} if (st := _safe_stat(root)) else set()
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
                found.skipped[_display(entry.path)] = "not a regular file"
            elif not _is_supported(entry.name):
                found.skipped[_display(entry.path)] = _unsupported(entry.name)
            else:
                found.add_file(entry.path, stat, root)
        stack.extend(reversed(subdirs))


def _safe_stat(path: str) -> os.stat_result | None:
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
        elif not _segment_match(entry.name, segment):
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
            if _is_supported(entry.name):
                found.add_file(entry.path, stat, origin)
            else:
                found.skipped[_display(entry.path)] = _unsupported(entry.name)
    return matched


def _expand_glob(pattern: str, found: Expansion, *, follow_symlinks: bool = False) -> None:
    """Files matching a glob (`**` recursive, hidden names not matched); directories skipped.

    Walked like a directory (links skipped unless followed, loops ended, each file once).
    """
    base, rest = _glob_split(pattern)
    before = len(found.found)
    matched = 0
    if os.path.isdir(base):
        matched = _glob_walk(base, rest, found, pattern, follow_symlinks, set())
    if not matched:
        raise LoadError("no files match this pattern")
    if len(found.found) == before:
        raise LoadError(f"no supported files match this pattern; {_supported_hint()}")


def describe_spec(spec: str) -> Spec:
    """What a spec is (a file, directory, glob, URL or missing path), without listing it."""
    if _is_url(spec):
        return Spec("url", spec)
    if not os.path.exists(os.path.expanduser(spec)) and _GLOB_CHARS.search(spec):
        return Spec("glob", _posix_abs(spec))
    path = _posix_abs(spec)
    if os.path.isdir(path):
        return Spec("directory", path)
    return Spec("file" if os.path.exists(path) else "missing", path)


def spec_origin(spec: str) -> str:
    """The normalised origin of a spec, as `SourceRef.origin` has it (also when nothing matched)."""
    if _is_url(spec):
        return spec
    return _posix_abs(spec)


def _expand_one(spec: str, found: Expansion, follow_symlinks: bool) -> None:
    described = describe_spec(spec)
    found.specs.append(described)
    path = described.origin
    if described.kind == "url":
        found.add_url(spec)
    elif described.kind == "glob":
        _expand_glob(path, found, follow_symlinks=follow_symlinks)
    elif described.kind == "directory":
        _walk_directory(path, found, follow_symlinks=follow_symlinks)
    elif described.kind == "missing":
        raise LoadError("no such file or directory")
    elif not _is_supported(path):
        raise LoadError(f"{_unsupported(path)}; {_supported_hint()}")
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


def spec_root(spec: Spec) -> str:
    """The path a spec lists from (a glob's directory before its first wildcard)."""
    return _glob_split(spec.origin)[0] if spec.kind == "glob" else spec.origin


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _linked_below(root: str, path: str) -> bool:
    """Whether a component of path below root (path itself included) is a symbolic link."""
    while path != root and _within(path, root):
        if os.path.islink(path):
            return True
        path = os.path.dirname(path)
    return False


def _add_changed(path: str, found: Expansion, follow_symlinks: bool) -> None:
    """Add one changed path (a file, or a directory walked) where a spec of the run covers it;
    a path no spec covers or lies under is listed as skipped, whether it exists or not."""
    local = [s for s in found.specs if s.kind != "url"]
    if not any(_within(path, spec_root(s)) or _within(spec_root(s), path) for s in local):
        found.skipped[_display(path)] = "not under any source of this run"
        return
    roots = [spec_root(s) for s in local if s.kind in ("directory", "glob")]
    root = next((r for r in roots if _within(path, r)), None)
    if root is not None and any(p.startswith(".") for p in path[len(root):].split("/")):
        return  # hidden, as a walk never lists it
    if root is not None and not follow_symlinks and _linked_below(root, path):
        found.skipped[_display(path)] = "symbolic link (set ingest.follow_symlinks to follow)"
        return
    stat = _safe_stat(path)
    if stat is None:  # gone: the caller removes what was recorded at or under it
        return
    listed = Expansion()
    if S_ISDIR(stat.st_mode):
        _walk_directory(path, listed, follow_symlinks=follow_symlinks)
    elif not S_ISREG(stat.st_mode):
        listed.skipped[_display(path)] = "not a regular file"
    elif not _is_supported(path):
        listed.skipped[_display(path)] = _unsupported(path)
    else:
        listed.add_file(path, stat, path)
    found.skipped.update(listed.skipped)
    found.errors.extend(listed.errors)
    inodes = listed.inodes()
    for source_id, (_sid, _origin, _kind, size, mtime_ns) in listed.found.items():
        spec = next((s for s in found.specs if s.kind != "url" and s.covers(source_id)), None)
        if spec is None:
            found.skipped[_display(source_id)] = "not under any source of this run"
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
    paths = list(dict.fromkeys(_posix_abs(path) for path in changed))
    for path in paths:
        _add_changed(path, found, follow_symlinks)
    found.scope = [path for path in paths if _utf8_name(path)]  # no other name is ever recorded
    return found


def expand_sources(
    specs: list[str], *, follow_symlinks: bool = False
) -> tuple[list[SourceRef], list[tuple[str, str]]]:
    """Expand specs into unique refs plus (spec, error) pairs (see `expand_specs`)."""
    found = expand_specs(specs, follow_symlinks=follow_symlinks)
    return found.refs, found.errors


def _oversized(where: str, size: int, limit: int) -> RejectedSourceError:
    return RejectedSourceError(
        f"oversized: {size} bytes exceeds the limit of {limit} bytes",
        where=where,
        signals=["oversized"],
    )


def _read_file(ref: SourceRef, settings: IngestSettings) -> RawSource:
    path = Path(ref.source_id)
    try:
        stat = path.stat()
    except FileNotFoundError as exc:
        raise LoadError("no such file or directory", where=ref.source_id) from exc
    except OSError as exc:
        raise LoadError(f"cannot stat: {exc.strerror}", where=ref.source_id) from exc
    if not path.is_file():
        raise LoadError("not a regular file", where=ref.source_id)
    if stat.st_size > settings.max_bytes:
        raise _oversized(ref.source_id, stat.st_size, settings.max_bytes)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise LoadError(f"cannot read: {exc.strerror}", where=ref.source_id) from exc
    suffix = path.suffix.lower()
    return RawSource(
        ref=ref,
        data=data,
        content_hash=content_hash(data),
        suffix=suffix,
        media_type=_MEDIA_TYPES.get(suffix, "application/octet-stream"),
        modified=datetime.fromtimestamp(stat.st_mtime, tz=UTC).isoformat(),
    )


def _url_suffix(url: str, content_type: str) -> str:
    """Format of a web resource: its Content-Type first, the URL's extension second, else HTML."""
    media = content_type.split(";")[0].strip().lower()
    if media in _SUFFIX_OF_MEDIA:
        return _SUFFIX_OF_MEDIA[media]
    url_suffix = PurePosixPath(httpx.URL(url).path).suffix.lower()
    if url_suffix in SUPPORTED_SUFFIXES:
        return url_suffix
    if not media:
        return ".html"
    raise LoadError(f"unsupported content type {media!r}", where=url, hint=_supported_hint())


def _http_modified(headers: httpx.Headers) -> str | None:
    value = headers.get("last-modified")
    if not value:
        return None
    try:
        return parsedate_to_datetime(value).isoformat()
    except (TypeError, ValueError):
        return None


class _Deadline:
    """Shuts the sockets of one fetch down when its overall deadline passes, waking any read.

    httpx bounds each read, not the whole exchange: a server that drips a byte now and then never
    trips the read time-out. The sockets are learned from httpx's trace hook as they connect.
    """

    def __init__(self, seconds: float) -> None:
        self.fired = False
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """Trace hook for httpx: remember each socket as it connects."""
        if not event.endswith("connect_tcp.complete"):
            return
        sock = info["return_value"].get_extra_info("socket")
        with self._lock:
            self._sockets.append(sock)
            if self.fired:
                _shut(sock)

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            for sock in self._sockets:
                _shut(sock)


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


def _stream_body(response: httpx.Response, url: str, limit: int) -> bytes:
    """Read at most limit bytes; one more means the body is oversized."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _oversized(url, int(declared), limit)
    body = bytearray()
    for piece in response.iter_bytes():
        body.extend(piece)
        if len(body) > limit:
            raise _oversized(url, len(body), limit)
    return bytes(body)


def _fetch(url: str, settings: IngestSettings, deadline: _Deadline) -> tuple[httpx.Response, bytes]:
    timeout = httpx.Timeout(settings.http_timeout_s)
    with (
        httpx.Client(timeout=timeout, follow_redirects=True, max_redirects=MAX_REDIRECTS) as client,
        client.stream("GET", url, extensions={"trace": deadline.trace}) as response,
    ):
        if not response.is_success:
            raise LoadError(
                f"HTTP {response.status_code} {response.reason_phrase}".rstrip(), where=url
            )
        return response, _stream_body(response, url, settings.max_bytes)


def _limits(settings: IngestSettings) -> str:
    return (
        f"each read may wait {settings.http_timeout_s:g} s (ingest.http_timeout_s), the whole "
        f"fetch may take {settings.http_deadline_s:g} s (ingest.http_deadline_s)"
    )


def _past_deadline(url: str, settings: IngestSettings) -> LoadError:
    return LoadError(
        f"not received within the deadline of {settings.http_deadline_s:g} s; " + _limits(settings),
        where=url,
        hint="raise ingest.http_deadline_s for a slow server, or try again later",
    )


def _http_error(exc: httpx.HTTPError | httpx.InvalidURL, url: str, settings: IngestSettings) -> LoadError:
    if isinstance(exc, httpx.TimeoutException):
        return LoadError(
            f"timed out after {settings.http_timeout_s:g} s without data ({type(exc).__name__}); "
            + _limits(settings),
            where=url,
            hint="raise ingest.http_timeout_s or try again later",
        )
    if isinstance(exc, httpx.TooManyRedirects):
        return LoadError(f"more than {MAX_REDIRECTS} redirects", where=url)
    return LoadError(f"connection failed: {exc}", where=url)


def _read_url(ref: SourceRef, settings: IngestSettings) -> RawSource:
    url = ref.source_id
    deadline = _Deadline(settings.http_deadline_s)
    try:
        with deadline:
            response, data = _fetch(url, settings, deadline)
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        if deadline.fired:
            raise _past_deadline(url, settings) from exc
        raise _http_error(exc, url, settings) from exc
    if deadline.fired:  # a body without a length ends cleanly when its socket is shut
        raise _past_deadline(url, settings)
    suffix = _url_suffix(url, response.headers.get("content-type", ""))
    return RawSource(
        ref=ref,
        data=data,
        content_hash=content_hash(data),
        suffix=suffix,
        media_type=_MEDIA_TYPES[suffix],
        modified=_http_modified(response.headers),
    )


def read_source(ref: SourceRef, settings: IngestSettings) -> RawSource:
    """Read a source's bytes; oversized ones are rejected before (files) or while (URLs) reading."""
    if ref.kind == "url":
        return _read_url(ref, settings)
    return _read_file(ref, settings)


def _stem(ref: SourceRef) -> str:
    if ref.kind == "url":
        url = httpx.URL(ref.source_id)
        return PurePosixPath(url.path).stem or url.host
    return PurePosixPath(ref.source_id).stem


def _metadata(raw: RawSource, source_type: str, title: str | None, **extra: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {"title": title or _stem(raw.ref), "source_type": source_type}
    if raw.modified:
        meta["modified"] = raw.modified
    meta.update({k: v for k, v in extra.items() if v is not None})
    return meta


METADATA_ALIASES = {
    "lang": "lang", "language": "lang", "locale": "lang", "content-language": "lang",
    "dc.language": "lang", "og:locale": "lang",
    "bu": "bu", "business_unit": "bu", "business-unit": "bu", "businessunit": "bu",
    "type": "type", "doc_type": "type", "doc-type": "type", "document_type": "type",
    "dc.type": "type",
    "last_modified": "last_modified", "last-modified": "last_modified", "modified": "last_modified",
    "updated": "last_modified", "last_updated": "last_modified", "lastmod": "last_modified",
    "date_modified": "last_modified", "dcterms.modified": "last_modified",
    "dc.date.modified": "last_modified", "article:modified_time": "last_modified",
    "og:updated_time": "last_modified", "date": "last_modified",
}
"""Front matter keys, CSV columns and HTML meta names read as the filterable fields `lang`, `bu`,
`type` and `last_modified` (an explicit `last_modified` wins over `date`)."""
RESERVED_KEYS = frozenset({"source_type", "headings", "page_starts", "pages", "row", "rows",
                           "line", "hidden_text", "chunk_index", "section", "page", "suspicious"})
"""Document metadata that front matter may not set (the loaders' and chunkers' own)."""
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?\n)?(?:---|\.\.\.)[ \t]*(?:\n|\Z)", re.DOTALL)


def _field_value(field: str, value: Any) -> Any:
    """A metadata value in its stored form: lang as an ISO 639-1 code, last_modified as epoch
    seconds, lists joined with commas; None when it cannot be stored."""
    from ragloom.language import primary_code
    from ragloom.stores.filters import to_timestamp

    if field == "lang":
        return primary_code(str(value)) if value is not None else None
    if field == "last_modified":
        stamp = to_timestamp(value)
        return int(stamp) if stamp is not None else None
    if isinstance(value, list | tuple):
        items = [str(v) for v in value if isinstance(v, str | int | float | bool)]
        return ", ".join(items) if items else None
    if isinstance(value, date):
        return value.isoformat()
    return value if isinstance(value, str | int | float | bool) else None


def declared_metadata(pairs: dict[str, Any], *, known_only: bool) -> dict[str, Any]:
    """Filterable metadata from a document's own declarations (front matter, CSV columns, HTML
    meta): aliases mapped to `lang`, `bu`, `type`, `last_modified`; other scalar keys kept too
    unless `known_only`."""
    found: dict[str, Any] = {}
    explicit: set[str] = set()
    for key, value in pairs.items():
        name = str(key).strip().lower()
        field = METADATA_ALIASES.get(name)
        if field is None and (known_only or name in RESERVED_KEYS or name.startswith("_")):
            continue
        field = field or name
        stored = _field_value(field, value)
        if stored is None or stored == "" or (field in explicit and name == "date"):
            continue
        found[field] = stored
        if name != "date":
            explicit.add(field)
    return found


def front_matter(text: str, where: str) -> tuple[dict[str, Any], str]:
    """The YAML front matter of a Markdown text as a mapping, and the text after it."""
    match = _FRONT_MATTER.match(text)
    if not match:
        return {}, text
    try:
        data = yaml.safe_load(match.group(1) or "") or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 2}" if mark is not None else ""
        raise LoadError(f"invalid YAML front matter{line}: {getattr(exc, 'problem', exc)}",
                        where=where, hint="fix the block between the --- lines") from exc
    if not isinstance(data, dict):
        return {}, text
    return data, text[match.end():]


def _with_metadata(doc: SourceDocument, raw: RawSource, settings: IngestSettings,
                   cache_dir: Path | None) -> SourceDocument:
    """The document with the ingest options' metadata under its own, `last_modified` (else the
    source's modification time) in epoch seconds and its language detected when not declared."""
    meta = {**declared_metadata(dict(settings.metadata), known_only=False), **doc.metadata}
    if "last_modified" not in meta and raw.modified:
        meta["last_modified"] = _field_value("last_modified", raw.modified)
    if "lang" in meta:
        meta["lang"] = _field_value("lang", meta["lang"])
    if not meta.get("lang") and settings.detect_language:
        from ragloom.language import detect_language

        meta["lang"] = detect_language(doc.text, settings.languages, cache_dir)
    return doc.model_copy(update={"metadata": {k: v for k, v in meta.items() if v is not None}})


def _decode(raw: RawSource) -> str:
    r"""The text (UTF-8, or UTF-16/32 marked by a BOM; BOM dropped) with newlines as `\n`."""
    text = decode_text(raw.data)
    return text.replace("\r\n", "\n").replace("\r", "\n")


_RST_TITLE = re.compile(r"^(?:[=\-~^*#]{3,}\n)?([^\n]+)\n[=\-~^*#]{3,}$", re.MULTILINE)


def _text_title(text: str, suffix: str) -> str | None:
    if suffix == ".rst":
        match = _RST_TITLE.search(text)
        return match.group(1).strip() if match else None
    headings = markdown_headings(text)
    return headings[0].title if headings else None


def _parse_text(raw: RawSource, settings: IngestSettings) -> list[SourceDocument]:
    text = _decode(raw)
    source_type = {".md": "markdown", ".markdown": "markdown", ".rst": "rst"}.get(
        raw.suffix, "text"
    )
    declared: dict[str, Any] = {}
    if source_type == "markdown":
        declared, text = front_matter(text, raw.ref.source_id)
    title = declared.pop("title", None)
    meta = _metadata(raw, source_type, str(title) if title else _text_title(text, raw.suffix),
                     **declared_metadata(declared, known_only=False))
    if raw.suffix == ".rst":
        meta["headings"] = []
    sid = raw.ref.source_id
    return [SourceDocument(doc_id=sid, source_id=sid, text=text, metadata=meta)]


def _csv_rows(text: str, where: str) -> Iterator[tuple[int, list[str], list[str]]]:
    """Yield (row number, header, row) for each non-empty data row; malformed CSV names its line."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip() for h in next(reader, [])]
        number = 0
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) > len(header):
                raise LoadError(
                    f"malformed CSV at line {reader.line_num}: {len(row)} fields, "
                    f"the header has {len(header)}",
                    where=where,
                )
            number += 1
            yield number, header, row
    except csv.Error as exc:
        raise LoadError(f"malformed CSV at line {reader.line_num}: {exc}", where=where) from exc


def _row_text(header: list[str], row: list[str]) -> str:
    lines = []
    for i, value in enumerate(row):
        name = header[i] if i < len(header) and header[i] else f"column {i + 1}"
        if value.strip():
            lines.append(f"{name}: {value.strip()}")
    return "\n".join(lines)


def _parse_csv(raw: RawSource, settings: IngestSettings) -> list[SourceDocument]:
    text = _decode(raw)
    sid = raw.ref.source_id
    rows = list(_csv_rows(text, sid))
    if settings.csv_mode == "file":
        meta = _metadata(raw, "csv", None, rows=len(rows), headings=[])
        return [SourceDocument(doc_id=sid, source_id=sid, text=text, metadata=meta)]
    stem = _stem(raw.ref)
    return [
        SourceDocument(
            doc_id=f"{sid}#row={n}",
            source_id=sid,
            text=_row_text(header, row),
            metadata=_metadata(raw, "csv", f"{stem}: {row[0].strip()}", row=n, headings=[],
                               **declared_metadata(dict(zip(header, row, strict=False)), known_only=True)),
        )
        for n, header, row in rows
    ]


def _parse_html(raw: RawSource, settings: IngestSettings) -> list[SourceDocument]:
    sid = raw.ref.source_id
    text, found = html_to_text(_decode(raw), max_depth=settings.html_max_depth, where=sid)
    declared = declared_metadata(found["meta"], known_only=True)
    meta = _metadata(raw, "html", found["title"], **{**declared, "lang": found["lang"] or
                                                     declared.get("lang")})
    if found["hidden_text"]:
        meta["hidden_text"] = found["hidden_text"]
    return [SourceDocument(doc_id=sid, source_id=sid, text=text, metadata=meta)]


def _pdf_pages(raw: RawSource) -> tuple[list[str], str | None]:
    """Page texts and the title of a PDF; corrupt or encrypted files raise LoadError."""
    from pypdf import PdfReader

    sid = raw.ref.source_id
    try:
        reader = PdfReader(io.BytesIO(raw.data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoadError("encrypted PDF", where=sid, hint="remove the password and ingest again")
        pages = [(page.extract_text() or "").strip() for page in reader.pages]
        title = reader.metadata.title if reader.metadata else None
    except LoadError:
        raise
    except Exception as exc:  # pypdf raises many types on damaged input
        raise LoadError(f"cannot read PDF ({type(exc).__name__}: {exc})", where=sid) from exc
    return pages, (str(title).strip() or None) if title else None


def _parse_pdf(raw: RawSource, settings: IngestSettings) -> list[SourceDocument]:
    pages, title = _pdf_pages(raw)
    if not any(pages):
        raise LoadError(
            "the PDF has no extractable text",
            where=raw.ref.source_id,
            hint="scanned PDFs need OCR first",
        )
    starts, offset = [], 0
    for page in pages:
        starts.append(offset)
        offset += len(page) + 2
    meta = _metadata(raw, "pdf", title, pages=len(pages), page_starts=starts, headings=[])
    sid = raw.ref.source_id
    return [SourceDocument(doc_id=sid, source_id=sid, text="\n\n".join(pages), metadata=meta)]


def _jsonl_doc(raw: RawSource, line_no: int, line: str) -> SourceDocument:
    sid = raw.ref.source_id
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise LoadError(f"invalid JSON at line {line_no}: {exc.msg}", where=sid) from exc
    if not isinstance(obj, dict) or "_id" not in obj or not isinstance(obj.get("text", ""), str):
        raise LoadError(
            f"line {line_no} is not a BEIR corpus record",
            where=sid,
            hint='expected {"_id", "title", "text"}',
        )
    title = str(obj.get("title") or "").strip()
    body = obj.get("text") or ""
    text = f"{title}\n\n{body}" if title else body
    meta = _metadata(raw, "jsonl", title or str(obj["_id"]), line=line_no, headings=[])
    return SourceDocument(doc_id=f"{sid}#{obj['_id']}", source_id=sid, text=text, metadata=meta)


def _parse_jsonl(raw: RawSource, settings: IngestSettings) -> list[SourceDocument]:
    lines = _decode(raw).split("\n")
    return [_jsonl_doc(raw, n, line) for n, line in enumerate(lines, start=1) if line.strip()]


Parser = Callable[[RawSource, IngestSettings], list[SourceDocument]]
PARSERS: dict[str, Parser] = {
    **{suffix: _parse_text for suffix in TEXT_SUFFIXES},
    ".csv": _parse_csv,
    ".html": _parse_html,
    ".htm": _parse_html,
    ".pdf": _parse_pdf,
    ".jsonl": _parse_jsonl,
}


def parse_source(raw: RawSource, settings: IngestSettings,
                 cache_dir: Path | None = None) -> list[SourceDocument]:
    """Check a source's bytes, then parse them into documents by format (`cache_dir`: where the
    language detector's inflated model is cached, as on the query path; None reads the bundled
    copy, 0.4 s per process)."""
    check = check_integrity(raw.data, max_bytes=settings.max_bytes, binary_ok=raw.suffix == ".pdf")
    if check.status == "rejected":
        raise RejectedSourceError(
            check.reason,
            where=raw.ref.source_id,
            signals=check.signals,
            content_hash=raw.content_hash,
        )
    parser = PARSERS.get(raw.suffix)
    if parser is None:
        raise LoadError(
            f"unsupported file type {raw.suffix!r}", where=raw.ref.source_id, hint=_supported_hint()
        )
    return [_with_metadata(doc, raw, settings, cache_dir) for doc in parser(raw, settings)]
