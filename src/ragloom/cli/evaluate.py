"""`ragloom eval`: profiles compared on a dataset, with reports, a chart and an optional gate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ragloom.cli.app import app, err, out, setup
from ragloom.cli.options import ConfigOpt, DataDirOpt, DebugOpt, VerboseOpt
from ragloom.profiles.presets import profile_names


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

    setup(ctx, verbose, debug)
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
