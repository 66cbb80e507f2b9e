"""The options every `ragloom` command spells the same way (the crew commands included).

JSON-object options (`--filter`, `--inputs-json`) are parsed once here for every command.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ragloom.profiles.presets import profile_names

VerboseOpt = Annotated[int, typer.Option(
    "--verbose", "-v", count=True, metavar="", show_default=False,
    help="more detail: -v ragloom notes, -vv debug output")]
DebugOpt = Annotated[bool, typer.Option("--debug", metavar="",
                                        help="show the traceback of an unexpected error")]
DataDirOpt = Annotated[Optional[Path], typer.Option(
    "--data-dir", metavar="DIR",
    help="where all on-disk state lives (default: setting data_dir, env RAGLOOM_DATA_DIR, "
         "else ./.ragloom)")]
ConfigOpt = Annotated[Optional[Path], typer.Option(
    "--config", metavar="FILE",
    help="YAML settings file (default: env RAGLOOM_CONFIG, else ./ragloom.yaml when present)")]
CollectionOpt = Annotated[Optional[str], typer.Option(
    "--collection", "-c", metavar="NAME",
    help="collection (default: setting collection, env RAGLOOM_COLLECTION, else 'default')")]
JsonOpt = Annotated[bool, typer.Option("--json", metavar="", help="print machine-readable JSON")]
ProfileOpt = Annotated[Optional[str], typer.Option(
    "--profile", "-p", metavar="NAME",
    help=f"profile: {' | '.join(profile_names())} (default: setting profile, else balanced)")]
TopNOpt = Annotated[Optional[int], typer.Option("--top-n", "-n", metavar="N", min=1, max=100,
                                                help="passages to keep, 1-100")]
FilterOpt = Annotated[Optional[str], typer.Option(
    "--filter", metavar="JSON", help='metadata filter as JSON, e.g. \'{"source_type": "pdf"}\'')]


def json_object_option(raw: str, flag: str) -> dict[str, Any]:
    """The JSON object an option holds, or a usage error naming the option."""
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"{flag} is not valid JSON: {exc.msg}") from exc
    if not isinstance(value, dict):
        raise typer.BadParameter(f"{flag} must be a JSON object")
    return value
