"""Source specs as given (file, directory, glob, URL, missing path) and which sources they cover."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ragloom.ingestion.loaders.formats import is_supported
from ragloom.ingestion.loaders.globs import GLOB_CHARS, glob_match, glob_parts, glob_split


def is_url(spec: str) -> bool:
    """Whether a spec is a web page (http or https)."""
    return spec.lower().startswith(("http://", "https://"))


def posix_abs(path: str) -> str:
    """The absolute POSIX form of a path (`~` expanded, `..` resolved, links kept)."""
    return Path(os.path.abspath(os.path.expanduser(path))).as_posix()


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
            if not source_id.startswith(prefix) or not is_supported(source_id):
                return False
            return not any(part.startswith(".") for part in source_id[len(prefix):].split("/"))
        return is_supported(source_id) and glob_match(
            glob_parts(self.origin), source_id.strip("/").split("/"))


def describe_spec(spec: str) -> Spec:
    """What a spec is (a file, directory, glob, URL or missing path), without listing it."""
    if is_url(spec):
        return Spec("url", spec)
    if not os.path.exists(os.path.expanduser(spec)) and GLOB_CHARS.search(spec):
        return Spec("glob", posix_abs(spec))
    path = posix_abs(spec)
    if os.path.isdir(path):
        return Spec("directory", path)
    return Spec("file" if os.path.exists(path) else "missing", path)


def spec_origin(spec: str) -> str:
    """The normalised origin of a spec, as `SourceRef.origin` has it (also when nothing matched)."""
    if is_url(spec):
        return spec
    return posix_abs(spec)


def spec_root(spec: Spec) -> str:
    """The path a spec lists from (a glob's directory before its first wildcard)."""
    return glob_split(spec.origin)[0] if spec.kind == "glob" else spec.origin


def within(path: str, root: str) -> bool:
    """Whether path is root or lies under it."""
    return path == root or path.startswith(root.rstrip("/") + "/")
