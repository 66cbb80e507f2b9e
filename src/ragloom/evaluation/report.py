"""Reports of an evaluation: a comparison table, JSON, Markdown and a PNG chart; the CI gate."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ragloom.errors import ConfigError
from ragloom.evaluation.datasets import CORRECTIVE
from ragloom.evaluation.harness import EvalReport, ProfileResult, aggregate
from ragloom.extras import require

QUALITY_ROWS = [
    ("expected_hit_rate", "expected substrings hit"),
    ("exact_match", "exact match"),
    ("token_f1", "token F1"),
    ("refusal_correct", "refusal correct (unanswerable)"),
    ("false_refusal", "false refusal (answerable)"),
    ("faithfulness", "faithfulness"),
    ("answer_relevancy", "answer relevancy"),
    ("context_precision", "context precision"),
    ("context_recall", "context recall"),
    ("citation_validity", "citation validity"),
]
CHART_METRICS = ["recall@{k}", "mrr@10", "ndcg@10", "expected_hit_rate", "token_f1",
                 "faithfulness", "answer_relevancy", "context_precision", "context_recall",
                 "citation_validity"]


def _fmt(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}"


def comparison_rows(report: EvalReport) -> list[tuple[str, list[str]]]:
    """(label, one cell per profile) rows of the comparison table."""
    k = report.k
    profiles = report.profiles
    rows: list[tuple[str, list[str]]] = []
    has_corrective = any(p.corrective for p in profiles)
    for name in (f"recall@{k}", "mrr@10", "ndcg@10"):
        rows.append((name, [_fmt(p.metrics.get(name)) for p in profiles]))
    if has_corrective:
        for name in (f"recall@{k}", "mrr@10"):
            rows.append((f"{name} (gate: no corrective)", [_fmt(p.gate.get(name)) for p in profiles]))
            rows.append((f"{name} (corrective only)", [_fmt(p.corrective.get(name)) for p in profiles]))
    if report.answers:
        for key, label in QUALITY_ROWS:
            if any(p.metrics.get(key) is not None for p in profiles):
                rows.append((label, [_fmt(p.metrics.get(key)) for p in profiles]))
        rows.append(("ask latency p50 / p95 (ms)",
                     [f"{_ms(p.latency_ms.get('ask_p50'))} / {_ms(p.latency_ms.get('ask_p95'))}"
                      for p in profiles]))
    rows.append(("retrieve latency p50 / p95 (ms)",
                 [f"{_ms(p.latency_ms.get('retrieve_p50'))} / {_ms(p.latency_ms.get('retrieve_p95'))}"
                  for p in profiles]))
    rows.append(("model calls (pipeline)", [str(p.cost.model_calls) for p in profiles]))
    rows.append(("prompt / completion tokens",
                 [("not reported" if p.cost.prompt_tokens is None
                   else f"{p.cost.prompt_tokens} / {p.cost.completion_tokens}") for p in profiles]))
    if report.answers:
        rows.append(("judge calls", [str(p.cost.judge_calls) for p in profiles]))
    return rows


def timing_line(report: EvalReport) -> str:
    """One line: total time, time in ragloom.runner calls and the harness's own overhead."""
    t = report.timing
    return (f"total {t.total_s:.1f} s; in ragloom.runner {t.runner_s:.1f} s (ingest {t.ingest_s:.1f}, "
            f"retrieve {t.retrieve_s:.1f}, ask {t.ask_s:.1f}); harness overhead {t.overhead_s:.1f} s "
            f"= {t.overhead_pct:.1f}% (judge {t.judge_s:.1f}, metrics {t.metrics_s:.1f}, "
            f"report {t.report_s:.1f})")


def header_lines(report: EvalReport) -> list[str]:
    """What was run: dataset, cases, collection, ingest, judge."""
    ing = report.ingest
    split = f" split {report.split}," if report.split else ""
    return [
        f"dataset {report.dataset} ({report.dataset_kind},{split} {report.cases} cases) "
        f"from {report.dataset_path}",
        f"collection {report.collection} in {report.data_dir}; ingest: {ing.get('sources', 0)} "
        f"source(s), {ing.get('embeddings_computed', 0)} embeddings computed "
        f"({ing.get('unchanged', 0)} unchanged) in {ing.get('total_ms', 0) / 1000:.1f} s",
        f"k={report.k}; retrieval metrics over the top {report.depth} chunks of the retrieve graph "
        "(assemble budget lifted), documents ranked by their best chunk",
        f"judge: {report.judge}",
    ] + ([f"load average (1/5/15 min) at start {report.load_average.get('start')}, at end "
          f"{report.load_average.get('end')} on {os.cpu_count()} CPUs"]
         if report.load_average.get("start") else [])


def print_table(report: EvalReport, console: Any) -> None:
    """The comparison table on a rich console."""
    from rich.table import Table

    table = Table(title=f"ragloom eval — {report.dataset}")
    table.add_column("metric")
    for p in report.profiles:
        table.add_column(p.profile, justify="right")
    for label, cells in comparison_rows(report):
        table.add_row(label, *cells)
    for line in header_lines(report):
        console.print(line, highlight=False)
    console.print(table)
    console.print(timing_line(report), highlight=False)


def to_markdown(report: EvalReport) -> str:
    """The Markdown report: header, comparison table, per-tag table, per-case table (small sets)."""
    names = [p.profile for p in report.profiles]
    lines = [f"# ragloom eval — {report.dataset}", ""]
    lines += [f"- {line}" for line in header_lines(report)]
    lines += [f"- {timing_line(report)}", f"- started {report.started}", "",
              "## Comparison", "", "| metric | " + " | ".join(names) + " |",
              "|---|" + "---:|" * len(names)]
    lines += [f"| {label} | " + " | ".join(cells) + " |" for label, cells in comparison_rows(report)]
    tags = sorted({t for p in report.profiles for t in p.by_tag})
    if tags:
        k = report.k
        lines += ["", f"## By tag (recall@{k} / MRR@10 / expected hit)", "",
                  "| tag | cases | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
        for tag in tags:
            cells = []
            for p in report.profiles:
                m = p.by_tag.get(tag, {})
                cells.append(f"{_fmt(m.get(f'recall@{k}'), 2)} / {_fmt(m.get('mrr@10'), 2)} / "
                             f"{_fmt(m.get('expected_hit_rate'), 2)}")
            count = int(report.profiles[0].by_tag.get(tag, {}).get("cases") or 0)
            lines.append(f"| {tag} | {count} | " + " | ".join(cells) + " |")
    if report.cases <= 60:
        lines += ["", "## Cases", ""]
        for p in report.profiles:
            lines += [f"### {p.profile}", "", f"| case | tags | recall@{report.k} | MRR | answer |",
                      "|---|---|---:|---:|---|"]
            for c in p.cases:
                answer = "–" if c.answer is None else " ".join(c.answer.split())[:160].replace("|", "\\|")
                lines.append(f"| {c.id} | {', '.join(c.tags)} | "
                             f"{_fmt(c.retrieval.get(f'recall@{report.k}'), 2)} | "
                             f"{_fmt(c.retrieval.get('mrr@10'), 2)} | {answer} |")
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def write_chart(report: EvalReport, path: Path) -> Path:
    """PNG: quality metrics per profile (grouped bars) and latency p50/p95 per profile."""
    matplotlib = require("matplotlib", "the eval chart (--no-chart skips it)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    keys = [m.format(k=report.k) for m in CHART_METRICS]
    keys = [key for key in keys if any(p.metrics.get(key) is not None for p in report.profiles)]
    fig, (left, right) = plt.subplots(1, 2, figsize=(14, 5), gridspec_kw={"width_ratios": [3, 1]})
    width = 0.8 / max(1, len(report.profiles))
    x = np.arange(len(keys))
    for i, p in enumerate(report.profiles):
        values = [p.metrics.get(key) or 0.0 for key in keys]
        left.bar(x + i * width - 0.4 + width / 2, values, width, label=p.profile)
    left.set_xticks(x, keys, rotation=30, ha="right")
    left.set_ylim(0, 1.18)
    left.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
    left.set_ylabel("score")
    left.set_title(f"{report.dataset}: quality per profile ({report.cases} cases; judge: "
                   f"{report.judge.split(' ')[0]})")
    left.legend(loc="upper center", ncol=max(1, len(report.profiles)), frameon=False)
    names = [p.profile for p in report.profiles]
    xs = np.arange(len(names))
    use_ask = report.answers
    p50 = [p.latency_ms.get("ask_p50" if use_ask else "retrieve_p50") or 0.0 for p in report.profiles]
    p95 = [p.latency_ms.get("ask_p95" if use_ask else "retrieve_p95") or 0.0 for p in report.profiles]
    right.bar(xs - 0.2, p50, 0.4, label="p50")
    right.bar(xs + 0.2, p95, 0.4, label="p95")
    right.set_xticks(xs, names)
    right.set_ylabel("ms")
    right.set_title(f"{'ask' if use_ask else 'retrieve'} latency per profile")
    right.legend(frameon=False)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_reports(report: EvalReport, out_dir: str | Path, chart: bool = True) -> dict[str, Path]:
    """Write report.json, report.md and chart.png under out_dir; their paths by kind."""
    directory = Path(out_dir)
    directory.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    paths: dict[str, Path] = {}
    if chart:
        paths["chart"] = write_chart(report, directory / "chart.png")
    report.timing.report_s += time.perf_counter() - start
    report.timing.total_s += time.perf_counter() - start
    paths["json"] = directory / "report.json"
    paths["markdown"] = directory / "report.md"
    payload = report.model_dump(mode="json")
    payload["timing"].update(overhead_s=round(report.timing.overhead_s, 3),
                             overhead_pct=round(report.timing.overhead_pct, 2))
    paths["json"].write_text(json.dumps(payload, indent=2, ensure_ascii=False), encoding="utf-8")
    paths["markdown"].write_text(to_markdown(report), encoding="utf-8")
    return paths


# ----------------------------------------------------------------- CI gate


class Gate(BaseModel):
    """Floors a profile's metrics must reach; cases with excluded tags don't count."""

    model_config = ConfigDict(extra="forbid")

    profile: str = "balanced"
    k: int = Field(5, ge=1)
    exclude_tags: list[str] = Field(default_factory=lambda: [CORRECTIVE])
    floors: dict[str, float] = Field(min_length=1)
    measured: dict[str, Any] = Field(default_factory=dict,
                                     description="what the profile measured when floors were set")


def load_gate(path: str | Path) -> Gate:
    """Read the gate floors YAML."""
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
        return Gate.model_validate(data)
    except OSError as exc:
        raise ConfigError(f"cannot read gate file: {exc.strerror}", where=str(file)) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", where=str(file)) from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ConfigError(f"invalid gate field {'.'.join(map(str, first['loc']))}: {first['msg']}",
                          where=str(file)) from exc


@dataclass
class GateResult:
    """The gate's verdict: each floor with its measured value."""

    profile: str
    checks: list[tuple[str, float | None, float]]
    cases: int
    excluded: int

    @property
    def passed(self) -> bool:
        """True when every measured value reaches its floor."""
        return all(v is not None and v >= floor for _, v, floor in self.checks)

    def lines(self) -> list[str]:
        """Human-readable verdict lines."""
        out = [f"gate on {self.profile}: {self.cases} cases ({self.excluded} excluded by tag)"]
        for name, value, floor in self.checks:
            ok = value is not None and value >= floor
            out.append(f"  {'PASS' if ok else 'FAIL'} {name} {_fmt(value)} (floor {floor:.3f})")
        return out


def check_gate(report: EvalReport, gate: Gate) -> GateResult:
    """Compare the gate profile's metrics (excluded tags removed) with the floors."""
    if gate.k != report.k:
        raise ConfigError(f"the gate is set for k={gate.k} but the run used k={report.k}",
                          hint=f"run with --k {gate.k}")
    result: ProfileResult = report.profile(gate.profile)
    kept = [c for c in result.cases if not set(c.tags) & set(gate.exclude_tags)]
    metrics = aggregate(kept, report.k)
    unknown = [name for name in gate.floors if name not in metrics]
    if unknown:
        raise ConfigError(f"unknown gate metric(s): {', '.join(unknown)}",
                          hint=f"known: {', '.join(sorted(metrics))}")
    checks = [(name, metrics[name], floor) for name, floor in gate.floors.items()]
    return GateResult(profile=gate.profile, checks=checks, cases=len(kept),
                      excluded=len(result.cases) - len(kept))
