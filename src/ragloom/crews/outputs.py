"""Task `output_file`s, written atomically under the crew's output directory and never outside."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragloom.crews.placeholders import PLACEHOLDER, as_text
from ragloom.crews.result import TaskOutput
from ragloom.errors import ConfigError

_UNSAFE = re.compile(r"[^\w .,+=@()-]+|\.\.")


def output_path(output_dir: Path, template: str, inputs: Mapping[str, Any]) -> Path:
    """Where an output_file template lands for these inputs: input values cannot add folders or
    climb out (separators, `..` and other unsafe characters in them become `_`), and the result
    must stay in output_dir."""
    relative = PLACEHOLDER.sub(
        lambda m: _UNSAFE.sub("_", as_text(inputs.get(m.group(1), m.group(0)))), template)
    root = output_dir.resolve()
    path = (root / relative).resolve()
    if path == root or root not in path.parents:
        raise ConfigError(f"output_file {template!r} resolves outside the output directory",
                          where=str(root), hint="use a relative path without '..'")
    return path


def render_output(output: TaskOutput) -> str:
    """The file text of a task output: the text, a label when offline, then its sources."""
    lines = [output.text.rstrip(), ""]
    if output.label:
        lines += [f"_({output.label})_", ""]
    if output.citations:
        lines.append("Sources:")
        for c in output.citations:
            lines.append(f"[{c.marker}] {c.source_id} (chars {c.start}-{c.end})")
    return "\n".join(lines).rstrip() + "\n"
