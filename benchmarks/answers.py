"""Answer benchmark: does the answer come first, pad nothing, and cite — offline and with a local LLM.

    python benchmarks/answers.py [--datasets golden,hotpotqa,path/to/set.yaml] [--profile balanced]
                                 [--llm] [--llm-limit N] [--json out.json]

A `--datasets` entry is `golden` (examples/eval/golden.yaml), the name of a BEIR dataset under
../shared/data, or the path of any golden-format YAML set (its `corpus:` relative to the YAML
file, as in golden.yaml) or BEIR directory; a path is reported under its file or folder name.

Offline (no chat model: the extractive answer), per dataset, over the answerable cases with
expected answers (golden: those not tagged `corrective` — the CI gate's cases — and apart the
`corrective` ones; HotpotQA: all 40, the expected answer is the short reference span):

- first-sentence hit: every expected substring in the answer's first sentence (the harness's
  "expected hit" rule applied to sentence 1); `any` in parentheses: at least one of them;
- answer hit: the same rule over the whole answer (so first < answer means the best came later);
- sentences per answer (sentences with content words, the suspicious-source note excluded);
- padding rate: answer sentences that share no stemmed content term with the question, the
  reference or the expected answers;
- faithfulness: the heuristic judge of `ragloom eval` (the shared claim-support rule) against the
  passages the answer was given; citation validity likewise;
- abstentions on answerable cases, and on the unanswerable ones (golden) the share answered "I don't
  know".

With `--llm`, the golden cases are asked through SmolLM2-135M-Instruct served by xllamacpp on
127.0.0.1 (the integration tests' server, 2 threads): the share of answers whose raw reply had at
least one valid `[n]` marker before repair, the repair actions, and after repair the share of
answerable cases whose answer cites at least one passage (must be 100%).

Everything is ingested incrementally into bench-out/data (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, dataset  # noqa: E402

DATA_DIR = ROOT / "bench-out" / "data"
GOLDEN = ROOT / "examples" / "eval" / "golden.yaml"
NOTE_PREFIX = "Note: ["


def answer_sentences(text: str) -> list[str]:
    """The claim sentences of an answer (content words; the suspicious-source note left out)."""
    from ragloom.nodes.text import strip_markers, tokenize
    from ragloom.sentences import split_sentences

    out = []
    for sentence in split_sentences(text):
        if sentence.text.startswith(NOTE_PREFIX):
            continue
        claim = strip_markers(sentence.text)
        if tokenize(claim):
            out.append(claim)
    return out


def case_figures(case: Any, text: str) -> dict[str, Any]:
    """First-sentence and answer hits, sentence count and padded sentences of one answer."""
    from ragloom.evaluation.metrics import is_refusal, substring_hits
    from ragloom.nodes.text import tokenize

    sentences = answer_sentences(text)
    refused = is_refusal(text)
    first = sentences[0] if sentences and not refused else ""
    found, total = substring_hits(first, case.expected)
    whole, _ = substring_hits("" if refused else text, case.expected)
    vocabulary = set(tokenize(" ".join([case.question, case.reference or "", *case.expected])))
    padded = [s for s in sentences if not set(tokenize(s)) & vocabulary] if not refused else []
    return {"id": case.id, "first_all": float(total > 0 and found == total),
            "first_any": float(found > 0), "answer_all": float(total > 0 and whole == total),
            "sentences": 0 if refused else len(sentences), "padded": len(padded),
            "refused": refused, "answer": text, "padded_sentences": padded}


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over the answered cases of one group."""
    sentences = sum(r["sentences"] for r in rows)
    judged = [r["faithfulness"] for r in rows if r.get("faithfulness") is not None]
    validity = [r["citation_validity"] for r in rows if r.get("citation_validity") is not None]
    return {
        "cases": len(rows),
        "first_sentence_hit": _mean([r["first_all"] for r in rows]),
        "first_sentence_hit_any": _mean([r["first_any"] for r in rows]),
        "answer_hit": _mean([r["answer_all"] for r in rows]),
        "sentences_per_answer": _mean([r["sentences"] for r in rows if not r["refused"]]),
        "padding_rate": sum(r["padded"] for r in rows) / sentences if sentences else 0.0,
        "faithfulness": _mean(judged),
        "citation_validity": _mean(validity),
        "abstained": sum(r["refused"] for r in rows),
    }


def dataset_path(name: str) -> tuple[str, Path]:
    """The label and the file or directory of a `--datasets` entry: golden, a shared BEIR dataset
    by name, or a path (labelled by its file or folder name)."""
    if name == "golden":
        return name, GOLDEN
    path = Path(name)
    if path.suffix.lower() in (".yaml", ".yml") or path.exists():
        if not path.exists():
            raise SystemExit(f"dataset not found: {path.resolve()}")
        return path.stem, path.resolve()
    return name, dataset(name)


def offline_run(name: str, path: Path, profile: str) -> dict[str, Any]:
    """Run `ragloom eval`'s harness (heuristic judge) and score every answer."""
    from ragloom.evaluation.datasets import CORRECTIVE, load_dataset
    from ragloom.evaluation.harness import run_eval

    data = load_dataset(path)
    started = time.perf_counter()
    report = run_eval(data, [profile], data_dir=DATA_DIR, judge="heuristic")
    result = report.profile(profile)
    by_id = {c.id: c for c in data.cases}
    groups: dict[str, list[dict[str, Any]]] = {"answerable": [], "corrective": []}
    unanswerable: list[bool] = []
    for case_result in result.cases:
        case = by_id[case_result.id]
        text = case_result.answer or ""
        if not case.answerable:
            unanswerable.append(bool(case_result.refused))
            continue
        if not case.expected:
            continue
        row = case_figures(case, text)
        row["faithfulness"] = case_result.judged.get("faithfulness")
        row["citation_validity"] = case_result.judged.get("citation_validity")
        groups["corrective" if CORRECTIVE in case.tags else "answerable"].append(row)
    out = {"dataset": name, "profile": profile, "judge": report.judge,
           "seconds": time.perf_counter() - started,
           "groups": {g: summarize(rows) for g, rows in groups.items() if rows},
           "unanswerable_abstained": (sum(unanswerable), len(unanswerable)),
           "cases": groups}
    return out


def print_offline(result: dict[str, Any]) -> None:
    """The offline table of one dataset."""
    print(f"\n{result['dataset']} ({result['profile']}, offline extractive; judge: "
          f"{result['judge']}; {result['seconds']:.0f} s)")
    print(f"{'cases':<12}{'n':>4}{'first hit':>11}{'(any)':>7}{'answer hit':>12}{'sent/ans':>10}"
          f"{'padding':>9}{'faithful':>10}{'cit.valid':>10}{'IDK':>5}")
    for group, s in result["groups"].items():
        print(f"{group:<12}{s['cases']:>4}{s['first_sentence_hit']:>11.3f}"
              f"{s['first_sentence_hit_any']:>7.2f}{s['answer_hit']:>12.3f}"
              f"{s['sentences_per_answer']:>10.2f}{s['padding_rate']:>9.3f}"
              f"{s['faithfulness']:>10.3f}{s['citation_validity']:>10.3f}{s['abstained']:>5}")
    said, total = result["unanswerable_abstained"]
    if total:
        print(f"unanswerable cases answered \"I don't know\": {said}/{total}")
    for group, rows in result["cases"].items():
        for row in rows:
            if not row["first_all"] or row["padded"]:
                print(f"  [{group}] {row['id']}: first {row['first_all']:.0f} "
                      f"answer {row['answer_all']:.0f} padded {row['padded']}: {row['answer'][:220]}")


def llm_run(profile: str, limit: int | None, max_tokens: int) -> dict[str, Any]:
    """Ask the golden cases through SmolLM2 on xllamacpp; markers before and after repair."""
    from ragloom.evaluation.datasets import load_dataset
    from ragloom.runner import ask, ingest
    from ragloom.settings import load_settings
    from tests.integration.servers import smollm2_server

    data = load_dataset(GOLDEN).limited(limit)
    rows = []
    with smollm2_server(n_ctx=4096, threads=2) as base_url:
        chat = {"provider": "openai", "base_url": base_url, "model": "local",
                "max_tokens": max_tokens, "timeout_s": 120.0}
        settings = load_settings(profile, data_dir=DATA_DIR, collection=data.collection, chat=chat)
        ingest(data.corpus, settings=settings)
        for case in data.cases:
            start = time.perf_counter()
            answer = ask(case.question, settings=settings)
            seconds = time.perf_counter() - start
            detail = next((s.detail for s in answer.trace if s.stage == "generate"), {})
            rows.append({"id": case.id, "answerable": case.answerable,
                         "raw_cited": bool(detail.get("raw_markers")),
                         "repair": detail.get("repair", "off" if detail.get("abstained") else "none"),
                         "abstained": bool(detail.get("abstained")),
                         "cited_after": bool(answer.citations), "seconds": seconds,
                         "answer": answer.text})
    answerable = [r for r in rows if r["answerable"]]
    return {
        "cases": len(rows), "answerable": len(answerable),
        "raw_cited_share": _mean([float(r["raw_cited"]) for r in rows]),
        "raw_cited_share_answerable": _mean([float(r["raw_cited"]) for r in answerable]),
        "cited_after_share_answerable": _mean([float(r["cited_after"]) for r in answerable]),
        "repair": dict(Counter(r["repair"] for r in rows)),
        "abstained_answerable": sum(r["abstained"] for r in answerable),
        "p50_s": statistics.median(r["seconds"] for r in rows),
        "rows": rows,
    }


def print_llm(result: dict[str, Any]) -> None:
    """The LLM marker table."""
    print(f"\nSmolLM2-135M on xllamacpp, golden set ({result['cases']} cases, "
          f"{result['answerable']} answerable), p50 {result['p50_s']:.1f} s per answer")
    print(f"  raw reply with >= 1 valid marker: {result['raw_cited_share']:.3f} of all cases, "
          f"{result['raw_cited_share_answerable']:.3f} of answerable")
    print(f"  after repair, answerable cases citing >= 1 passage: "
          f"{result['cited_after_share_answerable']:.3f}")
    print(f"  repair actions: {result['repair']}; abstentions on answerable cases: "
          f"{result['abstained_answerable']}")
    for row in result["rows"]:
        print(f"  {row['id']}: raw {'cited' if row['raw_cited'] else 'uncited'} → {row['repair']}: "
              f"{row['answer'][:160]!r}")


def main() -> None:
    """Parse arguments, run the datasets, print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", default="golden,hotpotqa")
    parser.add_argument("--profile", default="balanced")
    parser.add_argument("--llm", action="store_true", help="also measure SmolLM2's markers")
    parser.add_argument("--llm-only", action="store_true", help="only the SmolLM2 part")
    parser.add_argument("--llm-limit", type=int, default=None)
    parser.add_argument("--max-tokens", type=int, default=96)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    load_start = os.getloadavg()
    results: dict[str, Any] = {"offline": [], "llm": None}
    if not args.llm_only:
        for name in [d.strip() for d in args.datasets.split(",") if d.strip()]:
            label, path = dataset_path(name)
            results["offline"].append(offline_run(label, path, args.profile))
    if args.llm or args.llm_only:
        results["llm"] = llm_run(args.profile, args.llm_limit, args.max_tokens)
    load_end = os.getloadavg()
    for result in results["offline"]:
        print_offline(result)
    if results["llm"]:
        print_llm(results["llm"])
    print(f"\nload average {load_start[0]:.2f} at start, {load_end[0]:.2f} at end")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2, default=str))


if __name__ == "__main__":
    main()
