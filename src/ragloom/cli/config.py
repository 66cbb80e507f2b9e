"""`ragloom config show`: every resolved setting and where its value came from."""

from __future__ import annotations

import json

import typer
from rich.markup import escape
from rich.table import Table

from ragloom.cli.app import config_app, out, setup
from ragloom.cli.options import (
    CollectionOpt,
    ConfigOpt,
    DataDirOpt,
    DebugOpt,
    JsonOpt,
    ProfileOpt,
    VerboseOpt,
)


@config_app.command("show")
def config_show(
    ctx: typer.Context,
    profile: ProfileOpt = None,
    collection: CollectionOpt = None,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    verbose: VerboseOpt = 0,
    debug: DebugOpt = False,
) -> None:
    """Print every resolved setting and where its value came from (default/preset/file/env/flag)."""
    import os

    from ragloom.settings import config_file_path, explain_settings, flatten

    setup(ctx, verbose, debug)
    settings, sources = explain_settings(profile, call_origin="flag", config_file=config,
                                         data_dir=data_dir, collection=collection)
    values = flatten(settings.model_dump(mode="json"))
    file_path = config_file_path(config, os.environ)
    if as_json:
        print(json.dumps({"config_file": str(file_path) if file_path else None,
                          "settings": {k: {"value": v, "source": sources[k]}
                                       for k, v in values.items()}}, indent=2))
        return
    table = Table(title=f"settings (config file: {file_path or 'none'})", show_lines=False)
    for column in ("setting", "value", "source"):
        table.add_column(column, overflow="fold")
    for key, value in values.items():
        source = sources[key]
        style = "dim" if source == "default" else "bold"
        table.add_row(key, escape(json.dumps(value)), f"[{style}]{escape(source)}[/]")
    out.print(table, highlight=False)
