"""`{placeholder}` interpolation from a run's inputs, as CrewAI does it.

Only `{name}` with a name of letters, digits, `_` and `-` (not starting with a digit) is a
placeholder, so JSON examples and other braces in a description are left alone; the value is
substituted as text (JSON for lists and mappings). A placeholder without an input is an error that
names it and where it is used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ragloom.errors import ConfigError

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_\-]*)\}")


def placeholders(text: str | None) -> list[str]:
    """The placeholder names in text, in order of first use."""
    return list(dict.fromkeys(PLACEHOLDER.findall(text or "")))


def as_text(value: Any) -> str:
    """An input value as it is written into a prompt."""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def missing_inputs(needed: Mapping[str, list[str]],
                   inputs: Mapping[str, Any]) -> ConfigError | None:
    """The error for the placeholders inputs leave unfilled, or None when every one is given."""
    missing = [name for name in needed if name not in inputs]
    if not missing:
        return None
    first = missing[0]
    used = ", ".join(needed[first][:3])
    names = ", ".join(repr(n) for n in missing)
    example = " ".join(f"--input {n}=..." for n in missing)
    return ConfigError(f"missing crew input(s) {names}: {first!r} is used in {used}",
                       where="inputs", hint=f"pass {example} (Python: inputs={{...}})")


def interpolate(text: str | None, inputs: Mapping[str, Any]) -> str:
    """The text with every placeholder replaced by its input (callers check `missing_inputs` first)."""
    if not text:
        return ""
    return PLACEHOLDER.sub(
        lambda m: as_text(inputs[m.group(1)]) if m.group(1) in inputs else m.group(0), text)
