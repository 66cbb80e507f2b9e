"""What specs expand to: found sources (each file once), errors, skipped files."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from ragloom.ingestion.loaders.sources import FoundSource, SourceRef, to_ref
from ragloom.ingestion.loaders.specs import Spec, within


def display(path: str) -> str:
    r"""A path that can be printed and stored: undecodable bytes shown as `\xNN`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def utf8_name(path: str) -> bool:
    """Whether a path can be stored as UTF-8 (no undecodable bytes in its name)."""
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
        if not utf8_name(source_id):
            self.errors.append((display(source_id), "the file name is not valid UTF-8: rename it"))
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
        return self.scope is None or any(within(source_id, path) for path in self.scope)

    def add_url(self, url: str) -> None:
        """Add one web page."""
        self.found.setdefault(url, (url, url, "url", None, None))

    @property
    def refs(self) -> list[SourceRef]:
        """Every found source as a SourceRef, in the order found."""
        return [to_ref(item) for item in self.found.values()]
