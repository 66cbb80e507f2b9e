"""Glob patterns over POSIX paths: `**` for any depth, wildcards never match hidden names."""

from __future__ import annotations

import fnmatch
import re

GLOB_CHARS = re.compile(r"[*?\[]")


def glob_parts(pattern: str) -> list[str]:
    """The non-empty segments of a glob pattern."""
    return [p for p in pattern.strip("/").split("/") if p]


def glob_split(pattern: str) -> tuple[str, list[str]]:
    """A glob's fixed directory (before the first wildcard) and its remaining segments."""
    parts = glob_parts(pattern)
    fixed = next((i for i, p in enumerate(parts) if GLOB_CHARS.search(p)), len(parts))
    return "/" + "/".join(parts[:fixed]), parts[fixed:]


def segment_match(name: str, segment: str) -> bool:
    """Glob's rule for one path segment: wildcards never match a leading '.'."""
    if name.startswith(".") and not segment.startswith("."):
        return False
    return fnmatch.fnmatchcase(name, segment)


def glob_match(pattern: list[str], parts: list[str]) -> bool:
    """Whether path segments match glob segments (`**` = zero or more non-hidden directories)."""
    reachable = {0}
    for part in parts:
        step: set[int] = set()
        for i in _closure(pattern, reachable):
            if i < len(pattern) and pattern[i] == "**" and not part.startswith("."):
                step.add(i)
            elif i < len(pattern) and pattern[i] != "**" and segment_match(part, pattern[i]):
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
