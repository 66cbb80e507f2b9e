"""`ragloom ingest` (also `--watch`) and the report it prints."""

from __future__ import annotations

import sys
from typing import Annotated, Any, Optional

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragloom.cli.app import app, display_source, err, out, setup
from ragloom.cli.options import (
    CollectionOpt,
    ConfigOpt,
    DataDirOpt,
    DebugOpt,
    JsonOpt,
    VerboseOpt,
)
from ragloom.errors import RagloomError
from ragloom.ingestion.chunkers import CHUNKERS
from ragloom.state import IngestionReport, SourceResult

SKIPPED_SHOWN = 20
"""Skipped files listed by name in the ingest summary."""


def _source_notes(result: SourceResult) -> list[str]:
    """What the table's notes say besides errors: flagged documents, a removed old version."""
    notes = []
    if result.suspicious_documents:
        notes.append(f"{result.suspicious_documents} document(s) flagged as suspicious "
                     f"({', '.join(result.signals)})")
    if result.quarantined_documents and result.status != "quarantined":
        notes.append(f"{result.quarantined_documents} document(s) quarantined")
    if result.old_version == "removed":
        notes.append("the version stored before was removed")
    return notes


def _summary(report: IngestionReport, *, list_unchanged: bool) -> None:
    """Print a table of the sources the run changed (unchanged ones too with -v) and the counts."""
    table = Table(title=f"ingest → {report.collection}", show_lines=False)
    for column in ("source", "status", "docs", "chunks", "embedded", "notes"):
        table.add_column(column, overflow="fold")
    styles = {"failed": "red", "quarantined": "yellow", "removed": "magenta", "unchanged": "dim"}
    shown = [s for s in report.sources if list_unchanged or s.status != "unchanged" or s.errors]
    for s in shown:
        notes = "; ".join([*s.errors, *_source_notes(s)]) or (", ".join(s.signals)
                                                              if s.signals else "")
        table.add_row(escape(display_source(s.source_id)),
                      f"[{styles.get(s.status, 'green')}]{s.status}[/]", str(s.documents),
                      str(s.chunks), str(s.embeddings_computed), escape(notes))
    settled = report.unchanged if list_unchanged else []
    for source_id in settled:  # settled from their stat: not read, so no counts
        table.add_row(escape(display_source(source_id)), "[dim]unchanged[/]", "", "", "0", "")
    if shown or settled:
        out.print(table)
    hidden = report.count("unchanged") if not list_unchanged else 0
    counts = ", ".join(f"{n} {st}" for st in ("ingested", "updated", "unchanged", "removed",
                                               "quarantined", "failed")
                       if (n := report.count(st)))
    out.print(f"{counts or 'no sources'}; {report.chunks_written} chunks written, "
              f"{report.embeddings_computed} embeddings computed in {report.total_ms / 1000:.1f} s"
              + ("; collection rebuilt (--reindex)" if report.reindexed else "")
              + ("; -v lists the unchanged sources" if hidden else ""))
    if report.skipped:
        out.print(f"skipped {len(report.skipped)} file(s):", highlight=False)
        for source_id, reason in list(report.skipped.items())[:SKIPPED_SHOWN]:
            out.print(f"  {escape(display_source(source_id))}: {escape(reason)}", highlight=False)
        if len(report.skipped) > SKIPPED_SHOWN:
            out.print(f"  … and {len(report.skipped) - SKIPPED_SHOWN} more (--json lists all)",
                      highlight=False)
    for warning in report.warnings:
        err.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)


@app.command()
def ingest(
    ctx: typer.Context,
    sources: Annotated[list[str], typer.Argument(metavar="SOURCE...",
                                                 help="files, directories, globs or URLs")],
    collection: CollectionOpt = None,
    chunker: Annotated[Optional[str], typer.Option(
        metavar="NAME",
        help=" | ".join(sorted(CHUNKERS)) + " (default: setting chunker.name)")] = None,
    reindex: Annotated[bool, typer.Option("--reindex", metavar="",
                                          help="purge the collection and rebuild it")] = False,
    changed_from: Annotated[Optional[typer.FileText], typer.Option(
        "--changed-from", metavar="FILE",
        help="a change feed: look only at the paths listed in FILE, one per line ('-': stdin), "
             "e.g. `git diff --name-only HEAD~1 | ragloom ingest docs --changed-from -`")] = None,
    watch: Annotated[bool, typer.Option(
        "--watch", metavar="",
        help="ingest, then keep ingesting what changes under the sources until Ctrl-C")] = False,
    as_json: JsonOpt = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = 0,
    debug: DebugOpt = False,
) -> None:
    """Ingest sources incrementally; exit code 1 when any source failed."""
    from ragloom.runner import ingest as run_ingest
    from ragloom.settings import resolve_settings

    setup(ctx, verbose, debug)
    if watch and (reindex or changed_from is not None):
        raise typer.BadParameter("--watch cannot be combined with --reindex or --changed-from")
    settings = resolve_settings(config_file=config, data_dir=data_dir, collection=collection)
    if chunker is not None:
        settings = resolve_settings(settings, chunker={"name": chunker})
    if watch:
        _watch(sources, settings, as_json=as_json, verbose=verbose)
        return
    changed = None if changed_from is None else [line.strip() for line in changed_from
                                                 if line.strip()]
    show_bar = not as_json and sys.stderr.isatty()
    with Progress(TextColumn("ingesting"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err, disable=not show_bar) as bar:
        task = bar.add_task("ingest", total=None)
        report = run_ingest(sources, reindex=reindex, changed=changed, settings=settings,
                            progress=lambda done, total: bar.update(task, completed=done,
                                                                    total=total))
    _print_report(report, as_json=as_json, verbose=verbose)
    if changed == [] and not as_json:
        err.print("[dim]the change feed named no paths: nothing was looked at[/]")
    raise typer.Exit(1 if report.failed else 0)


def _print_report(report: IngestionReport, *, as_json: bool, verbose: int) -> None:
    """Print a run's report: JSON, or the summary table and counts."""
    if as_json:
        print(report.model_dump_json(indent=2), flush=True)
    else:
        _summary(report, list_unchanged=verbose > 0)


def _watch(sources: list[str], settings: Any, *, as_json: bool, verbose: int) -> None:
    """`ingest --watch`: one report per run (JSON: one object per line) until Ctrl-C."""
    from ragloom.watch import RETRY_S, watch_ingest

    def show(report: IngestionReport) -> None:
        if as_json:
            print(report.model_dump_json(), flush=True)
            return
        _summary(report, list_unchanged=verbose > 0)
        err.print("[dim]watching for changes (Ctrl-C stops)…[/]")

    def failed(exc: RagloomError) -> None:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        err.print("[dim]still watching: this run is tried again with the next change or in "
                  f"{RETRY_S:g} s[/]")

    watch_ingest(sources, settings=settings, on_report=show, on_error=failed)

