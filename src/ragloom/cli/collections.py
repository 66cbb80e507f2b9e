"""`ragloom collections [show | delete]`: the collections of a data directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from ragloom.cli.app import collections_app, display_source, out, setup
from ragloom.cli.options import ConfigOpt, DataDirOpt, DebugOpt, JsonOpt, VerboseOpt


def _store_settings(data_dir: Path | None, config: Path | None) -> Any:
    """The settings naming the data directory the collection commands work on."""
    from ragloom.settings import resolve_settings

    return resolve_settings(config_file=config, data_dir=data_dir)


@collections_app.callback()
def collections_list(
    ctx: typer.Context,
    as_json: JsonOpt = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = 0,
    debug: DebugOpt = False,
) -> None:
    """List the collections: chunks, sources, embedding profile and last ingest."""
    if ctx.invoked_subcommand is not None:
        return
    from ragloom.collections import list_collections

    setup(ctx, verbose, debug)
    settings = _store_settings(data_dir, config)
    found = list_collections(settings=settings)
    if as_json:
        print(json.dumps([c.model_dump(mode="json") for c in found], indent=2))
        return
    if not found:
        out.print(f"no collections in {escape(str(settings.data_dir))}; create one with "
                  "`ragloom ingest SOURCE -c NAME`", highlight=False)
        return
    table = Table(title=f"collections in {escape(str(settings.data_dir))}")
    for column in ("name", "chunks", "sources", "embedding profile", "last ingest"):
        table.add_column(column, overflow="fold")
    for c in found:
        table.add_row(escape(c.name), str(c.chunks), str(c.sources),
                      escape(c.embedding_profile or "?"), c.last_ingest or "?")
    out.print(table, highlight=False)


CollectionArg = Annotated[str, typer.Argument(metavar="NAME", help="the collection")]


@collections_app.command("show")
def collections_show(
    ctx: typer.Context,
    name: CollectionArg,
    as_json: JsonOpt = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = 0,
    debug: DebugOpt = False,
) -> None:
    """Show a collection: its sources with chunk counts and its quarantined documents."""
    from ragloom.collections import show_collection

    setup(ctx, verbose, debug)
    details = show_collection(name, settings=_store_settings(data_dir, config))
    if as_json:
        print(details.model_dump_json(indent=2))
        return
    c = details.summary
    out.print(f"[bold]{escape(c.name)}[/]: {c.chunks} chunks, {c.sources} sources, embedding "
              f"profile {escape(c.embedding_profile or '?')}, last ingest {c.last_ingest or '?'}",
              highlight=False)
    sources = Table(title="sources")
    for column in ("source", "docs", "chunks", "recorded"):
        sources.add_column(column, overflow="fold")
    for s in details.sources:
        sources.add_row(escape(display_source(s.source_id)), str(s.documents), str(s.chunks),
                        s.recorded_at)
    out.print(sources, highlight=False)
    if details.quarantine:
        held = Table(title="quarantine")
        for column in ("source", "document", "reason", "signals", "when"):
            held.add_column(column, overflow="fold")
        for q in details.quarantine:
            held.add_row(escape(display_source(q.source_id)), escape(q.doc_id), escape(q.reason),
                         escape(", ".join(q.signals)), q.quarantined_at)
        out.print(held, highlight=False)
    else:
        out.print("[dim]no quarantined documents[/]")
    if details.interrupted_batches:
        out.print(f"[yellow]note:[/] {details.interrupted_batches} batch(es) of an interrupted "
                  "ingest; the next ingest re-ingests their sources", highlight=False)
    if details.bm25_stale:
        out.print("[yellow]note:[/] the BM25 index waits for a rebuild (the next ingest or "
                  "query does it)", highlight=False)


@collections_app.command("delete")
def collections_delete(
    ctx: typer.Context,
    name: CollectionArg,
    yes: Annotated[bool, typer.Option("--yes", "-y", metavar="",
                                      help="do not ask for confirmation")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = 0,
    debug: DebugOpt = False,
) -> None:
    """Delete a collection: its vectors, BM25 index, manifest and quarantine (crash-safe)."""
    from ragloom.collections import delete_collection, show_collection
    from ragloom.errors import UnknownCollectionError

    setup(ctx, verbose, debug)
    settings = _store_settings(data_dir, config)
    try:
        summary = show_collection(name, settings=settings).summary
    except UnknownCollectionError:
        summary = None  # an interrupted deletion to finish, or an error delete_collection raises
    if summary is not None and not yes:
        typer.confirm(f"delete collection {name!r} ({summary.chunks} chunks, {summary.sources} "
                      f"sources) from {settings.data_dir}?", abort=True)
    deleted = delete_collection(name, settings=settings)
    if deleted is None:
        out.print(f"finished deleting collection {escape(name)!r}", highlight=False)
    else:
        out.print(f"deleted collection {escape(name)!r} ({deleted.chunks} chunks, "
                  f"{deleted.sources} sources)", highlight=False)
