"""Guardrails on the labelled set in benchmarks/data/guardrails: precision and recall per category.

    python benchmarks/guardrails.py [--split dev|holdout|fresh|all] [--file MORE.jsonl ...]
                                    [--classifier heuristic|semantic|llm] [--list] [--json OUT]
    python benchmarks/guardrails.py --scope [--json OUT]
    python benchmarks/guardrails.py --refit

The first form runs the input guard's classifier on every question (one JSON object a line:
`question`, `category`, optional `lang`, `id`, `class`; `--file` adds sets written by others) and
prints, per split, precision, recall and F1 of each category, the confusion matrix, the share of
benign questions refused, the per-class recall of the attacks and the accuracy of the language the
refusal would be written in, and the time per question once models are loaded. `--list` prints
every miss. `--classifier semantic` adds the exemplar classifier of `ragloom.guardrails.semantic`
(the settings' embedder); `--classifier llm` uses the chat model of the settings (RAGLOOM_*
environment), falling back to the heuristic as the node does. `all` is dev, holdout and fresh.

`--scope` ingests the example knowledge base into a temporary directory and asks the balanced
profile every golden question (in scope) and the off-collection questions of
benchmarks/data/guardrails/scope.jsonl: how many of each the scope check refuses ("I don't know" with the
closest sources), with the relevance distribution. Never tune on `holdout` or `fresh`: score them
once, at the end. `--refit` fits the semantic layer on the packaged exemplars again and writes
`src/ragloom/guardrails/exemplar_fit.npz` (after editing `exemplars.jsonl`).
"""

from __future__ import annotations

import argparse
import functools
import json
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable

    from ragloom.guardrails.classifier import GuardVerdict

ROOT = Path(__file__).resolve().parents[1]
SET = ROOT / "benchmarks" / "data" / "guardrails"


def load(path: Path, split: str) -> list[dict[str, Any]]:
    """The labelled questions of one JSONL file, tagged with their split."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            row = json.loads(line)
            row.setdefault("id", f"{path.stem}-{number}")
            row.setdefault("class", row["category"])
            rows.append({**row, "split": split})
    return rows


def verdict_function(classifier: str) -> Callable[[str], GuardVerdict]:
    """The question classifier to benchmark, its models loaded."""
    from ragloom.guardrails.classifier import heuristic_verdict
    from ragloom.settings import load_settings

    settings = load_settings()
    if classifier == "semantic":
        from ragloom.guardrails.semantic import semantic_guard, semantic_verdict
        from ragloom.providers.embeddings import get_embedder

        guard = semantic_guard(get_embedder(settings.embedding), settings.resolved_cache_dir())
        return functools.partial(semantic_verdict, guard=guard)
    if classifier == "llm":
        from ragloom.nodes.input_guard import llm_verdict
        from ragloom.providers.chat import get_chat_model

        chat = get_chat_model(settings.chat)
        return lambda question: llm_verdict(question, chat) or heuristic_verdict(question)
    return heuristic_verdict


def classify(rows: list[dict[str, Any]], verdict_of: Callable[[str], GuardVerdict]) -> float:
    """Add the verdict, the rules and the refusal language to every row; the seconds classifying."""
    from ragloom.language import detect_language
    from ragloom.settings import load_settings

    settings = load_settings()
    elapsed = 0.0
    for row in rows:
        start = time.perf_counter()
        verdict = verdict_of(row["question"])
        elapsed += time.perf_counter() - start
        row["predicted"] = verdict.category
        row["rules"] = list(verdict.rules)
        row["reason"] = verdict.reason
        row["detected_lang"] = detect_language(row["question"], settings.ingest.languages) \
            or settings.guard.default_lang
    return elapsed


def scores(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Precision, recall and F1 per category, the confusion matrix and the benign refusal rate."""
    from ragloom.guardrails.classifier import CATEGORIES

    table: dict[str, dict[str, float | int]] = {}
    for category in CATEGORIES:
        tp = sum(r["category"] == category and r["predicted"] == category for r in rows)
        fp = sum(r["category"] != category and r["predicted"] == category for r in rows)
        fn = sum(r["category"] == category and r["predicted"] != category for r in rows)
        precision = tp / (tp + fp) if tp + fp else 1.0
        recall = tp / (tp + fn) if tp + fn else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        table[category] = {"n": tp + fn, "precision": round(precision, 3),
                           "recall": round(recall, 3), "f1": round(f1, 3)}
    confusion = Counter((r["category"], r["predicted"]) for r in rows)
    benign = [r for r in rows if r["category"] == "ok"]
    attacks = [r for r in rows if r["category"] in ("pii_request", "jailbreak", "dangerous")]
    per_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for row in rows:
        key = f"{row['category']}/{row['class']}"
        per_class[key][0] += row["predicted"] == row["category"]
        per_class[key][1] += 1
    with_lang = [r for r in rows if r.get("lang")]
    return {
        "n": len(rows),
        "per_category": table,
        "accuracy": round(sum(r["predicted"] == r["category"] for r in rows) / len(rows), 3),
        "benign_refused": round(sum(r["predicted"] != "ok" for r in benign) / len(benign), 3)
        if benign else 0.0,
        "attacks_refused": round(sum(r["predicted"] != "ok" for r in attacks) / len(attacks), 3)
        if attacks else 0.0,
        "confusion": {f"{gold}->{predicted}": n for (gold, predicted), n in sorted(confusion.items())},
        "per_class": {key: f"{hit}/{total}" for key, (hit, total) in sorted(per_class.items())},
        "lang_accuracy": round(sum(r["detected_lang"] == r["lang"] for r in with_lang)
                               / len(with_lang), 3) if with_lang else None,
    }


def print_scores(name: str, result: dict[str, Any]) -> None:
    """Print one split's table."""
    print(f"\n== {name}: {result['n']} questions, accuracy {result['accuracy']}, benign refused "
          f"{result['benign_refused']}, attacks refused {result['attacks_refused']}, refusal "
          f"language right {result['lang_accuracy']}")
    print(f"{'category':14s} {'n':>4s} {'precision':>9s} {'recall':>7s} {'f1':>6s}")
    for category, row in result["per_category"].items():
        print(f"{category:14s} {row['n']:4d} {row['precision']:9.3f} {row['recall']:7.3f} "
              f"{row['f1']:6.3f}")
    print("confusion (gold->predicted):", ", ".join(f"{k} {v}" for k, v in
                                                   result["confusion"].items() if
                                                   k.split("->")[0] != k.split("->")[1]) or "none")
    print("per class:", ", ".join(f"{k} {v}" for k, v in result["per_class"].items()))


def run_scope() -> dict[str, Any]:
    """Refusals of the scope check on the example KB: golden questions vs off-collection ones."""
    import yaml

    from ragloom.runner import ask, ingest

    golden = yaml.safe_load((ROOT / "examples" / "eval" / "golden.yaml").read_text())["cases"]
    inside = [c["question"] for c in golden if "unanswerable" not in c.get("tags", [])]
    unanswerable = [c["question"] for c in golden if "unanswerable" in c.get("tags", [])]
    outside = [r["question"] for r in load(SET / "scope.jsonl", "scope")]
    result: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        ingest([str(ROOT / "examples" / "kb")], collection="guardscope", data_dir=tmp)
        for name, questions in (("in_scope", inside), ("unanswerable", unanswerable),
                                ("off_collection", outside)):
            refused, relevance, elapsed = 0, [], []
            for question in questions:
                start = time.perf_counter()
                answer = ask(question, collection="guardscope", data_dir=tmp)
                elapsed.append((time.perf_counter() - start) * 1000)
                verdict = next((v for v in answer.verdicts if v.stage == "scope"), None)
                if verdict is not None:
                    relevance.append(verdict.score or 0.0)
                    refused += verdict.verdict == "out_of_scope"
            result[name] = {"n": len(questions), "refused": refused,
                            "refused_share": round(refused / len(questions), 3),
                            "relevance_median": round(statistics.median(relevance), 3),
                            "relevance_min": round(min(relevance), 3),
                            "relevance_max": round(max(relevance), 3),
                            "ms_median": round(statistics.median(elapsed), 1)}
    return result


def refit() -> int:
    """Fit the semantic layer on the packaged exemplars with the settings' embedder; store it."""
    from ragloom.guardrails import semantic
    from ragloom.providers.embeddings import get_embedder
    from ragloom.settings import load_settings

    embedder = get_embedder(load_settings().embedding)
    exemplars = semantic.load_exemplars()
    key = semantic.fit_key(embedder, exemplars, semantic.C)
    if key is None or semantic.unsuited(embedder):
        print(f"refit needs the {semantic.TUNED_MODEL} embedder", file=sys.stderr)
        return 1
    semantic.write_fit(semantic.PACKAGED_FIT, key, semantic.fit_exemplars(embedder, exemplars))
    print(f"wrote {semantic.PACKAGED_FIT} ({key})")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the classifier (or the scope check) and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["dev", "holdout", "fresh", "all"], default="dev")
    parser.add_argument("--file", action="append", default=[], type=Path,
                        help="another labelled JSONL set (scored as its own split)")
    parser.add_argument("--classifier", choices=["heuristic", "semantic", "llm"],
                        default="semantic")
    parser.add_argument("--list", action="store_true", help="print every miss")
    parser.add_argument("--scope", action="store_true", help="the scope check on the example KB")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--refit", action="store_true",
                        help="refit the packaged exemplar classifier and write its .npz")
    args = parser.parse_args(argv)
    if args.refit:
        return refit()
    if args.scope:
        result: dict[str, Any] = {"scope": run_scope()}
        for name, row in result["scope"].items():
            print(name, row)
    else:
        splits = ["dev", "holdout", "fresh"] if args.split == "all" else [args.split]
        sets = {split: load(SET / f"{split}.jsonl", split) for split in splits}
        sets.update({path.stem: load(path, path.stem) for path in args.file})
        start = time.perf_counter()
        verdict_of = verdict_function(args.classifier)
        verdict_of("How do I warm up the classifier?")
        loaded = time.perf_counter()
        elapsed = sum(classify(rows, verdict_of) for rows in sets.values())
        result = {name: scores(rows) for name, rows in sets.items()}
        for name, rows in sets.items():
            print_scores(name, result[name])
            if args.list:
                for row in rows:
                    if row["predicted"] != row["category"]:
                        print(f"  MISS {row['id']:10s} {row['category']:>12s} -> "
                              f"{row['predicted']:12s} {row['reason'][:70]!s:70s} | "
                              f"{row['question']}")
        total = sum(len(rows) for rows in sets.values())
        print(f"\n{args.classifier}: {total} questions classified in {elapsed:.2f} s "
              f"({elapsed / total * 1000:.2f} ms each), after "
              f"{loaded - start:.2f} s loading models and exemplars")
        result["ms_per_question"] = round(elapsed / total * 1000, 3)
        result["load_s"] = round(loaded - start, 3)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
