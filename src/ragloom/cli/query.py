"""`ragloom ask | search`: an answer (whole or streamed) or passages, with warnings and sources."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from ragloom.cli.app import app, display_source, err, out, setup
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
from ragloom.state import RagAnswer


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
    """Print an answer's warnings above its text."""
    for warning in warnings:
        out.print(f"[bold yellow]warning:[/] {warning}", highlight=False, soft_wrap=True)


def _print_sources(result: RagAnswer) -> None:
    """Print the numbered sources: where, offsets, score and a snippet."""
    if not result.citations:
        out.print("[dim]no sources[/]")
    else:
        out.print("[bold]Sources[/]")
    for c in result.citations:
        where = display_source(c.source_id)
        if c.metadata.get("page"):
            where += f" p.{c.metadata['page']}"
        flag = " [yellow](flagged: possible prompt injection)[/]" if c.metadata.get("suspicious") else ""
        out.print(f"[{c.marker}] {where}  chars {c.start}-{c.end}  "
                  f"score {c.score:.3f} ({c.score_origin}){flag}", highlight=False)
        snippet = " ".join(c.snippet.split())
        out.print(f"    [dim]{snippet[:160]}…[/]", highlight=False)


def _print_answer(result: RagAnswer, *, show_text: bool) -> None:
    """Print the answer, warnings and sources; without the text (search) warnings go to stderr."""
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
    setup(ctx, verbose, debug)
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
    setup(ctx, verbose, debug)
    _query(question, retrieval_only=True, collection=collection, profile=profile, top_n=top_n,
           filters=filter_json, data_dir=data_dir, config=config, as_json=as_json)
