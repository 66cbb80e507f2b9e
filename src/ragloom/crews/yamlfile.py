"""Read crew YAML safely and remember where every key and item sits (file:line:field).

`yaml.safe_load` builds the data (no tags, no dotted-path imports); the composed node tree of the
same text gives the line of every mapping key and sequence item, following anchors, aliases and
`<<` merge keys, and the mapping keys that appear twice (which `safe_load` silently resolves to
the last one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ragloom.errors import ConfigError
from ragloom.settings import parse_yaml

Loc = tuple[str | int, ...]
MAX_DEPTH = 64
"""Nesting followed when mapping lines (recursive anchors would go on forever)."""


def display_path(path: Path) -> str:
    """A path shown relative to the working directory when it lies below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class Spot:
    """Where something is: file, line (1-based, when known) and field."""

    file: Path
    line: int | None
    field: str = ""

    def __str__(self) -> str:
        """The location as `file:line:field`, the parts that are known."""
        parts = [display_path(self.file)]
        if self.line is not None:
            parts.append(str(self.line))
        if self.field:
            parts.append(self.field)
        return ":".join(parts)


@dataclass
class YamlDoc:
    """A parsed YAML file: its data, the line of each key or item, and repeated keys."""

    path: Path
    data: Any
    lines: dict[Loc, int] = field(default_factory=dict)
    duplicates: list[tuple[Loc, int]] = field(default_factory=list)

    def line(self, loc: Loc) -> int | None:
        """Line of loc, or of its nearest ancestor that is in the file (None: the top)."""
        for end in range(len(loc), 0, -1):
            found = self.lines.get(tuple(loc[:end]))
            if found is not None:
                return found
        return None


def _key(node: yaml.Node) -> str:
    return str(node.value) if isinstance(node, yaml.ScalarNode) else f"<{node.tag}>"


def _pairs(node: yaml.MappingNode, loc: Loc, doc: YamlDoc,
           depth: int) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    """The pairs of a mapping by key, as `safe_load` resolves them: a repeated key keeps its last
    value (recorded as a duplicate), `<<` merges fill in only the keys not written explicitly."""
    pairs: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    merges: list[yaml.Node] = []
    for key_node, value in node.value:
        key = _key(key_node)
        if key == "<<":
            merges.extend(value.value if isinstance(value, yaml.SequenceNode) else [value])
            continue
        if key in pairs:
            doc.duplicates.append(((*loc, key), key_node.start_mark.line + 1))
        pairs[key] = (key_node, value)
    for source in merges:
        if isinstance(source, yaml.MappingNode) and depth <= MAX_DEPTH:
            for key, pair in _pairs(source, loc, YamlDoc(doc.path, None), depth + 1).items():
                pairs.setdefault(key, pair)
    return pairs


def _walk(node: yaml.Node, loc: Loc, doc: YamlDoc, depth: int) -> None:
    if depth > MAX_DEPTH:
        return
    if isinstance(node, yaml.MappingNode):
        for key, (key_node, value) in _pairs(node, loc, doc, depth).items():
            here = (*loc, key)
            doc.lines[here] = key_node.start_mark.line + 1
            _walk(value, here, doc, depth + 1)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            here = (*loc, index)
            doc.lines[here] = item.start_mark.line + 1
            _walk(item, here, doc, depth + 1)


def read_yaml(path: Path) -> YamlDoc:
    """Parse a YAML file safely; errors name the file and line."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError(f"cannot read crew file: {exc.strerror}", where=display_path(path),
                          hint="check the path") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError("the crew file is not UTF-8 text", where=display_path(path)) from exc
    data = parse_yaml(text, path)
    doc = YamlDoc(path=path, data=data)
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if root is not None:
        _walk(root, (), doc, 0)
    return doc
