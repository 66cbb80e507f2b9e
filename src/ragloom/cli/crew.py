"""`ragloom crew validate | run`: check a crew file or CrewAI project, or run it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console

from ragloom.cli.app import app
from ragloom.cli.options import CollectionOpt, ConfigOpt, DataDirOpt, JsonOpt, json_object_option
from ragloom.errors import RagloomError

crew_app = typer.Typer(no_args_is_help=True, help="Crews: crew YAML or CrewAI projects run as "
                       "LangGraph agent graphs with cited knowledge.")
app.add_typer(crew_app, name="crew")
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

PathArg = Annotated[str, typer.Argument(help="crew .yaml, CrewAI project folder, or the name of "
                                        "a packaged example (support, research, triage)")]


def _fail(exc: RagloomError) -> None:
    """Print a crew error (each problem on its own line) and exit 2."""
    problems = getattr(exc, "problems", None)
    if problems:
        err.print(f"[bold red]error:[/] {len(problems)} problem(s) in the crew", highlight=False)
        for problem in problems:
            err.print(f"  {problem}", highlight=False, soft_wrap=True)
    else:
        err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def _warn(notices: list[str]) -> None:
    """Print the crew's notices on stderr."""
    for notice in notices:
        err.print(f"[yellow]note:[/] {notice}", highlight=False, soft_wrap=True)


def _inputs(pairs: list[str], raw_json: str | None) -> dict[str, Any]:
    """Inputs from `--inputs-json` and repeated `--input name=value`."""
    values: dict[str, Any] = {}
    if raw_json:
        values.update(json_object_option(raw_json, "--inputs-json"))
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise typer.BadParameter(f"--input {pair!r} must look like name=value")
        values[name.strip()] = value
    return values


@crew_app.command("validate")
def validate_cmd(path: PathArg, as_json: JsonOpt = False) -> None:
    """Check a crew without running it: every problem with file:line:field."""
    from ragloom.crews.loader import validate_crew

    try:
        spec = validate_crew(path)
    except RagloomError as exc:
        _fail(exc)
    if as_json:
        print(spec.model_dump_json(indent=2))
        return
    out.print(f"crew [bold]{spec.name}[/] ({spec.dialect}, {spec.process}): "
              f"{len(spec.agents)} agent(s), {len(spec.tasks)} task(s)", highlight=False)
    for agent_id, agent in spec.agents.items():
        extras = [f"knowledge: {', '.join(agent.knowledge)}" if agent.knowledge else "",
                  f"tools: {', '.join(agent.tools)}" if agent.tools else ""]
        shown = "; ".join(e for e in extras if e)
        out.print(f"  agent {agent_id}: {agent.role}" + (f" ({shown})" if shown else ""),
                  highlight=False)
    for task_id in spec.order:
        task = spec.task(task_id)
        context = spec.context_of(task_id)
        out.print(f"  task {task_id} → {task.agent or 'manager decides'}"
                  + (f" (context: {', '.join(context)})" if context else ""), highlight=False)
    for name, collection in spec.rag.collections.items():
        out.print(f"  collection {name}: {len(collection.sources)} source spec(s)"
                  if collection.sources else f"  collection {name}: existing (not ingested)",
                  highlight=False)
    if spec.inputs:
        out.print(f"  inputs: {', '.join(spec.inputs)}", highlight=False)
    _warn(spec.notices)
    out.print("[green]ok[/]")


def _print_result(result: Any) -> None:
    """Print each task's output, the final output and its sources."""
    for report in result.ingestion:
        out.print(f"[dim]collection {report.collection}: {report.chunks_written} chunks written, "
                  f"{report.embeddings_computed} embeddings computed[/]", highlight=False)
    for task in result.tasks:
        label = f" [dim]({task.label})[/]" if task.label else ""
        flag = " [yellow](best-effort)[/]" if task.best_effort else ""
        out.print(f"\n[bold]── {task.task}[/] · {task.role or task.agent}{label}{flag}",
                  highlight=False)
        out.print(task.text, highlight=False)
        if task.output_file:
            out.print(f"[dim]written to {task.output_file}[/]", highlight=False)
    out.print("\n[bold]Final output[/]")
    out.print(result.final_output or "(none)", highlight=False)
    if result.citations:
        out.print("[bold]Sources[/]")
        for c in result.citations:
            out.print(f"[{c.marker}] {c.source_id}  chars {c.start}-{c.end}", highlight=False)
    _warn(result.notices)
    if result.best_effort:
        err.print("[yellow]warning:[/] best-effort result (a task hit its bound, fell back or "
                  "did not run)")


@crew_app.command("run")
def run_cmd(
    path: PathArg,
    inputs: Annotated[Optional[list[str]], typer.Option(
        "--input", "-i", help="a placeholder value, name=value (repeatable)")] = None,
    inputs_json: Annotated[Optional[str], typer.Option("--inputs-json",
                                                       help="all inputs as a JSON object")] = None,
    thread: Annotated[Optional[str], typer.Option("--thread", help="checkpoint thread id "
                                                  "(default: a new one per run)")] = None,
    resume: Annotated[bool, typer.Option("--resume", help="continue the thread's unfinished run "
                                         "(or show its finished result); needs --thread")] = False,
    output_dir: Annotated[Optional[Path], typer.Option("--output-dir", help="where output_file "
                                                       "paths are written (default "
                                                       "<data-dir>/crews/<crew>/outputs)")] = None,
    as_json: JsonOpt = False,
    collection: CollectionOpt = None,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Run a crew: each task's output with its citations, then the final output's sources."""
    from ragloom.crews.loader import build_crew, new_thread_id, run_crew

    if resume and not thread:
        raise typer.BadParameter("--resume needs --thread ID")
    values = _inputs(inputs or [], inputs_json)
    thread_id = thread or new_thread_id()
    try:
        crew = build_crew(path, data_dir=data_dir, config_file=config, collection=collection,
                          output_dir=output_dir)
        result = run_crew(crew.graph, values, thread_id=thread_id, resume=resume)
    except RagloomError as exc:
        _fail(exc)
    if as_json:
        print(result.model_dump_json(indent=2))
        return
    _print_result(result)
    err.print(f"[dim]thread {thread_id} (resume or inspect with --thread {thread_id} "
              "--resume)[/]", highlight=False)
