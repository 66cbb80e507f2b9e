"""Command line: `ragloom ingest | ask | search | collections | eval | config | crew | serve`.

Also `ragloom api-key`.

No traceback reaches a user: a ragloom error prints its one-line message (exit 2), anything
unexpected one line that points to `--debug`, which shows the traceback. `-v` shows ragloom's
notes (degradations, fallbacks), `-vv` every library's debug output too.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from typer.core import TyperGroup

from ragloom import __version__
from ragloom.cli.options import (
    CollectionOpt,
    ConfigOpt,
    DataDirOpt,
    DebugOpt,
    FilterOpt,
    JsonOpt,
    ProfileOpt,
    TopNOpt,
    VerboseOpt,
    json_object_option,
)
from ragloom.errors import RagloomError
from ragloom.ingestion.chunkers import CHUNKERS
from ragloom.profiles.presets import profile_names
from ragloom.state import IngestionReport, RagAnswer, SourceResult

DEBUG_KEY = "ragloom.debug"
out = Console()
err = Console(stderr=True)


class _ErrorBoundary(TyperGroup):
    """Turn every failure of a command into one line on stderr, unless --debug was given."""

    def invoke(self, ctx: Any) -> Any:
        """Run the command; ragloom errors exit 2, unexpected ones 1, interrupts 130."""
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):  # usage errors, exits: Typer's
            raise
        except KeyboardInterrupt:
            err.print("interrupted", highlight=False)
            raise typer.Exit(130) from None
        except RagloomError as exc:
            if ctx.meta.get(DEBUG_KEY):
                raise
            err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(2) from None
        except Exception as exc:
            if ctx.meta.get(DEBUG_KEY):
                raise
            first = (str(exc).splitlines() or [""])[0][:300]
            err.print(f"[bold red]error:[/] unexpected {type(exc).__name__}: {escape(first)}",
                      highlight=False)
            err.print("run the command again with --debug to see the traceback, and please "
                      "report it", highlight=False)
            raise typer.Exit(1) from None


app = typer.Typer(cls=_ErrorBoundary, add_completion=False, no_args_is_help=True,
                  rich_markup_mode=None, pretty_exceptions_enable=False,
                  help="ragloom: LangGraph-native retrieval-augmented generation.")
config_app = typer.Typer(cls=_ErrorBoundary, no_args_is_help=True, rich_markup_mode=None,
                         help="Inspect the resolved settings.")
app.add_typer(config_app, name="config")
collections_app = typer.Typer(cls=_ErrorBoundary, invoke_without_command=True,
                              rich_markup_mode=None,
                              help="List, inspect and delete the collections of a data directory.")
app.add_typer(collections_app, name="collections")


class _StderrHandler(logging.StreamHandler):
    """Log to whatever sys.stderr is at the time (the CLI test runner swaps it)."""

    def emit(self, record: logging.LogRecord) -> None:
        """Write the record to the current stderr."""
        self.stream = sys.stderr
        super().emit(record)


class _Detail(logging.Filter):
    """At -v: ragloom's notes from INFO up, other libraries' only from WARNING up."""

    def filter(self, record: logging.LogRecord) -> bool:
        """True when the record is shown."""
        return record.name.split(".")[0] == "ragloom" or record.levelno >= logging.WARNING


def _configure_logging(verbose: int) -> None:
    """Errors only by default; -v adds ragloom's notes, -vv everything down to DEBUG."""
    root = logging.getLogger()
    handler = next((h for h in root.handlers if isinstance(h, _StderrHandler)), None)
    if handler is None:
        handler = _StderrHandler()
        handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    level = {0: logging.ERROR, 1: logging.INFO}.get(verbose, logging.DEBUG)
    handler.setLevel(level)  # the handler's level, as some libraries set DEBUG on their loggers
    for existing in list(handler.filters):
        handler.removeFilter(existing)
    if verbose == 1:
        handler.addFilter(_Detail())
    logging.getLogger("ragloom").setLevel(logging.INFO if verbose == 1 else logging.NOTSET)
    if verbose >= 2:
        root.setLevel(logging.DEBUG)


def _setup(ctx: typer.Context, verbose: int, debug: bool) -> None:
    """Apply -v / --debug given after a command (they may also come before it)."""
    if debug:
        ctx.meta[DEBUG_KEY] = True
    if verbose:
        _configure_logging(verbose)


def _version(value: bool) -> None:
    if value:
        print(f"ragloom {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          metavar="", help="print the version and exit")] = False,
    verbose: VerboseOpt = 0,
    debug: DebugOpt = False,
) -> None:
    """ragloom: LangGraph-native retrieval-augmented generation."""
    ctx.meta[DEBUG_KEY] = debug
    _configure_logging(verbose)


def _display(source_id: str) -> str:
    """A source id shown relative to the working directory when it lies below it."""
    try:
        return str(Path(source_id).relative_to(Path.cwd()))
    except ValueError:
        return source_id


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
        table.add_row(escape(_display(s.source_id)),
                      f"[{styles.get(s.status, 'green')}]{s.status}[/]", str(s.documents),
                      str(s.chunks), str(s.embeddings_computed), escape(notes))
    settled = report.unchanged if list_unchanged else []
    for source_id in settled:  # settled from their stat: not read, so no counts
        table.add_row(escape(_display(source_id)), "[dim]unchanged[/]", "", "", "0", "")
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
            out.print(f"  {escape(_display(source_id))}: {escape(reason)}", highlight=False)
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

    _setup(ctx, verbose, debug)
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




def _warnings(result: RagAnswer) -> list[str]:
    """The warnings an answer needs: unsupported by its passages, or best-effort."""
    warnings: list[str] = []
    for verdict in result.verdicts:
        if verdict.verdict == "ungrounded":
            score = f" {verdict.score:.2f}" if verdict.score is not None else ""
            warnings.append(f"this answer is not supported by the passages it cites "
                            f"({verdict.stage}{score}: {verdict.reason}); do not take it as fact")
    if result.best_effort and not warnings:
        reasons = [str(s.detail["fallback"]) for s in result.trace if s.detail.get("fallback")]
        warnings.append("best-effort answer (" + ("; ".join(reasons) if reasons
                                                  else "loop budget or circuit breaker hit") + ")")
    return warnings


def _print_warnings(warnings: list[str]) -> None:
    for warning in warnings:
        out.print(f"[bold yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)


def _print_sources(result: RagAnswer) -> None:
    if not result.citations:
        out.print("[dim]no sources[/]")
    else:
        out.print("[bold]Sources[/]")
    for c in result.citations:
        where = _display(c.source_id)
        if c.metadata.get("page"):
            where += f" p.{c.metadata['page']}"
        flag = " [yellow](flagged: possible prompt injection)[/]" if c.metadata.get("suspicious") else ""
        out.print(f"[{c.marker}] {where}  chars {c.start}-{c.end}  "
                  f"score {c.score:.3f} ({c.score_origin}){flag}", highlight=False)
        snippet = " ".join(c.snippet.split())
        out.print(f"    [dim]{snippet[:160]}…[/]", highlight=False)


def _print_answer(result: RagAnswer, *, show_text: bool) -> None:
    warnings = _warnings(result)
    if show_text:
        _print_warnings(warnings)
        out.print(result.text or "(no answer)", highlight=False)
        out.print()
    _print_sources(result)
    if not show_text:
        for warning in warnings:
            err.print(f"[yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)


def _stream_answer(question: str, *, top_n: int | None, filters: dict[str, Any] | None,
                   settings: Any) -> None:
    """Print the answer text as it is written, then its warnings and sources as `ask` does."""
    from ragloom.runner import stream as run_stream

    written: list[str] = []
    result: RagAnswer | None = None
    for event in run_stream(question, top_n=top_n, filters=filters, settings=settings):
        if event.kind == "text":
            written.append(event.text)
            out.print(event.text, end="", highlight=False, markup=False, soft_wrap=True)
            out.file.flush()
        elif event.kind == "answer":
            result = event.answer
    assert result is not None, "a stream always ends with the answer"
    if not written:
        out.print(result.text or "(no answer)", highlight=False, markup=False, end="")
    elif " ".join("".join(written).split()) != " ".join(result.text.split()):
        out.print()
        out.print("[dim]checked answer:[/]", highlight=False)
        out.print(result.text or "(no answer)", highlight=False, markup=False, end="")
    out.print()
    _print_warnings(_warnings(result))
    out.print()
    _print_sources(result)


def _query(question: str, *, retrieval_only: bool, collection: str | None, profile: str | None,
           top_n: int | None, filters: str | None, data_dir: Path | None,
           config: Path | None, as_json: bool, streaming: bool = False) -> None:
    """Run the answer or retrieval-only graph and print its result."""
    from ragloom.runner import ask as run_ask
    from ragloom.runner import retrieve as run_retrieve
    from ragloom.settings import resolve_settings

    run = run_retrieve if retrieval_only else run_ask
    parsed = json_object_option(filters, "--filter") if filters is not None else None
    settings = resolve_settings(profile=profile, config_file=config, data_dir=data_dir,
                                collection=collection)
    if streaming and not as_json and not retrieval_only:
        _stream_answer(question, top_n=top_n, filters=parsed, settings=settings)
        return
    result = run(question, top_n=top_n, filters=parsed, settings=settings)
    if as_json:
        print(result.model_dump_json(indent=2))
    else:
        _print_answer(result, show_text=not retrieval_only)


@app.command()
def ask(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(metavar="QUESTION", help="the question")],
    collection: CollectionOpt = None,
    profile: ProfileOpt = None,
    top_n: TopNOpt = None,
    filter_json: FilterOpt = None,
    as_json: JsonOpt = False,
    stream: Annotated[Optional[bool], typer.Option(
        "--stream/--no-stream", metavar="",
        help="print the answer as it is written, then its warnings and sources (default: stream "
             "when stdout is a terminal; --json never streams)")] = None,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = 0,
    debug: DebugOpt = False,
) -> None:
    """Answer a question with [n] citations, then list the numbered sources."""
    _setup(ctx, verbose, debug)
    streaming = sys.stdout.isatty() if stream is None else stream
    _query(question, retrieval_only=False, collection=collection, profile=profile, top_n=top_n,
           filters=filter_json, data_dir=data_dir, config=config, as_json=as_json,
           streaming=streaming)


@app.command()
def search(
    ctx: typer.Context,
    question: Annotated[str, typer.Argument(metavar="QUERY", help="the query")],
    collection: CollectionOpt = None,
    profile: ProfileOpt = None,
    top_n: TopNOpt = None,
    filter_json: FilterOpt = None,
    as_json: JsonOpt = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = 0,
    debug: DebugOpt = False,
) -> None:
    """Retrieval only: the ranked passages with sources, scores and offsets."""
    _setup(ctx, verbose, debug)
    _query(question, retrieval_only=True, collection=collection, profile=profile, top_n=top_n,
           filters=filter_json, data_dir=data_dir, config=config, as_json=as_json)


@app.command("eval")
def eval_(
    ctx: typer.Context,
    dataset: Annotated[Path, typer.Option("--dataset", "-d", metavar="PATH",
                                          help="golden .yaml file or BEIR directory")],
    compare: Annotated[Optional[str], typer.Option(
        "--compare", metavar="P1,P2", help="comma-separated profiles (default: every registered "
        f"profile: {', '.join(profile_names())})")] = None,
    k: Annotated[int, typer.Option("--k", metavar="K", min=1, max=100,
                                   help="cut-off of recall@k")] = 5,
    limit: Annotated[Optional[int], typer.Option("--limit", metavar="N", min=1,
                                                 help="evaluate the first N cases")] = None,
    out_dir: Annotated[Optional[Path], typer.Option(
        "--out", metavar="DIR", help="report directory (default eval-out/<dataset>)")] = None,
    judge: Annotated[str, typer.Option(
        "--judge", metavar="NAME",
        help="auto | heuristic | llm (auto: llm when a chat model is configured)")] = "auto",
    answers: Annotated[bool, typer.Option("--answers/--no-answers", metavar="",
                                          help="also run ask and the answer metrics")] = True,
    split: Annotated[Optional[str], typer.Option(
        "--split", metavar="NAME", help="BEIR qrels split (default test, dev, train)")] = None,
    collection: Annotated[Optional[str], typer.Option(
        "--collection", "-c", metavar="NAME",
        help="override the collection derived from the dataset")] = None,
    depth: Annotated[Optional[int], typer.Option(
        "--depth", metavar="N", min=1, max=1000,
        help="chunks retrieved for the retrieval metrics (default max(2k, 20))")] = None,
    gate: Annotated[Optional[Path], typer.Option(
        "--gate", metavar="FILE", help="floors YAML: exit 1 when a floor is missed")] = None,
    no_chart: Annotated[bool, typer.Option("--no-chart", metavar="",
                                           help="skip the PNG chart")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    verbose: VerboseOpt = 0,
    debug: DebugOpt = False,
) -> None:
    """Evaluate profiles on a dataset: comparison table, JSON + Markdown reports and a PNG chart."""
    from ragloom.evaluation.datasets import load_dataset
    from ragloom.evaluation.harness import run_eval
    from ragloom.evaluation.report import check_gate, load_gate, print_table, write_reports

    _setup(ctx, verbose, debug)
    profiles = [p.strip() for p in compare.split(",") if p.strip()] if compare else profile_names()
    floors = load_gate(gate) if gate else None
    if floors is not None and floors.profile not in profiles:
        profiles.append(floors.profile)
    data = load_dataset(dataset, split=split)
    with Progress(TextColumn("{task.description:<12}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err) as bar:
        tasks: dict[str, Any] = {}

        def progress(label: str, done: int, total: int) -> None:
            if label not in tasks:
                tasks[label] = bar.add_task(label, total=total or None)
            bar.update(tasks[label], completed=done, total=total or None)

        report = run_eval(data, profiles, k=k, limit=limit, depth=depth, data_dir=data_dir,
                          config_file=config, collection=collection, judge=judge,
                          answers=answers, progress=progress)
    paths = write_reports(report, out_dir or Path("eval-out") / data.collection,
                          chart=not no_chart)
    print_table(report, out)
    out.print("reports: " + ", ".join(str(p) for p in paths.values()), highlight=False)
    if floors is not None:
        verdict = check_gate(report, floors)
        for line in verdict.lines():
            out.print(line, highlight=False)
        raise typer.Exit(0 if verdict.passed else 1)


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

    _setup(ctx, verbose, debug)
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


def _store_settings(data_dir: Path | None, config: Path | None) -> Any:
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

    _setup(ctx, verbose, debug)
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

    _setup(ctx, verbose, debug)
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
        sources.add_row(escape(_display(s.source_id)), str(s.documents), str(s.chunks),
                        s.recorded_at)
    out.print(sources, highlight=False)
    if details.quarantine:
        held = Table(title="quarantine")
        for column in ("source", "document", "reason", "signals", "when"):
            held.add_column(column, overflow="fold")
        for q in details.quarantine:
            held.add_row(escape(_display(q.source_id)), escape(q.doc_id), escape(q.reason),
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

    _setup(ctx, verbose, debug)
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


# crews: `ragloom crew validate | run` (the commands live in ragloom/cli/crew.py)
from ragloom.cli.crew import crew_app  # noqa: E402

app.add_typer(crew_app, name="crew")
# --------------------------------------------------------------------------------------------
# ragloom serve / ragloom api-key: the HTTP service (extra `api`), see ragloom.api


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


def main() -> None:
    """Entry point of the `ragloom` command."""
    app()
