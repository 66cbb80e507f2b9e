"""Injection screening on the labelled set in tests/data/injection: detection and false positives.

    python benchmarks/injection.py [--split dev|holdout|fresh|all] [--list [--evidence]] [--json OUT]

Every file goes through the real loaders (`read_source`, `parse_source`) and `scan_injection`, as
in the ingest graph's validate node. A source is *quarantined* when any of its documents is
rejected (or its bytes are), *flagged* when any is suspicious, else clean. Prints, per split, the
detection rate (quarantined or flagged) of the injected documents and the quarantined and flagged
rates of the benign ones, overall and per class. `--list` prints every file's verdict, score and
signals (`--evidence`: and the evidence). Never tune on `holdout` or `fresh`: score them once, at the end.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SET = ROOT / "tests" / "data" / "injection"


def screen(path: Path) -> tuple[str, float, list[str], list[str]]:
    """(status, score, signals, evidence) of one source, as the ingest graph would decide."""
    from ragloom.errors import LoadError, RejectedSourceError
    from ragloom.ingestion.loaders import SourceRef, parse_source, read_source
    from ragloom.ingestion.validation import scan_injection
    from ragloom.settings import IngestSettings

    settings = IngestSettings()
    ref = SourceRef(source_id=path.as_posix(), origin=path.as_posix(), kind="file")
    try:
        documents = parse_source(read_source(ref, settings), settings)
    except RejectedSourceError as err:
        return "quarantined", 0.0, list(err.signals), [str(err)]
    except LoadError as err:
        return "failed", 0.0, [], [str(err)]
    verdicts = [scan_injection(doc) for doc in documents]
    worst = max(verdicts, key=lambda v: (["clean", "suspicious", "rejected"].index(v.status), v.score))
    status = {"rejected": "quarantined", "suspicious": "flagged", "clean": "clean"}[worst.status]
    return status, worst.score, worst.signals, worst.evidence


def rates(rows: list[dict[str, str]]) -> dict[str, float | int]:
    """Counts and shares of quarantined, flagged and detected sources."""
    n = len(rows)
    quarantined = sum(r["status"] == "quarantined" for r in rows)
    flagged = sum(r["status"] == "flagged" for r in rows)
    return {
        "n": n,
        "quarantined": round(quarantined / n, 3) if n else 0.0,
        "flagged": round(flagged / n, 3) if n else 0.0,
        "detected": round((quarantined + flagged) / n, 3) if n else 0.0,
    }


def report(rows: list[dict[str, str]], split: str) -> dict[str, object]:
    """Overall and per-class figures of one split."""
    injected = [r for r in rows if r["label"] == "injected"]
    benign = [r for r in rows if r["label"] == "benign"]
    classes: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        classes[(row["label"], row["class"])].append(row)
    out = {
        "split": split,
        "injected": rates(injected),
        "benign": rates(benign),
        "per_class": {f"{label}/{cls}": rates(group) for (label, cls), group in sorted(classes.items())},
    }
    inj, ben = out["injected"], out["benign"]
    print(f"\n== {split}: {inj['n']} injected, {ben['n']} benign")
    print(f"injected: detected {inj['detected']:.3f} (quarantined {inj['quarantined']:.3f}, "
          f"flagged {inj['flagged']:.3f})")
    print(f"benign:   quarantined {ben['quarantined']:.3f}, flagged {ben['flagged']:.3f}")
    print(f"{'class':40s} {'n':>3s} {'quar':>6s} {'flag':>6s} {'det':>6s}")
    for name, figures in out["per_class"].items():  # type: ignore[union-attr]
        print(f"{name:40s} {figures['n']:3d} {figures['quarantined']:6.2f} {figures['flagged']:6.2f} "
              f"{figures['detected']:6.2f}")
    return out


def main() -> None:
    """Screen the labelled set and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["dev", "holdout", "fresh", "all"], default="dev")
    parser.add_argument("--list", action="store_true", help="print every file's verdict")
    parser.add_argument("--evidence", action="store_true", help="with --list: the evidence too")
    parser.add_argument("--json", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    with (SET / "labels.csv").open(encoding="utf-8") as handle:
        labels = list(csv.DictReader(handle))
    splits = ["dev", "holdout", "fresh"] if args.split == "all" else [args.split]
    results: list[dict[str, object]] = []
    start = time.perf_counter()
    for split in splits:
        rows = []
        for label in (r for r in labels if r["split"] == split):
            status, score, signals, evidence = screen(SET / label["file"])
            rows.append({**label, "status": status, "score": str(score)})
            if args.list:
                print(f"{label['label']:9s} {status:12s} {score:5.2f} {label['file']:55s} "
                      f"{','.join(signals)}")
                if args.evidence:
                    print("".join(f"    {line}\n" for line in evidence), end="")
        results.append(report(rows, split))
    elapsed = time.perf_counter() - start
    print(f"\n{sum(1 for r in labels if r['split'] in splits)} files in {elapsed:.1f} s")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
