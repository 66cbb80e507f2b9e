"""JSON-object command-line options (`--filter`, `--inputs-json`), parsed once for every command."""

from __future__ import annotations

import json
from typing import Any

import typer


def json_object_option(raw: str, flag: str) -> dict[str, Any]:
    """The JSON object an option holds, or a usage error naming the option."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"{flag} is not valid JSON: {exc.msg}") from exc
    if not isinstance(value, dict):
        raise typer.BadParameter(f"{flag} must be a JSON object")
    return value
