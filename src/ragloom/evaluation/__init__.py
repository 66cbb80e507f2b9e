"""Datasets, metrics and the evaluation harness.

    from ragloom.evaluation import load_dataset, run_eval, write_reports
    report = run_eval(load_dataset("examples/eval/golden.yaml"), ["fast", "balanced"])
    write_reports(report, "eval-out/golden")

`ragloom eval --dataset PATH --compare fast,balanced,quality` does the same from the command line.
"""

from __future__ import annotations

from ragloom.evaluation.datasets import EvalCase, EvalDataset, load_beir, load_dataset, load_golden
from ragloom.evaluation.harness import EvalReport, run_eval
from ragloom.evaluation.report import check_gate, load_gate, write_reports

__all__ = [
    "EvalCase", "EvalDataset", "EvalReport", "check_gate", "load_beir", "load_dataset",
    "load_gate", "load_golden", "run_eval", "write_reports",
]
