"""Command line: `ragloom ingest | ask | search | eval | serve | api-key`."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ragloom.errors import RagloomError
from ragloom.state import IngestionReport, RagAnswer

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="ragloom: LangGraph-native retrieval-augmented generation.")
out = Console()
err = Console(stderr=True)

DataDirOpt = Annotated[Optional[Path], typer.Option("--data-dir", envvar="RAGLOOM_DATA_DIR",
                                                    help="where all on-disk state lives")]
ConfigOpt = Annotated[Optional[Path], typer.Option("--config", envvar="RAGLOOM_CONFIG",
                                                   help="YAML settings file")]
CollectionOpt = Annotated[str, typer.Option("--collection", "-c", help="collection name")]
JsonOpt = Annotated[bool, typer.Option("--json", help="print machine-readable JSON")]


def _display(source_id: str) -> str:
    """A source id shown relative to the working directory when it lies below it."""
    try:
        return str(Path(source_id).relative_to(Path.cwd()))
    except ValueError:
        return source_id


def _fail(exc: RagloomError) -> None:
    err.print(f"[bold red]error:[/] {exc}", highlight=False)
    raise typer.Exit(2)


def _summary(report: IngestionReport) -> None:
    table = Table(title=f"ingest → {report.collection}", show_lines=False)
    for column in ("source", "status", "docs", "chunks", "embedded", "notes"):
        table.add_column(column, overflow="fold")
    styles = {"failed": "red", "quarantined": "yellow", "removed": "magenta", "unchanged": "dim"}
    for s in report.sources:
        notes = "; ".join(s.errors) or (", ".join(s.signals) if s.signals else "")
        table.add_row(_display(s.source_id), f"[{styles.get(s.status, 'green')}]{s.status}[/]",
                      str(s.documents), str(s.chunks), str(s.embeddings_computed), notes)
    out.print(table)
    counts = ", ".join(f"{n} {st}" for st in ("ingested", "updated", "unchanged", "removed",
                                               "quarantined", "failed")
                       if (n := report.count(st)))
    out.print(f"{counts or 'no sources'}; {report.embeddings_computed} embeddings computed "
              f"in {report.total_ms / 1000:.1f} s")
    for warning in report.warnings:
        err.print(f"[yellow]warning:[/] {warning}", highlight=False)


@app.command()
def ingest(
    sources: Annotated[list[str], typer.Argument(help="files, directories, globs or URLs")],
    collection: CollectionOpt = "default",
    chunker: Annotated[Optional[str], typer.Option(help="recursive | sentence | structural | semantic")] = None,
    reindex: Annotated[bool, typer.Option("--reindex", help="purge the collection and rebuild it")] = False,
    as_json: JsonOpt = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Ingest sources incrementally; exit code 1 when any source failed."""
    from ragloom.runner import ingest as run_ingest
    from ragloom.runner import resolve_settings

    try:
        settings = resolve_settings(config_file=config, data_dir=data_dir)
        show_bar = not as_json and sys.stderr.isatty()
        with Progress(TextColumn("ingesting"), BarColumn(), MofNCompleteColumn(),
                      TimeElapsedColumn(), console=err, disable=not show_bar) as bar:
            task = bar.add_task("ingest", total=None)
            report = run_ingest(sources, collection=collection, chunker=chunker, reindex=reindex,
                                settings=settings,
                                progress=lambda done, total: bar.update(task, completed=done, total=total))
    except RagloomError as exc:
        _fail(exc)
    if as_json:
        print(report.model_dump_json(indent=2))
    else:
        _summary(report)
    raise typer.Exit(1 if report.failed else 0)


ProfileOpt = Annotated[Optional[str], typer.Option("--profile", "-p",
                                                   help="fast | balanced | quality")]
TopNOpt = Annotated[Optional[int], typer.Option("--top-n", "-n", help="passages to keep")]
FilterOpt = Annotated[Optional[str], typer.Option("--filter", help='metadata filter as JSON, e.g. \'{"source_type": "pdf"}\'')]


def _filters(raw: str | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"--filter is not valid JSON: {exc.msg}") from exc
    if not isinstance(value, dict):
        raise typer.BadParameter("--filter must be a JSON object")
    return value


def _print_answer(result: RagAnswer, *, show_text: bool) -> None:
    if show_text:
        out.print(result.text or "(no answer)", highlight=False)
        out.print()
    if not result.citations:
        out.print("[dim]no sources[/]")
        return
    out.print("[bold]Sources[/]")
    for c in result.citations:
        where = _display(c.source_id)
        if c.metadata.get("page"):
            where += f" p.{c.metadata['page']}"
        out.print(f"[{c.marker}] {where}  chars {c.start}-{c.end}  "
                  f"score {c.score:.3f} ({c.score_origin})", highlight=False)
        snippet = " ".join(c.snippet.split())
        out.print(f"    [dim]{snippet[:160]}…[/]", highlight=False)
    if result.best_effort:
        err.print("[yellow]warning:[/] best-effort answer (loop budget or circuit breaker hit)")


def _query(question: str, *, retrieval_only: bool, collection: str, profile: str | None,
           top_n: int | None, filters: str | None, data_dir: Path | None,
           config: Path | None, as_json: bool) -> None:
    """Run the answer or retrieval-only graph and print its result."""
    from ragloom.runner import ask as run_ask
    from ragloom.runner import resolve_settings
    from ragloom.runner import retrieve as run_retrieve

    run = run_retrieve if retrieval_only else run_ask
    try:
        settings = resolve_settings(profile=profile, config_file=config, data_dir=data_dir,
                                    collection=collection)
        result = run(question, top_n=top_n, filters=_filters(filters), settings=settings)
    except RagloomError as exc:
        _fail(exc)
    if as_json:
        print(result.model_dump_json(indent=2))
    else:
        _print_answer(result, show_text=not retrieval_only)


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="the question")],
    collection: CollectionOpt = "default",
    profile: ProfileOpt = None,
    top_n: TopNOpt = None,
    filter_json: FilterOpt = None,
    as_json: JsonOpt = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Answer a question with [n] citations, then list the numbered sources."""
    _query(question, retrieval_only=False, collection=collection, profile=profile, top_n=top_n,
           filters=filter_json, data_dir=data_dir, config=config, as_json=as_json)


@app.command()
def search(
    question: Annotated[str, typer.Argument(help="the query")],
    collection: CollectionOpt = "default",
    profile: ProfileOpt = None,
    top_n: TopNOpt = None,
    filter_json: FilterOpt = None,
    as_json: JsonOpt = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Retrieval only: the ranked passages with sources, scores and offsets."""
    _query(question, retrieval_only=True, collection=collection, profile=profile, top_n=top_n,
           filters=filter_json, data_dir=data_dir, config=config, as_json=as_json)


@app.command("eval")
def eval_(
    dataset: Annotated[Path, typer.Option("--dataset", "-d", help="golden .yaml file or BEIR directory")],
    compare: Annotated[Optional[str], typer.Option(
        "--compare", help="comma-separated profiles (default: every registered profile)")] = None,
    k: Annotated[int, typer.Option("--k", help="cut-off of recall@k")] = 5,
    limit: Annotated[Optional[int], typer.Option("--limit", help="evaluate the first N cases")] = None,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="report directory (default eval-out/<dataset>)")] = None,
    judge: Annotated[str, typer.Option("--judge", help="auto | heuristic | llm (auto: llm when a chat model is configured)")] = "auto",
    answers: Annotated[bool, typer.Option("--answers/--no-answers", help="also run ask and the answer metrics")] = True,
    split: Annotated[Optional[str], typer.Option("--split", help="BEIR qrels split (default test, dev, train)")] = None,
    collection: Annotated[Optional[str], typer.Option("--collection", "-c", help="override the collection derived from the dataset")] = None,
    depth: Annotated[Optional[int], typer.Option("--depth", help="chunks retrieved for the retrieval metrics (default max(2k, 20))")] = None,
    gate: Annotated[Optional[Path], typer.Option("--gate", help="floors YAML: exit 1 when a floor is missed")] = None,
    no_chart: Annotated[bool, typer.Option("--no-chart", help="skip the PNG chart")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Evaluate profiles on a dataset: comparison table, JSON + Markdown reports and a PNG chart."""
    from ragloom.evaluation.datasets import load_dataset
    from ragloom.evaluation.harness import run_eval
    from ragloom.evaluation.report import check_gate, load_gate, print_table, write_reports
    from ragloom.profiles.presets import profile_names

    try:
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
        verdict = check_gate(report, floors) if floors else None
    except RagloomError as exc:
        _fail(exc)
    if verdict is not None:
        for line in verdict.lines():
            out.print(line, highlight=False)
        raise typer.Exit(0 if verdict.passed else 1)


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
    try:
        from ragloom.api.server import run_server, server_settings
    except ImportError as exc:
        err.print(f"[bold red]error:[/] the HTTP service needs the api extra ({exc.name} is "
                  "missing): pip install 'ragloom[api]'", highlight=False)
        raise typer.Exit(2) from exc
    try:
        api = {"host": host, "port": port, "workers": workers, "keys_file": keys_file,
               "redis_url": redis_url}
        settings, notes = server_settings(config_file=config, data_dir=data_dir,
                                          collection=collection,
                                          api={k: v for k, v in api.items() if v is not None})
    except RagloomError as exc:
        _fail(exc)
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
    try:
        secret = add_key(keys_file, name, collections=names, bu=bu,
                         scopes=["read", "ingest"] if ingest_scope else ["read"])
    except RagloomError as exc:
        _fail(exc)
    print(secret)
    err.print(f"key {name!r} added to {keys_file} (shown once: store it now)", highlight=False)


def main() -> None:
    """Entry point with logging configured."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()


if __name__ == "__main__":
    main()
