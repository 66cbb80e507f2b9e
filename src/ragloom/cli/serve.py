"""`ragloom serve | api-key`: the HTTP service (extra `api`), see ragloom.api."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from ragloom.cli.app import app, err
from ragloom.cli.options import ConfigOpt, DataDirOpt


@app.command()
def serve(
    host: Annotated[Optional[str], typer.Option(help="address to bind (default api.host, 127.0.0.1)")] = None,
    port: Annotated[Optional[int], typer.Option(help="port (default api.port, 8000)")] = None,
    workers: Annotated[Optional[int], typer.Option(help="worker processes (more than one needs --redis-url)")] = None,
    collection: Annotated[Optional[str], typer.Option("--collection", "-c", help="default collection of requests that name none")] = None,
    keys_file: Annotated[Optional[Path], typer.Option("--keys-file", help="hashed API keys (`ragloom api-key`); none = anonymous, loopback only")] = None,
    redis_url: Annotated[Optional[str], typer.Option("--redis-url", help="redis://HOST:PORT/DB for cache, rate limits and metrics across workers")] = None,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Serve /rag/ask, /rag/retrieve, /rag/ingest, /graphql and the chat page over HTTP."""
    from ragloom.api.server import run_server, server_settings  # ConfigError without the extra
    api = {"host": host, "port": port, "workers": workers, "keys_file": keys_file,
           "redis_url": redis_url}
    settings, notes = server_settings(config_file=config, data_dir=data_dir,
                                      collection=collection,
                                      api={k: v for k, v in api.items() if v is not None})
    for note in notes:
        err.print(note, highlight=False)
    run_server(settings)


@app.command("api-key")
def api_key(
    name: Annotated[str, typer.Argument(help="a label for the key (logged; the key never is)")],
    keys_file: Annotated[Path, typer.Option("--keys-file", help="the keys file to add it to")],
    collections: Annotated[str, typer.Option("--collections", help="comma-separated collections it may read, or *")] = "*",
    bu: Annotated[Optional[str], typer.Option("--bu", help="the only business unit it reads and writes")] = None,
    ingest_scope: Annotated[bool, typer.Option("--ingest", help="may also POST /rag/ingest")] = False,
) -> None:
    """Make an API key: prints it once and stores only its SHA-256 in the keys file."""
    from ragloom.api.keys import add_key

    names = [c.strip() for c in collections.split(",") if c.strip()]
    secret = add_key(keys_file, name, collections=names, bu=bu,
                     scopes=["read", "ingest"] if ingest_scope else ["read"])
    print(secret)
    err.print(f"key {name!r} added to {keys_file} (shown once: store it now)", highlight=False)
